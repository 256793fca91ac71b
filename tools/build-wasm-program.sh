#!/usr/bin/env bash
# Builds a test or benchmark program over the kernel sources as one
# self-contained .js file (the wasm inside):
#   tools/build-wasm-program.sh simd128|relaxed OUT.js SOURCE... [-- FLAG...]
# SOURCEs are added to cpp/core and cpp/quant; FLAGs go to every compile.
#   simd128  for Node (classic glue)
#   relaxed  for browsers (tools/run-wasm-in-chromium.mjs) and Node 22 and
#            later: the relaxed kernels compiled by clang 19
#            (cmake/relaxed-simd-cxx.sh), linked at -O1 with BigInt so
#            binaryen leaves the relaxed instructions alone (CMakeLists.txt
#            says why)
# Objects are compiled in parallel into OUT's folder/obj-<flavour>; the log
# goes to OUT's folder/build-<flavour>.log and its end is shown on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
flavour=$1
out=$2
shift 2
sources=(cpp/core/*.cpp cpp/quant/*.cpp cpp/quant/ref/*.cpp cpp/quant/x86/*.cpp cpp/quant/wasm/*.cpp cpp/quant/arm/*.cpp)
extra_flags=()
while [ $# -gt 0 ]; do
  if [ "$1" = -- ]; then
    shift
    extra_flags=("$@")
    break
  fi
  sources+=("$1")
  shift
done
case "$flavour" in
  simd128) link=(-O2) ;;
  relaxed) link=(-O1 -sWASM_BIGINT -sENVIRONMENT=web,node) ;;
  *) echo "build-wasm-program: unknown flavour $flavour (simd128 or relaxed)" >&2; exit 2 ;;
esac
export NODE_PATH=/usr/share/nodejs  # Debian's emscripten finds its JS dependencies here
dir=$(dirname "$out")
obj="$dir/obj-$flavour"
log="$dir/build-$flavour.log"
mkdir -p "$obj"
rm -f "$obj"/*.o
# The repository is "type": "module"; Emscripten's classic glue is CommonJS.
echo '{"type": "commonjs"}' >"$dir/package.json"

compile() {  # compile SOURCE: one object into $obj
  local object="$obj/$(echo "$1" | tr / _).o"
  local flags=(-std=c++20 -O2 -msimd128 -ffp-contract=off -fno-fast-math -Icpp $compile_flags)
  if [ "$flavour" = relaxed ]; then flags+=(-DWLLM_WASM_RELAXED); fi  # as CMakeLists.txt's relaxed variant
  if [ "$flavour" = relaxed ] && [[ "$1" == cpp/quant/wasm/relaxed_* ]]; then
    cmake/relaxed-simd-cxx.sh "$(command -v clang++-19)" "$(command -v em++)" "${flags[@]}" -c "$1" -o "$object"
  else
    em++ "${flags[@]}" -c "$1" -o "$object"
  fi
}
export -f compile
export flavour obj compile_flags="${extra_flags[*]}"
if ! printf '%s\n' "${sources[@]}" | xargs -P "$(nproc)" -I{} bash -c 'compile {}' >"$log" 2>&1 ||
   ! em++ "${link[@]}" -msimd128 -sALLOW_MEMORY_GROWTH=1 -sSINGLE_FILE=1 -sEXIT_RUNTIME=1 -o "$out" "$obj"/*.o \
     >>"$log" 2>&1; then
  grep -E "error" -A3 "$log" | head -40 >&2
  echo "build-wasm-program: $flavour build of $out failed (see $log)" >&2
  exit 1
fi
