// Token sampling: turns one position's logits into the next token.
//
// A Sampler is a chain of stages in llama.cpp's default order
//   penalties → top-k → top-p → min-p → temperature → dist
// (temperature <= 0: penalties → greedy), each with llama.cpp's semantics
// (see stages.h). Unlike llama.cpp, every result is reproducible on every
// platform: the random numbers come from our own Rng, exp from exp_f32, and
// ties between equal logits always go to the lower token id.
//
// Usage, per generation:
//   WLLM_ASSIGN_OR_RETURN(Sampler s, Sampler::create(params, n_vocab));
//   for (t : prompt) s.accept(t);              // prompt tokens count for penalties
//   loop: t = s.sample(logits); s.accept(t);  // sample() does not record t itself
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "sampler/chain.h"

namespace wllm {

// Defaults follow llama.cpp's common_params_sampling.
struct SamplerParams {
  float temperature = 0.8f;        // <= 0: greedy (argmax after penalties); must be finite
  int top_k = 40;                  // <= 0: disabled
  float top_p = 0.95f;             // in (0, 1]; 1: disabled
  float min_p = 0.05f;             // <= 1; <= 0: disabled
  float repeat_penalty = 1.0f;     // > 0; 1: disabled; l > 0 ? l / p : l · p
  float frequency_penalty = 0.0f;  // l −= count · frequency_penalty
  float presence_penalty = 0.0f;   // l −= presence_penalty if count > 0
  int penalty_last_n = 64;         // in [0, kMaxPenaltyLastN]; 0: no penalties. (llama.cpp's
                                   // −1 = "whole context" must be resolved by the caller.)
  uint64_t seed = 0;               // the draws are a pure function of the seed; no "random" value
};

class Sampler {
 public:
  static constexpr int kMaxPenaltyLastN = 1 << 20;

  // Checks the parameters (kInvalidArgument names the bad one) and allocates
  // every buffer sample() needs.
  static Result<Sampler> create(const SamplerParams& params, int n_vocab);

  // Picks a token from n_vocab logits (read only). NaN logits count as −inf;
  // if every logit is −inf the draw is uniform. Allocates nothing.
  // `allowed` (optional, n_vocab bits: token t is bit t % 32 of word t / 32,
  // at least one set) masks the logits first: a token whose bit is clear is
  // as if its logit were −inf (it is left out of the candidates, which gives
  // every stage the same result and saves sorting it).
  int32_t sample(const float* logits, const uint32_t* allowed = nullptr);

  // Records a prompt or generated token for the penalties. Ids outside
  // [0, n_vocab) are ignored (they can never be sampled either).
  void accept(int32_t token);

  // Forgets accepted tokens and restarts the random sequence from the seed.
  void reset();

  const SamplerParams& params() const { return params_; }
  int n_vocab() const { return n_vocab_; }
  // "penalties -> top-k -> top-p -> min-p -> temp -> dist"
  std::string describe() const;
  // The candidates the last sample() ended with (kept set, probabilities, selection).
  const Candidates& last_candidates() const { return cur_; }

 private:
  Sampler(const SamplerParams& params, int n_vocab);

  SamplerParams params_;
  int n_vocab_ = 0;
  SamplerChain chain_;
  std::vector<TokenData> buffer_;  // (n_vocab) candidates, refilled by each sample()
  Candidates cur_;
};

}  // namespace wllm
