#!/usr/bin/env bash
# Configures and builds the native CLI and the C++ tests into build/native.
# The build log goes to build/native/build.log; on failure its end is shown.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release >/dev/null
if ! cmake --build build/native -j"$jobs" >build/native/build.log 2>&1; then
  grep -E "error|Error" -A3 build/native/build.log | head -60
  echo "build failed: see build/native/build.log" >&2
  exit 1
fi
echo "built build/native/wasm-llm"
