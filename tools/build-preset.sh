#!/usr/bin/env bash
# Configures and builds one preset of CMakePresets.json into build/PRESET,
# quietly: `cmake --preset PRESET && cmake --build --preset PRESET`, the
# output in build/PRESET/configure.log and build.log, and on failure the
# errors shown. The tools/ and bench/ scripts build through it.
#   tools/build-preset.sh PRESET [TARGET...]     (default: the build preset's targets)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: tools/build-preset.sh PRESET [TARGET...]" >&2; exit 2; }
preset=$1
shift
dir=build/$preset
mkdir -p "$dir"
if ! cmake --preset "$preset" >"$dir/configure.log" 2>&1; then
  tail -30 "$dir/configure.log" >&2
  echo "$preset: configuring failed: see $dir/configure.log" >&2
  exit 1
fi
targets=()
[ $# -eq 0 ] || targets=(--target "$@")
if ! cmake --build --preset "$preset" -j"$(nproc 2>/dev/null || echo 2)" "${targets[@]}" >"$dir/build.log" 2>&1; then
  grep -E "error|Error" -A3 "$dir/build.log" | head -60 >&2
  echo "$preset: build failed: see $dir/build.log" >&2
  exit 1
fi
