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

// How often the measured part runs: at least min_runs times, then again while
// all runs so far took under min_seconds, up to max_runs times. A short
// measurement (a 64-token prefill of a 15M model) varies a lot from run to
// run; llama.cpp's llama-bench also repeats (5 runs).
struct BenchRuns {
  int min_runs = 1;
  int max_runs = 5;
  double min_seconds = 1.0;
};

struct BenchTimes {
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
  double prefill_seconds = 0;  // evaluating the prompt (making it is not timed): the median run
  double decode_seconds = 0;   // n_gen greedy steps (pick the argmax, evaluate it): the median run
  int runs = 0;                // measured runs
};

// n pseudo-random token ids below n_vocab (a fixed LCG sequence).
std::vector<int32_t> bench_prompt(int64_t n, int n_vocab);

// Times a prefill of n_prompt tokens from position 0 and n_gen decode steps
// on the loaded model, after an untimed warm-up. n_prompt + n_gen must fit
// the context.
Result<BenchTimes> run_bench(Engine& engine, int64_t n_prompt, int64_t n_gen, const BenchRuns& runs = {});

}  // namespace wllm
