#!/usr/bin/env bash
# Builds the kernel tests (tests/cpp/kernels_test.cpp) with Emscripten and
# SIMD128 and runs them under Node: every wasm SIMD128 kernel against the
# scalar reference, bit for bit. Needs em++ (tools/setup.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v em++ >/dev/null; then
  echo "test-wasm-kernels: em++ not found (apt-get install emscripten, or run tools/setup.sh)" >&2
  exit 1
fi
export NODE_PATH=/usr/share/nodejs  # Debian's emscripten finds its JS dependencies here
out=build/wasm-kernels
mkdir -p "$out"
# The repository is "type": "module"; Emscripten's classic glue is CommonJS.
echo '{"type": "commonjs"}' >"$out/package.json"
gtest=/usr/src/googletest/googletest
sources=(tests/cpp/kernels_test.cpp cpp/core/*.cpp cpp/quant/*.cpp cpp/quant/ref/*.cpp cpp/quant/x86/*.cpp
         cpp/quant/wasm/*.cpp cpp/quant/arm/*.cpp "$gtest/src/gtest-all.cc" "$gtest/src/gtest_main.cc")
em++ -std=c++20 -O2 -msimd128 -ffp-contract=off -fno-fast-math -Icpp -I"$gtest/include" -I"$gtest" \
  -sALLOW_MEMORY_GROWTH=1 -sSINGLE_FILE=1 -o "$out/kernels_test.js" "${sources[@]}" 2>"$out/build.log" || {
  tail -30 "$out/build.log" >&2
  echo "test-wasm-kernels: build failed" >&2
  exit 1
}
node "$out/kernels_test.js"
