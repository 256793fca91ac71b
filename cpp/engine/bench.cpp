#include "engine/bench.h"

#include <algorithm>
#include <chrono>

namespace wllm {
namespace {

using Clock = std::chrono::steady_clock;
double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// The middle value (the upper one of an even count).
double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

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

Result<BenchTimes> run_bench(Engine& engine, int64_t n_prompt, int64_t n_gen, const BenchRuns& runs) {
  if (!engine.loaded()) return Status::error(ErrorCode::kInvalidArgument, "no model is loaded");
  if (runs.min_runs < 1 || runs.max_runs < runs.min_runs) {
    return Status::error(ErrorCode::kInvalidArgument, "the benchmark needs 1 <= min_runs <= max_runs");
  }
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

  // Warm-up, not timed: one batch of the prompt (up to 64 tokens), then one
  // decode step, as llama.cpp's llama-bench warms up (bench/llama-cpp-run.mjs
  // does the same; bench/chromium-run.mjs also gives each page a warm-up
  // run), so the figures are the steady speed:
  // - in wasm the JIT compiles each function on its first call with a
  //   baseline compiler and optimizes it in the background once it has run
  //   a while, so a first prefill runs well below the following ones, and a
  //   warm-up shorter than a whole batch leaves it short of them;
  // - the first pass over freshly loaded memory can cost more than a whole
  //   short prefill (on VMs that map pages for user code on first access).
  //   Figures: docs/performance.md, "Measurements behind the code".
  const int n_warm = static_cast<int>(std::min<int64_t>(Transformer::kMaxBatch, n_prompt));
  m.forward_batch(prompt.data(), n_warm, 0, false);
  m.forward(prompt[0], n_warm);

  std::vector<double> prefill_seconds, decode_seconds;
  double total = 0;
  while (static_cast<int>(prefill_seconds.size()) < runs.min_runs ||
         (static_cast<int>(prefill_seconds.size()) < runs.max_runs && total < runs.min_seconds)) {
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
    prefill_seconds.push_back(seconds(t0, t1));
    decode_seconds.push_back(seconds(t1, t2));
    total += seconds(t0, t2);
  }
  return BenchTimes{n_prompt, n_gen, median(prefill_seconds), median(decode_seconds),
                    static_cast<int>(prefill_seconds.size())};
}

}  // namespace wllm
