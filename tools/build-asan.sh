#!/usr/bin/env bash
# Builds the sanitized build into build/asan (the `asan` preset of
# CMakePresets.json): clang 19 with AddressSanitizer and UBSan (every report
# fatal), the C++ tests (run them with `ctest --preset asan`), the CLI, and
# the libFuzzer targets of tests/fuzz (tools/fuzz.sh runs them). One build
# serves both because the libraries carry the fuzzers' coverage
# instrumentation either way. The build log goes to build/asan/build.log; on
# failure its errors are shown.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang++-19 >/dev/null; then
  echo "build-asan: clang++-19 not found (apt-get install clang-19 libclang-rt-19-dev, or run tools/setup.sh)" >&2
  exit 1
fi
tools/build-preset.sh asan
echo "built build/asan (sanitized tests and fuzzers)"
