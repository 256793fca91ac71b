#!/usr/bin/env bash
# Where the wasm engine spends its time: the wasm CLI built with function
# names (the presets profile and profile-relaxed of CMakePresets.json, into
# build/profile and build/profile-relaxed), run under Node's
# sampling profiler on one thread, then the functions with the most self time
# and their share of it (bench/profile-summary.mjs):
#   bash bench/profile.sh [relaxed] -- CLI-ARGS...
# e.g. bash bench/profile.sh -- bench -m build/bench-models/tinyllama-1.1b-f16.gguf -p 1 -n 16
# (decode) or -p 64 -n 1 (the prompt). `relaxed` runs the relaxed-SIMD build
# in Node 24 (build/node24, fetched by tools/setup.sh), the kernels browsers
# get. The engine runs on one thread (--threads 1 is added), Node's main
# one: a pool of one thread runs inline. Loading the model shows up as read
# and read_fully: give it enough tokens to make that small.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=profile
suffix=''
node=node
if [ "${1:-}" = relaxed ]; then
  preset=profile-relaxed
  suffix=-relaxed
  node=build/node24/bin/node
  shift
fi
cli=wasm-llm-cli$suffix
[ "${1:-}" = -- ] && shift
[ $# -gt 0 ] || { echo "usage: bash bench/profile.sh [relaxed] -- CLI-ARGS..." >&2; exit 2; }

# The build links with --profiling-funcs, which keeps the functions' names in
# the module and changes nothing else about the code.
tools/build-preset.sh "$preset"
dir=build/$preset

profiles=$(mktemp -d)
trap 'rm -rf "$profiles"' EXIT
"$node" --cpu-prof --cpu-prof-dir="$profiles" --cpu-prof-interval 200 -e '
  const [, cli, ...args] = process.argv;
  require(cli + ".js")({ wasmBinary: require("fs").readFileSync(cli + ".wasm"), arguments: args,
                         thisProgram: "wasm-llm", nThreads: 1 });
' -- "$PWD/$dir/$cli" "$@" --threads 1
node bench/profile-summary.mjs "$profiles"/*.cpuprofile
