#!/usr/bin/env bash
# Cross-builds wasm-llm for aarch64 and runs it under qemu-aarch64: the ARM
# leg of "same bits on every ISA" (design-notes §2).
#  1. kernels_test (every NEON kernel against the scalar reference, bit for
#     bit; the active ISA must be "neon"), quant_test and math_test's golden
#     bits (the scalar reference and core/math give the same results on ARM),
#     linked statically against the aarch64 engine libraries and a GoogleTest
#     built here from /usr/src/googletest (no arm64 libgtest package needed);
#  2. kernels_test again built for the dot-product extension (WLLM_ARM_DOTPROD,
#     SDOT), under `qemu-aarch64 -cpu max`;
#  3. the aarch64 CLI against the x86 one (build/native/wasm-llm): generated
#     text, logits and quantized files must be equal byte for byte, on the f32
#     model and on quantized models whose weights use every NEON kernel; so
#     must saved states (--prompt-cache), and a state saved on x86 continues
#     on aarch64 with the x86 text;
#  4. no fused multiply-add instruction in any aarch64 engine object.
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
gtest=/usr/src/googletest/googletest
tests=build/arm-tests
mkdir -p "$tests"
# The flags CMakeLists.txt gives every build, plus a static link for qemu.
cxx=(aarch64-linux-gnu-g++ -O2 -std=c++20 -ffp-contract=off -fno-fast-math -Wall -Wextra -static)

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

# ---- builds ---------------------------------------------------------------------

# cross_build DIR TARGETS [CMAKE OPTIONS]: the engine for aarch64 via
# cmake/aarch64-linux-gnu.cmake (incremental).
cross_build() {
  local dir=$1 targets=$2
  shift 2
  mkdir -p "$dir"
  logged "$dir/configure.log" cmake -S . -B "$dir" -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
    -DCMAKE_BUILD_TYPE=Release -DWLLM_BUILD_TESTS=OFF "$@"
  # shellcheck disable=SC2086  # targets is a word list
  logged "$dir/build.log" cmake --build "$dir" -j2 --target $targets
}

# step TEXT: a progress line with the seconds elapsed so far.
step() { echo "test-arm-kernels: $* [$((SECONDS - start)) s]"; }

step "building for aarch64 (build/arm, build/arm-dotprod)"
cross_build build/arm "wasm-llm"
cross_build build/arm-dotprod "wllm_quant wllm_core" -DWLLM_ARM_DOTPROD=ON
bash tools/build-native.sh >/dev/null  # the x86 CLI the aarch64 one is compared with

# GoogleTest for aarch64, built once.
for unit in gtest-all gtest_main; do
  [ -f "$tests/$unit.o" ] || logged "$tests/$unit.log" \
    "${cxx[@]}" -I"$gtest/include" -I"$gtest" -c "$gtest/src/$unit.cc" -o "$tests/$unit.o"
done

# build_test NAME LIBDIR OUT [FLAGS]: tests/cpp/NAME.cpp linked against the
# engine libraries in LIBDIR, rebuilt when the source or a library is newer.
build_test() {
  local name=$1 libs=$2 out=$3
  shift 3
  local inputs=("tests/cpp/$name.cpp" "$libs/libwllm_quant.a" "$libs/libwllm_core.a" "$tests/gtest-all.o")
  local stale=0 input
  [ -f "$out" ] || stale=1
  for input in "${inputs[@]}"; do
    if [ "$input" -nt "$out" ]; then stale=1; fi
  done
  [ "$stale" = 1 ] || return 0
  logged "$out.log" "${cxx[@]}" "$@" -Icpp -Itests/cpp -I"$gtest/include" "tests/cpp/$name.cpp" \
    "$libs/libwllm_quant.a" "$libs/libwllm_core.a" "$tests/gtest-all.o" "$tests/gtest_main.o" -o "$out"
}

step "building the tests (build/arm-tests)"
# Two at a time (the machine has two cores); a failed build stops the script.
build_test quant_test build/arm "$tests/quant_test" &
first=$!
build_test kernels_test build/arm "$tests/kernels_test"
build_test math_test build/arm "$tests/math_test"
wait "$first"
build_test kernels_test build/arm-dotprod "$tests/kernels_test_dotprod" -march=armv8.2-a+dotprod

# ---- tests under qemu --------------------------------------------------------------

failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# run_kernels_test LABEL BINARY [QEMU OPTIONS]: the test must pass and report neon.
run_kernels_test() {
  local label=$1 binary=$2
  shift 2
  local log="$binary.out"
  if ! qemu-aarch64 "$@" "$binary" >"$log" 2>&1; then
    cat "$log"
    fail "$label"
    return
  fi
  local isa
  isa=$(sed -n 's/^active kernels: //p' "$log")
  echo "$label: passed, active kernels: $isa"
  [[ "$isa" == neon* ]] || fail "$label: active kernels are '$isa', not neon"
}

# run_gtest LABEL BINARY [GTEST OPTIONS]
run_gtest() {
  local label=$1 binary=$2
  shift 2
  if qemu-aarch64 "$binary" --gtest_brief=1 "$@" >"$binary.out" 2>&1; then
    echo "$label: $(grep -E '^\[  PASSED  \]' "$binary.out")"
  else
    cat "$binary.out"
    fail "$label"
  fi
}

step "C++ tests under qemu-aarch64"
run_kernels_test "kernels_test (NEON)" "$tests/kernels_test"
run_kernels_test "kernels_test (NEON + dotprod, -cpu max)" "$tests/kernels_test_dotprod" -cpu max
run_gtest "quant_test" "$tests/quant_test"
# math_test's accuracy sweeps compare against long double, which is software
# quad precision on aarch64 (~5 min under qemu); they test code that has no
# ISA-specific path. The golden checksums (the same bits as x86 and wasm),
# special values and determinism are what ARM must show.
run_gtest "math_test (golden bits, special values)" "$tests/math_test" \
  --gtest_filter='Golden.*:*.SpecialValues:ExpF32.SymmetryAndDeterminism'

# ---- the whole engine: aarch64 CLI == x86 CLI, byte for byte ---------------------

# cli x86|arm ARGS...: runs the native or the aarch64 CLI.
cli() {
  local which=$1
  shift
  if [ "$which" = x86 ]; then build/native/wasm-llm "$@"; else qemu-aarch64 build/arm/wasm-llm "$@"; fi
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

fused=$(find build/arm/CMakeFiles build/arm-dotprod/CMakeFiles -name '*.o' -print0 | xargs -0 aarch64-linux-gnu-objdump -d |
  grep -cE $'\t(fmla|fmls|fmadd|fmsub|fnmadd|fnmsub|fnmla|fnmls)\t' || true)
if [ "$fused" = 0 ]; then
  echo "no fused multiply-add in the aarch64 engine objects"
else
  fail "$fused fused multiply-add instructions in the build/arm* objects"
fi

step "done"
if [ "$failures" -gt 0 ]; then
  echo "test-arm-kernels: $failures check(s) failed" >&2
  exit 1
fi
echo "test-arm-kernels: all checks passed"
