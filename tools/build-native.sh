#!/usr/bin/env bash
# Builds the native CLI, the C++ tests and kernel-bench into build/native:
# the `native` preset of CMakePresets.json (run the tests with
# `ctest --preset native`). The build log goes to build/native/build.log; on
# failure its errors are shown.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build-preset.sh native
echo "built build/native/wasm-llm"
