#!/usr/bin/env bash
# Builds the kernel tests (tests/cpp/kernels_test.cpp) with Emscripten and
# runs them: every wasm SIMD128 kernel against the scalar reference, bit for
# bit, under Node; then the relaxed-SIMD build of the same tests (the relaxed
# kernels compiled by clang 19, cmake/relaxed-simd-cxx.sh) in headless
# Chromium, as Node 20's V8 has no relaxed SIMD. Needs em++ and clang++-19
# (tools/setup.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in em++ clang++-19; do
  if ! command -v "$tool" >/dev/null; then
    echo "test-wasm-kernels: $tool not found (apt-get install emscripten clang-19, or run tools/setup.sh)" >&2
    exit 1
  fi
done
export NODE_PATH=/usr/share/nodejs  # Debian's emscripten finds its JS dependencies here
gtest=/usr/src/googletest/googletest
sources=(tests/cpp/kernels_test.cpp cpp/core/*.cpp cpp/quant/*.cpp cpp/quant/ref/*.cpp cpp/quant/x86/*.cpp
         cpp/quant/wasm/*.cpp cpp/quant/arm/*.cpp "$gtest/src/gtest-all.cc" "$gtest/src/gtest_main.cc")
flags=(-std=c++20 -O2 -msimd128 -ffp-contract=off -fno-fast-math -Icpp -I"$gtest/include" -I"$gtest")

# SIMD128, under Node.
out=build/wasm-kernels
mkdir -p "$out"
# The repository is "type": "module"; Emscripten's classic glue is CommonJS.
echo '{"type": "commonjs"}' >"$out/package.json"
em++ "${flags[@]}" -DWLLM_EXPECT_KERNELS=simd128 -sALLOW_MEMORY_GROWTH=1 -sSINGLE_FILE=1 -o "$out/kernels_test.js" \
  "${sources[@]}" \
  2>"$out/build.log" || {
  tail -30 "$out/build.log" >&2
  echo "test-wasm-kernels: build failed" >&2
  exit 1
}
node "$out/kernels_test.js"

# Relaxed SIMD, in Chromium. Compiled file by file (the relaxed kernels by
# clang 19), then linked at -O1 with BigInt so that binaryen leaves the
# relaxed instructions alone (CMakeLists.txt says why).
out=build/wasm-kernels-relaxed
mkdir -p "$out/obj"
compile() {  # compile SOURCE: one object into $out/obj
  local object
  object="$out/obj/$(echo "$1" | tr / _).o"
  case "$1" in
    cpp/quant/wasm/relaxed_*) cmake/relaxed-simd-cxx.sh "$(command -v clang++-19)" "$(command -v em++)" \
                                "${flags[@]}" -c "$1" -o "$object" ;;
    *) em++ "${flags[@]}" -DWLLM_EXPECT_KERNELS=relaxed -c "$1" -o "$object" ;;
  esac
}
export -f compile
export out
export flags_list="${flags[*]}"
rm -f "$out"/obj/*.o
if ! printf '%s\n' "${sources[@]}" | xargs -P "$(nproc)" -I{} bash -c 'flags=($flags_list); compile {}' \
    2>"$out/build.log" ||
   ! em++ -O1 -sWASM_BIGINT -msimd128 -sALLOW_MEMORY_GROWTH=1 -sSINGLE_FILE=1 -sENVIRONMENT=web -sEXIT_RUNTIME=1 \
    -o "$out/kernels_test.js" "$out"/obj/*.o 2>>"$out/build.log"; then
  tail -30 "$out/build.log" >&2
  echo "test-wasm-kernels: relaxed build failed" >&2
  exit 1
fi
node tools/run-wasm-in-chromium.mjs "$out/kernels_test.js"
