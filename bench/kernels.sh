#!/usr/bin/env bash
# Kernel speed (bench/kernel_bench.cpp) natively, as wasm SIMD128 in Node, as
# wasm relaxed SIMD in headless Chromium and in Node 24 (build/node24, which
# tools/setup.sh fetches on x64 Linux), one after the other:
#   bash bench/kernels.sh [native] [node] [chromium] [node24] [-- kernel-bench options]
# (the first three by default), e.g. bash bench/kernels.sh node chromium -- --types q4_0,q4_K
set -euo pipefail
cd "$(dirname "$0")/.."
targets=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  targets+=("$1")
  shift
done
[ "${1:-}" = -- ] && shift
[ ${#targets[@]} -gt 0 ] || targets=(native node chromium)
out=build/kernel-bench
for target in "${targets[@]}"; do
  echo "== $target"
  case "$target" in
    native)
      bash tools/build-native.sh >/dev/null
      build/native/kernel-bench "$@" ;;
    node)
      tools/build-wasm-program.sh simd128 "$out/kernel-bench-simd128.js" bench/kernel_bench.cpp
      node "$out/kernel-bench-simd128.js" "$@" ;;
    chromium | node24)
      tools/build-wasm-program.sh relaxed "$out/kernel-bench-relaxed.js" bench/kernel_bench.cpp
      if [ "$target" = chromium ]; then
        node tools/run-wasm-in-chromium.mjs "$out/kernel-bench-relaxed.js" "$@"
      else
        build/node24/bin/node "$out/kernel-bench-relaxed.js" "$@"
      fi ;;
    *) echo "kernels.sh: unknown target $target (native, node, chromium or node24)" >&2; exit 2 ;;
  esac
done
