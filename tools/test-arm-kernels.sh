#!/usr/bin/env bash
# Cross-builds wasm-llm for aarch64 and runs it under qemu-aarch64: the ARM
# leg of "same bits on every ISA" (design-notes §2).
#  1. the presets aarch64 and aarch64-dotprod (CMakePresets.json), and their
#     ctest under qemu: kernels_test (every NEON kernel against the scalar
#     reference, bit for bit; the active ISA must be "neon"), quant_test and
#     math_test's golden bits (the scalar reference and core/math give the
#     same results on ARM); kernels_test again built for the dot-product
#     extension (SDOT), under `qemu-aarch64 -cpu max`;
#  2. the aarch64 CLI against the x86 one (build/native/wasm-llm, preset
#     native): generated text, logits and quantized files must be equal byte
#     for byte, on the f32 model and on quantized models whose weights use
#     every NEON kernel; so must saved states (--prompt-cache), and a state
#     saved on x86 continues on aarch64 with the x86 text;
#  3. no fused multiply-add instruction in any aarch64 engine object.
# binfmt is not registered on our machines, so qemu is called explicitly.
# Speeds under qemu mean nothing; this checks results only.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
unset WLLM_KERNELS  # this checks the NEON kernels, whatever the caller forces elsewhere

apt_packages=(g++-aarch64-linux-gnu qemu-user googletest cmake)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "test-arm-kernels: installing ${missing[*]} with apt-get"
  sudo_cmd=()
  [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

models=../shared/models

# Runs "$@" with its output in $log; on failure shows the log's end and stops.
logged() {
  local log=$1
  shift
  "$@" >"$log" 2>&1 || {
    tail -30 "$log"
    echo "test-arm-kernels: failed, see $log" >&2
    exit 1
  }
}

# step TEXT: a progress line with the seconds elapsed so far.
step() { echo "test-arm-kernels: $* [$((SECONDS - start)) s]"; }

failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

step "building for aarch64 (build/aarch64, build/aarch64-dotprod)"
tools/build-preset.sh aarch64
tools/build-preset.sh aarch64-dotprod
# The x86 CLI the aarch64 one is compared with (nothing to do when it is up to date).
tools/build-preset.sh native wasm-llm

step "C++ tests under qemu-aarch64"
ctest --preset aarch64 || fail "ctest --preset aarch64"
ctest --preset aarch64-dotprod || fail "ctest --preset aarch64-dotprod (kernels_test, -cpu max)"

# ---- the whole engine: aarch64 CLI == x86 CLI, byte for byte ---------------------

# cli x86|arm ARGS...: runs the native or the aarch64 CLI.
cli() {
  local which=$1
  shift
  if [ "$which" = x86 ]; then build/native/wasm-llm "$@"; else qemu-aarch64 build/aarch64/wasm-llm "$@"; fi
}
parity=build/arm-parity
mkdir -p "$parity"

# same LABEL FILE_A FILE_B: the two files must be identical (and not empty).
same() {
  if [ ! -s "$2" ]; then
    fail "$1: $2 is empty"
  elif cmp -s "$2" "$3"; then
    echo "same: $1"
  else
    fail "$1 differs between x86 and aarch64 ($2, $3)"
  fi
}

step "aarch64 CLI against the x86 CLI"
# Models: the f32 stories260K, copies of it quantized by the x86 CLI, and
# random 256-wide K-quant models (stories260K is too narrow for K-quants):
# together every NEON kernel (f32, f16, bf16, q8_0, q4_0, q5_0, q4_1, q5_1;
# q4_K_M: q4_K, q6_K; q3_K_M: q3_K, q4_K, q5_K, q6_K; q2_K: q2_K, q6_K).
stories=$models/stories260K.gguf
stories_types=(f16 bf16 q4_0 q4_1 q5_1 q4_K_M)  # q4_K_M falls back to q5_0 (+q8_0) at width 64
synth_types=(q4_K_M q3_K_M q2_K)
for type in "${stories_types[@]}"; do
  [ "$parity/stories-$type.gguf" -nt build/native/wasm-llm ] ||
    logged "$parity/quantize.log" cli x86 quantize "$stories" "$parity/stories-$type.gguf" "$type"
done
for type in "${synth_types[@]}"; do
  [ "$parity/synth-$type.gguf" -nt build/native/wasm-llm ] ||
    logged "$parity/synth.log" cli x86 synth --shape 256x2 --type "$type" \
      --vocab "$models/vocab/ggml-vocab-llama-spm.gguf" -o "$parity/synth-$type.gguf"
done

# The quantizers are reference code: the aarch64 CLI writes the same files.
for type in q4_0 q4_K_M; do
  logged "$parity/quantize.log" cli arm quantize "$stories" "$parity/arm-stories-$type.gguf" "$type"
  same "quantize stories260K $type" "$parity/stories-$type.gguf" "$parity/arm-stories-$type.gguf"
done

# compare NAME MODEL N: generated text (greedy and seeded) and the logits of
# every position of a fixed token list.
compare() {
  local name=$1 model=$2 n=$3
  local -a runs=("--temp 0" "--temp 0.8 --seed 42")
  for r in 0 1; do
    for which in x86 arm; do
      # shellcheck disable=SC2086  # the sampling options are a word list
      cli "$which" generate -m "$model" -p "Once upon a time" -n "$n" ${runs[$r]} \
        >"$parity/$name.gen$r.$which" 2>"$parity/$name.gen$r.$which.log" || fail "$which generate $name (${runs[$r]})"
    done
    same "generate $name ${runs[$r]} ($(wc -c <"$parity/$name.gen$r.x86") bytes)" \
      "$parity/$name.gen$r.x86" "$parity/$name.gen$r.arm"
  done
  for which in x86 arm; do
    cli "$which" logits -m "$model" --tokens 1,450,300,20,99,411,3,17 -o "$parity/$name.logits.$which" \
      >/dev/null 2>&1 || fail "$which logits $name"
  done
  same "logits $name" "$parity/$name.logits.x86" "$parity/$name.logits.arm"
}

compare stories260K "$stories" 60
for type in "${stories_types[@]}"; do compare "stories260K-$type" "$parity/stories-$type.gguf" 60; done
for type in "${synth_types[@]}"; do compare "synth-256x2-$type" "$parity/synth-$type.gguf" 20; done
# Every architecture beyond llama (tests/reference/architectures.mjs) in q4_0,
# long enough to wrap the sliding-window layers' ring of slots.
mapfile -t arch_models < <(node --input-type=module -e "
  import { architectureModel, architectures } from './tests/reference/architectures.mjs';
  for (const row of architectures) console.log(row.arch + ' ' + await architectureModel(row, 'q4_0'));")
[ ${#arch_models[@]} -gt 0 ] || fail "no architecture models"
for line in "${arch_models[@]}"; do compare "${line%% *}-q4_0" "${line#* }" 100; done

# saved_state NAME MODEL: after the same prompt (past gemma3's ring and lfm2's
# first convolution checkpoint) both CLIs save the same state, and the aarch64
# CLI continues from the x86 one's with the text x86 gives without it.
saved_state() {
  local name=$1 model=$2 which
  local prompt="Once upon a time, there was a little girl named Lily. She loved to play in the park with her dog. "
  prompt="$prompt$prompt$prompt$prompt"
  for which in x86 arm; do
    rm -f "$parity/$name.state.$which"
    cli "$which" generate -m "$model" -p "$prompt" -n 0 --prompt-cache "$parity/$name.state.$which" \
      >/dev/null 2>"$parity/$name.state.$which.log" || fail "$which --prompt-cache $name"
  done
  same "saved state $name ($(wc -c <"$parity/$name.state.x86") bytes)" "$parity/$name.state.x86" "$parity/$name.state.arm"
  cli x86 generate -m "$model" -p "$prompt Then" -n 30 --temp 0.8 --seed 42 >"$parity/$name.continued.x86" 2>/dev/null ||
    fail "x86 generate $name"
  cli arm generate -m "$model" -p "$prompt Then" -n 30 --temp 0.8 --seed 42 --prompt-cache "$parity/$name.state.x86" \
    >"$parity/$name.continued.arm" 2>"$parity/$name.continued.arm.log" || fail "arm generate $name from the x86 state"
  grep -qE '\([1-9][0-9]* cached\)' "$parity/$name.continued.arm.log" || fail "arm $name: the state was not reused"
  same "continued from the x86 state: $name" "$parity/$name.continued.x86" "$parity/$name.continued.arm"
}
saved_state stories260K "$stories"
for line in "${arch_models[@]}"; do
  case "${line%% *}" in gemma3 | lfm2) saved_state "${line%% *}-q4_0" "${line#* }" ;; esac
done

# ---- no FMA in aarch64 engine code (-ffp-contract=off, no FMA intrinsics) --------

fused=$(find build/aarch64/CMakeFiles/wllm_*.dir build/aarch64-dotprod/CMakeFiles/wllm_*.dir -name '*.o' -print0 |
  xargs -0 aarch64-linux-gnu-objdump -d | grep -cE $'\t(fmla|fmls|fmadd|fmsub|fnmadd|fnmsub|fnmla|fnmls)\t' || true)
if [ "$fused" = 0 ]; then
  echo "no fused multiply-add in the aarch64 engine objects"
else
  fail "$fused fused multiply-add instructions in the build/aarch64* engine objects"
fi

step "done"
if [ "$failures" -gt 0 ]; then
  echo "test-arm-kernels: $failures check(s) failed" >&2
  exit 1
fi
echo "test-arm-kernels: all checks passed"
