#!/usr/bin/env bash
# The compiler launcher of the relaxed-SIMD kernels (cpp/quant/wasm/relaxed_*.cpp,
# see CMakeLists.txt): Emscripten 3.1.6's clang 14 has no relaxed dot
# instructions, so these files go through clang 19 with the flags em++ would
# give its own clang (emcc --cflags: target, sysroot, defines) plus
# -mrelaxed-simd. The objects link with the rest as usual.
#   relaxed-simd-cxx.sh CLANG19 EM++ ARGS...   (CMake appends EM++ ARGS)
set -euo pipefail
clang=$1
emcc="$(dirname "$2")/emcc"
shift 2
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}  # Debian's emscripten finds acorn here
pthread=()
for arg in "$@"; do
  if [ "$arg" = -pthread ]; then pthread=(-pthread); fi
done
read -ra cflags <<<"$("$emcc" --cflags "${pthread[@]}")"
exec "$clang" "${cflags[@]}" -mrelaxed-simd "$@"
