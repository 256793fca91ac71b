#!/usr/bin/env bash
# The kernel tests (tests/cpp/kernels_test.cpp) as wasm: every kernel against
# the scalar reference, bit for bit. The SIMD128 build (preset wasm-st) runs
# under Node; the relaxed-SIMD build (preset wasm-st-relaxed) in headless
# Chromium, as Node 20's V8 has no relaxed SIMD, and under Node 24 where
# tools/setup.sh put it (x64 Linux): another V8. Each build names the kernels
# it must run (WLLM_EXPECT_KERNELS, CMakeLists.txt). Needs em++ and
# clang++-19 (tools/setup.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in em++ clang++-19; do
  if ! command -v "$tool" >/dev/null; then
    echo "test-wasm-kernels: $tool not found (apt-get install emscripten clang-19, or run tools/setup.sh)" >&2
    exit 1
  fi
done
for preset in wasm-st wasm-st-relaxed; do
  tools/build-preset.sh "$preset" kernels_test
  ctest --preset "$preset"
done
