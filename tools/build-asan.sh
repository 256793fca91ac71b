#!/usr/bin/env bash
# Configures and builds the sanitized build into build/asan: clang 19 with
# AddressSanitizer and UBSan (every report fatal), the C++ tests (run them
# with `ctest --test-dir build/asan`), the CLI, and the libFuzzer targets of
# tests/fuzz (tools/fuzz.sh runs them). One build serves both because the
# libraries carry the fuzzers' coverage instrumentation either way.
# The build log goes to build/asan/build.log; on failure its end is shown.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang++-19 >/dev/null; then
  echo "build-asan: clang++-19 not found (apt-get install clang-19 libclang-rt-19-dev, or run tools/setup.sh)" >&2
  exit 1
fi
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++-19 -DWLLM_FUZZ=ON >/dev/null
if ! cmake --build build/asan -j"$jobs" >build/asan/build.log 2>&1; then
  grep -E "error|Error" -A3 build/asan/build.log | head -60
  echo "build failed: see build/asan/build.log" >&2
  exit 1
fi
echo "built build/asan (sanitized tests and fuzzers)"
