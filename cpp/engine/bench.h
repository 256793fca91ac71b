// The speed benchmark's measured part, shared by the CLI (`wasm-llm bench`)
// and the wasm binding (the browser benchmark), so every build times the
// same work: a prefill of a fixed pseudo-random prompt, then greedy decoding
// one token at a time. The prompt is the same sequence bench/llama-cpp-run.mjs
// feeds llama.cpp (speed does not depend on the text).
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "engine/engine.h"

namespace wllm {

struct BenchTimes {
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
  double prefill_seconds = 0;  // evaluating the prompt (making it is not timed)
  double decode_seconds = 0;   // n_gen greedy steps: pick the argmax, evaluate it
};

// n pseudo-random token ids below n_vocab (a fixed LCG sequence).
std::vector<int32_t> bench_prompt(int64_t n, int n_vocab);

// Times a prefill of n_prompt tokens from position 0 and n_gen decode steps
// on the loaded model. n_prompt + n_gen must fit the context.
Result<BenchTimes> run_bench(Engine& engine, int64_t n_prompt, int64_t n_gen);

}  // namespace wllm
