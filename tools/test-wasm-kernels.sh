#!/usr/bin/env bash
# Builds the kernel tests (tests/cpp/kernels_test.cpp) with Emscripten and
# runs them: every wasm SIMD128 kernel against the scalar reference, bit for
# bit, under Node; then the relaxed-SIMD build of the same tests in headless
# Chromium, as Node 20's V8 has no relaxed SIMD, and under Node 24 where
# tools/setup.sh put it (x64 Linux): another V8. Each build names the kernels
# it must run (WLLM_EXPECT_KERNELS). Needs em++ and clang++-19
# (tools/setup.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in em++ clang++-19; do
  if ! command -v "$tool" >/dev/null; then
    echo "test-wasm-kernels: $tool not found (apt-get install emscripten clang-19, or run tools/setup.sh)" >&2
    exit 1
  fi
done
gtest=/usr/src/googletest/googletest
test_sources=(tests/cpp/kernels_test.cpp "$gtest/src/gtest-all.cc" "$gtest/src/gtest_main.cc")
out=build/wasm-kernels
for flavour in simd128 relaxed; do
  tools/build-wasm-program.sh "$flavour" "$out/kernels_test-$flavour.js" "${test_sources[@]}" \
    -- -I"$gtest/include" -I"$gtest" -DWLLM_EXPECT_KERNELS="$flavour"
done
node "$out/kernels_test-simd128.js"
node tools/run-wasm-in-chromium.mjs "$out/kernels_test-relaxed.js"
node24=build/node24/bin/node
if [ -x "$node24" ]; then
  "$node24" "$out/kernels_test-relaxed.js"
else
  echo "test-wasm-kernels: no $node24 (tools/setup.sh fetches it on x64 Linux): relaxed SIMD not run in Node"
fi
