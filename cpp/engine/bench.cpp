#include "engine/bench.h"

#include <algorithm>
#include <chrono>

namespace wllm {
namespace {

using Clock = std::chrono::steady_clock;
double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

}  // namespace

std::vector<int32_t> bench_prompt(int64_t n, int n_vocab) {
  uint32_t state = 12345;
  std::vector<int32_t> prompt(static_cast<size_t>(n));
  for (int32_t& t : prompt) {
    state = state * 1664525u + 1013904223u;
    t = static_cast<int32_t>(state % static_cast<uint32_t>(n_vocab));
  }
  return prompt;
}

Result<BenchTimes> run_bench(Engine& engine, int64_t n_prompt, int64_t n_gen) {
  if (!engine.loaded()) return Status::error(ErrorCode::kInvalidArgument, "no model is loaded");
  if (n_prompt < 1 || n_gen < 1) {
    return Status::error(ErrorCode::kInvalidArgument, "the prompt and decode token counts must be at least 1");
  }
  if (n_prompt + n_gen > engine.n_ctx()) {
    return Status::error(ErrorCode::kContextFull, "%lld prompt + %lld decode tokens do not fit the context of %d",
                         static_cast<long long>(n_prompt), static_cast<long long>(n_gen), engine.n_ctx());
  }
  Transformer& m = engine.model();
  const int n_vocab = engine.config().n_vocab;
  const std::vector<int32_t> prompt = bench_prompt(n_prompt, n_vocab);

  // Warm-up, not timed: one token through every weight. The first pass over
  // freshly loaded memory can cost more than a whole short prefill (on VMs
  // that map pages for user code on first access: ~80 ms for a 90 MB model
  // here), for llama.cpp too (bench/llama-cpp-run.mjs warms up the same way).
  m.forward(prompt[0], 0);

  const auto t0 = Clock::now();
  const float* logits = nullptr;
  for (int64_t i = 0; i < n_prompt; i += Transformer::kMaxBatch) {
    const int n = static_cast<int>(std::min<int64_t>(Transformer::kMaxBatch, n_prompt - i));
    logits = m.forward_batch(prompt.data() + i, n, static_cast<int>(i), false);
  }
  const auto t1 = Clock::now();
  for (int64_t i = 0; i < n_gen; ++i) {
    int32_t best = 0;
    for (int v = 1; v < n_vocab; ++v) best = logits[v] > logits[best] ? v : best;
    logits = m.forward(best, static_cast<int>(n_prompt + i));
  }
  const auto t2 = Clock::now();
  return BenchTimes{n_prompt, n_gen, seconds(t0, t1), seconds(t1, t2)};
}

}  // namespace wllm
