#!/usr/bin/env bash
# Builds the wasm variants with Emscripten and copies them into dist/wasm:
#   wasm-llm-mt.{js,wasm,worker.js}      threaded (pthreads, needs SharedArrayBuffer), Node glue
#   wasm-llm-st.{js,wasm}                single-threaded, Node glue
#   wasm-llm-{mt,st}-web.{js,wasm,...}   the same for browsers (ES module glue)
#   wasm-llm-{mt,st}-relaxed{,-web}.*    the same with relaxed SIMD, for engines that run it
#                                        (browsers, Node 22 and later)
#   wasm-llm-cli.{js,wasm,worker.js}     the command-line tool for Node (threaded)
#   wasm-llm-cli-relaxed.*               the same with relaxed SIMD
#   bash tools/build-wasm.sh [--variants mt,st,mt-relaxed,st-relaxed] [--cli-only]
# --variants: only these (default: all four); --cli-only: only the CLI of the
# threaded variants (default: the one this Node runs, mt or mt-relaxed), what
# `npm start` needs.
# Each variant is a preset of CMakePresets.json (wasm-mt, wasm-st, ...) with
# its own build folder (build/wasm-mt, ...) because -pthread (and the relaxed
# kernels' compiler) must be on the compile of every object; this builds its
# target wasm-package (or the CLI), not the kernel tests. Build logs go to
# build/wasm-*/build.log; on failure the errors are shown.
set -euo pipefail
cd "$(dirname "$0")/.."

all_variants=(mt st mt-relaxed st-relaxed)
variants=()
cli_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --cli-only) cli_only=1; shift ;;
    --variants)
      IFS=, read -ra variants <<<"${2:-}"
      [ ${#variants[@]} -gt 0 ] || { echo "build-wasm: --variants needs a list, e.g. mt,st" >&2; exit 2; }
      shift 2 ;;
    *) echo "build-wasm: unknown argument $1 (--variants LIST, --cli-only)" >&2; exit 2 ;;
  esac
done
if [ ${#variants[@]} -eq 0 ]; then
  if [ "$cli_only" = 1 ]; then
    # The CLI this Node runs (js/node/cli.js): the relaxed one where it runs relaxed SIMD.
    relaxed=$(node --input-type=module -e \
      "import { runsRelaxedSimd } from './worker/relaxed-simd.js'; process.stdout.write(String(runsRelaxedSimd()))")
    if [ "$relaxed" = true ]; then variants=(mt-relaxed); else variants=(mt); fi
  else
    variants=("${all_variants[@]}")
  fi
fi
for variant in "${variants[@]}"; do
  [[ " ${all_variants[*]} " == *" $variant "* ]] ||
    { echo "build-wasm: unknown variant $variant (known: ${all_variants[*]})" >&2; exit 2; }
  if [ "$cli_only" = 1 ] && [ "${variant%-relaxed}" != mt ]; then
    echo "build-wasm: the CLI is built by the threaded variants only, not $variant" >&2
    exit 2
  fi
done

# The relaxed-SIMD variants' kernels need clang 19 (cmake/relaxed-simd-cxx.sh).
tools=(emscripten:em++)
[[ " ${variants[*]} " != *-relaxed* ]] || tools+=(clang-19:clang++-19)
missing=()
for tool in "${tools[@]}"; do command -v "${tool#*:}" >/dev/null || missing+=("${tool%%:*}"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "build-wasm: installing ${missing[*]} with apt-get"
  sudo_cmd=()
  [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

mkdir -p dist/wasm
for variant in "${variants[@]}"; do
  dir=build/wasm-$variant
  relaxed_suffix=${variant#[ms]t}  # '' or -relaxed
  cli=()
  [ "${variant%-relaxed}" != mt ] || cli=("$dir"/wasm-llm-cli$relaxed_suffix.{js,wasm,worker.js})
  if [ "$cli_only" = 1 ]; then
    tools/build-preset.sh "wasm-$variant" "wasm-llm-cli$relaxed_suffix"
    files=("${cli[@]}")
  else
    tools/build-preset.sh "wasm-$variant" wasm-package
    files=("$dir"/wasm-llm-$variant{,-web}.{js,wasm,worker.js} "${cli[@]}")
  fi
  for f in "${files[@]}"; do
    if [ -f "$f" ]; then cp "$f" dist/wasm/; fi  # .worker.js: threaded builds only
  done
done
# The Node glue is classic CommonJS; keep a "type": "module" consumer from
# parsing it as ESM. (Browsers and bundlers load the -web glue as a module
# whatever this says.)
echo '{"type":"commonjs"}' >dist/wasm/package.json
if [ "$cli_only" = 1 ]; then
  echo "built dist/wasm (the CLI of ${variants[*]})"
else
  echo "built dist/wasm (${variants[*]}: Node and -web glue, and the CLI of the threaded ones)"
fi
