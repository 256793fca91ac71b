#!/usr/bin/env bash
# Kernel speed (bench/kernel_bench.cpp) natively, as wasm SIMD128 in Node, as
# wasm relaxed SIMD in headless Chromium and in Node 24 (build/node24, which
# tools/setup.sh fetches on x64 Linux), one after the other:
#   bash bench/kernels.sh [native] [node] [chromium] [node24] [-- kernel-bench options]
# (the first three by default), e.g. bash bench/kernels.sh node chromium -- --types q4_0,q4_K
# The kernel-bench target of the presets native, wasm-st and wasm-st-relaxed
# (CMakePresets.json): the wasm ones single-threaded, as the benchmark is.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  targets+=("$1")
  shift
done
[ "${1:-}" = -- ] && shift
[ ${#targets[@]} -gt 0 ] || targets=(native node chromium)
for target in "${targets[@]}"; do
  echo "== $target"
  case "$target" in
    native)
      tools/build-preset.sh native kernel-bench
      build/native/kernel-bench "$@" ;;
    node)
      tools/build-preset.sh wasm-st kernel-bench
      node build/wasm-st/kernel-bench.js "$@" ;;
    chromium)
      tools/build-preset.sh wasm-st-relaxed kernel-bench
      node tools/run-wasm-in-chromium.mjs build/wasm-st-relaxed/kernel-bench.js "$@" ;;
    node24)
      tools/build-preset.sh wasm-st-relaxed kernel-bench
      build/node24/bin/node build/wasm-st-relaxed/kernel-bench.js "$@" ;;
    *) echo "kernels.sh: unknown target $target (native, node, chromium or node24)" >&2; exit 2 ;;
  esac
done
