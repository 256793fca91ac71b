// The sampler stages, in llama.cpp's default chain order:
//   penalties → top-k → top-p → min-p → temperature → dist   (or greedy).
// Each matches the llama.cpp stage of the same name (src/llama-sampling.cpp)
// except where noted; ties between equal logits always go to the lower id.
#pragma once

#include <cstdint>
#include <vector>

#include "sampler/chain.h"
#include "sampler/rng.h"

namespace wllm {

// For each token seen c > 0 times in the last n accepted tokens:
//   l = l > 0 ? l / repeat : l · repeat;   l −= c·frequency + presence.
class PenaltiesStage final : public SamplerStage {
 public:
  PenaltiesStage(int n_vocab, int last_n, float repeat, float frequency, float presence);
  const char* name() const override { return "penalties"; }
  void apply(Candidates& cur) override;
  void accept(int32_t token) override;  // ids outside [0, n_vocab) are ignored
  void reset() override;

 private:
  float repeat_, frequency_, presence_;
  std::vector<int32_t> counts_;  // (n_vocab) occurrences in the window
  std::vector<int32_t> window_;  // (last_n) ring of the most recent tokens
  size_t window_used_ = 0;       // entries of window_ filled so far
  size_t window_next_ = 0;       // where the next token goes (oldest once full)
};

// Keep the k highest-ranked candidates, in rank order. k <= 0: keep all.
class TopKStage final : public SamplerStage {
 public:
  explicit TopKStage(int k) : k_(k) {}
  const char* name() const override { return "top-k"; }
  void apply(Candidates& cur) override;

 private:
  int k_;
};

// Keep the smallest rank-ordered prefix whose softmax mass is >= p (at least one).
// Sorts only as far as the prefix reaches. p >= 1: keep all.
class TopPStage final : public SamplerStage {
 public:
  explicit TopPStage(float p) : p_(p) {}
  const char* name() const override { return "top-p"; }
  void apply(Candidates& cur) override;

 private:
  float p_;
};

// Keep tokens with p_i >= p · p_max, i.e. l_i >= l_max + ln p. p <= 0: keep all.
class MinPStage final : public SamplerStage {
 public:
  explicit MinPStage(float p);
  const char* name() const override { return "min-p"; }
  void apply(Candidates& cur) override;

 private:
  float p_;
  float log_p_;  // ln p, from log_f64 so every build agrees
};

// l = l / t. t <= 0 keeps only the best-ranked token (l = −inf for the rest).
class TemperatureStage final : public SamplerStage {
 public:
  explicit TemperatureStage(float t) : t_(t) {}
  const char* name() const override { return "temp"; }
  void apply(Candidates& cur) override;

 private:
  float t_;
};

// Draw i with probability w_i / Σw, w_i = e^(l_i − max): the first i in
// candidate order whose running Σw exceeds u·Σw, u uniform in [0, 1). Leaves
// the normalised probabilities in p. (llama.cpp draws u with mt19937 and
// std::uniform_real_distribution; ours is Rng, the same on every platform.)
class DistStage final : public SamplerStage {
 public:
  explicit DistStage(uint64_t seed) : seed_(seed), rng_(seed) {}
  const char* name() const override { return "dist"; }
  void apply(Candidates& cur) override;
  void reset() override { rng_.reseed(seed_); }

 private:
  uint64_t seed_;
  Rng rng_;
};

// Select the highest-ranked candidate (highest logit, then lowest id).
class GreedyStage final : public SamplerStage {
 public:
  const char* name() const override { return "greedy"; }
  void apply(Candidates& cur) override;
};

}  // namespace wllm
