#!/usr/bin/env bash
# Builds the wasm variants with Emscripten and copies them into dist/wasm:
#   wasm-llm-mt.{js,wasm,worker.js}      threaded (pthreads, needs SharedArrayBuffer), Node glue
#   wasm-llm-st.{js,wasm}                single-threaded, Node glue
#   wasm-llm-{mt,st}-web.{js,wasm,...}   the same for browsers (ES module glue)
#   wasm-llm-{mt,st}-relaxed{,-web}.*    the same with relaxed SIMD, for engines that run it
#                                        (browsers, Node 22 and later)
#   wasm-llm-cli.{js,wasm,worker.js}     the command-line tool for Node (threaded)
#   wasm-llm-cli-relaxed.*               the same with relaxed SIMD
# Each variant has its own build directory (build/wasm-mt, build/wasm-st, ...)
# because -pthread (and the relaxed kernels' compiler) must be on the compile
# of every object. Build logs go to build/wasm-*/build.log; on failure the
# errors are shown.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian's emscripten needs Debian's acorn; node here may come from elsewhere.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}

if ! command -v em++ >/dev/null || ! command -v clang++-19 >/dev/null; then
  echo "build-wasm: installing emscripten and clang-19 with apt-get"
  sudo_cmd=()
  [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq emscripten clang-19 >/dev/null
fi

jobs=$(nproc 2>/dev/null || echo 2)
mkdir -p dist/wasm
for variant in mt st mt-relaxed st-relaxed; do
  dir=build/wasm-$variant
  threads=$([ "${variant%-relaxed}" = mt ] && echo ON || echo OFF)
  relaxed_suffix=${variant#[ms]t}  # '' or -relaxed
  relaxed=$([ -n "$relaxed_suffix" ] && echo ON || echo OFF)
  mkdir -p "$dir"
  if ! emcmake cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DWLLM_WASM_THREADS="$threads" \
      -DWLLM_WASM_RELAXED="$relaxed" >"$dir/configure.log" 2>&1; then
    tail -30 "$dir/configure.log"
    exit 1
  fi
  if ! cmake --build "$dir" -j"$jobs" >"$dir/build.log" 2>&1; then
    grep -E "error|Error" -A3 "$dir/build.log" | head -60
    echo "build failed: see $dir/build.log" >&2
    exit 1
  fi
  for f in "$dir"/wasm-llm-$variant{,-web}.{js,wasm,worker.js} \
      "$dir"/wasm-llm-cli$relaxed_suffix.{js,wasm,worker.js}; do  # the CLI: mt builds only
    if [ -f "$f" ]; then cp "$f" dist/wasm/; fi
  done
done
# The Node glue is classic CommonJS; keep a "type": "module" consumer from
# parsing it as ESM. (Browsers and bundlers load the -web glue as a module
# whatever this says.)
echo '{"type":"commonjs"}' >dist/wasm/package.json
echo "built dist/wasm (wasm-llm-mt, wasm-llm-st, their relaxed-SIMD builds, -web glue and the CLI)"
