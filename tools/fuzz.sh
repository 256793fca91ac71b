#!/usr/bin/env bash
# Runs the fuzz targets of tests/fuzz for N seconds each and prints, per
# target, the executions and the result. `npm test` runs each briefly;
# `npm run fuzz -- --seconds N` runs longer on demand.
#   bash tools/fuzz.sh [--seconds N] [TARGET...]     (default: 60 s, every target)
# A target is tests/fuzz/<name>_fuzz.cpp (libFuzzer, built sanitized into
# build/asan by tools/build-asan.sh) or tests/fuzz/<name>_fuzz.mjs (Node);
# its seeds come from tests/fuzz/seed-corpus.mjs into
# build/fuzz-corpus/<name>/seeds, and what it finds goes to .../found (kept
# between runs). A crash is saved in build/fuzz-artifacts/<name>/; turn it
# into a regression test in tests/cpp/ (or tests/js/) when fixing it.
# After tokenizer_fuzz, the inputs it found are replayed through llama.cpp,
# which must give the same ids (tests/fuzz/tokenizer-vs-llama.mjs).
# Two targets run at a time (the machine has two cores).
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(loader tokenizer chat_template state grammar)  # a new target: its file, a seed builder, and its name here

seconds=60
selected=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds)
      [[ "${2:-}" =~ ^[0-9]+$ ]] || { echo "fuzz.sh: --seconds needs a whole number" >&2; exit 2; }
      seconds=$2
      shift 2
      ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *)
      [[ " ${targets[*]} " == *" $1 "* ]] || { echo "fuzz.sh: unknown target $1 (known: ${targets[*]})" >&2; exit 2; }
      selected+=("$1")
      shift
      ;;
  esac
done
[ ${#selected[@]} -gt 0 ] || selected=("${targets[@]}")

bash tools/build-asan.sh
for name in "${selected[@]}"; do
  seeds=build/fuzz-corpus/$name/seeds
  if [ ! -d "$seeds" ] || [ tests/fuzz/seed-corpus.mjs -nt "$seeds" ] || [ tests/fuzz/gguf-kv.mjs -nt "$seeds" ]; then
    rm -rf "$seeds" "$seeds.tmp"
    node tests/fuzz/seed-corpus.mjs "$name" "$seeds.tmp" build/asan/wasm-llm
    mv "$seeds.tmp" "$seeds"
  fi
  mkdir -p "build/fuzz-corpus/$name/found" "build/fuzz-artifacts/$name"
done

# run_target NAME: runs it for $seconds, its output in build/fuzz-artifacts/NAME/log.
run_target() {
  local name=$1 dir=build/fuzz-corpus/$1 artifacts=build/fuzz-artifacts/$1
  if [ -f "tests/fuzz/${name}_fuzz.cpp" ]; then
    # -timeout: one input taking longer is a hang; -malloc_limit_mb: no
    # single allocation may be that large (the loader refuses big models
    # before allocating them).
    # state_fuzz reads the models its seeds are states of (seed-corpus.mjs).
    WLLM_STATE_FUZZ_MODELS=$dir/models "build/asan/${name}_fuzz" "$dir/found" "$dir/seeds" \
      -max_total_time="$seconds" -timeout=10 \
      -malloc_limit_mb=1024 -rss_limit_mb=3072 -artifact_prefix="$artifacts/" -print_final_stats=1
  else
    node "tests/fuzz/${name}_fuzz.mjs" --corpus "$dir/seeds" --seconds "$seconds" --artifacts "$artifacts"
  fi || return
  if [ "$name" = tokenizer ]; then
    node tests/fuzz/tokenizer-vs-llama.mjs build/asan/wasm-llm "$dir/found"
  fi
}

failed=()
pids=()
for name in "${selected[@]}"; do
  if [ ${#pids[@]} -ge 2 ]; then
    wait "${pids[0]}" || true
    pids=("${pids[@]:1}")
  fi
  echo "fuzz: $name for ${seconds} s"
  (if run_target "$name" >"build/fuzz-artifacts/$name/log" 2>&1; then echo 0; else echo $?; fi \
    >"build/fuzz-artifacts/$name/status") &
  pids+=($!)
done
wait

printf '%-16s %12s %8s  %s\n' target executions seconds result
for name in "${selected[@]}"; do
  log=build/fuzz-artifacts/$name/log
  status=$(cat "build/fuzz-artifacts/$name/status")
  done_line=$(grep -E '^Done [0-9]+ runs in [0-9]+ second' "$log" | tail -1 || true)
  runs=$(echo "$done_line" | awk '{print $2}')
  secs=$(echo "$done_line" | awk '{print $5}')
  if [ "$status" = 0 ]; then
    result=ok
  else
    result="FAILED (exit $status): see $log"
    failed+=("$name")
  fi
  printf '%-16s %12s %8s  %s\n' "$name" "${runs:-?}" "${secs:-?}" "$result"
done
if [ ${#failed[@]} -gt 0 ]; then
  for name in "${failed[@]}"; do
    echo "---- $name: the end of build/fuzz-artifacts/$name/log"
    tail -40 "build/fuzz-artifacts/$name/log"
  done
  exit 1
fi
