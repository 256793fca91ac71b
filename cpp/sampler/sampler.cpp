#include "sampler/sampler.h"

#include <cmath>
#include <limits>
#include <memory>

#include "sampler/stages.h"

namespace wllm {
namespace {

Status check_params(const SamplerParams& p, int n_vocab) {
  constexpr ErrorCode kBad = ErrorCode::kInvalidArgument;
  if (n_vocab <= 0) return Status::error(kBad, "sampler: the vocabulary must have at least one token, got %d", n_vocab);
  if (!std::isfinite(p.temperature)) {
    return Status::error(kBad, "sampler: temperature must be a finite number (<= 0 for greedy), got %g",
                         static_cast<double>(p.temperature));
  }
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f)) {
    return Status::error(kBad, "sampler: top_p must be in (0, 1] (1 disables it), got %g", static_cast<double>(p.top_p));
  }
  if (!(p.min_p <= 1.0f)) {
    return Status::error(kBad, "sampler: min_p must be at most 1 (<= 0 disables it), got %g",
                         static_cast<double>(p.min_p));
  }
  if (!(p.repeat_penalty > 0.0f && std::isfinite(p.repeat_penalty))) {
    return Status::error(kBad, "sampler: repeat_penalty must be a finite number > 0 (1 disables it), got %g",
                         static_cast<double>(p.repeat_penalty));
  }
  if (!std::isfinite(p.frequency_penalty)) {
    return Status::error(kBad, "sampler: frequency_penalty must be a finite number, got %g",
                         static_cast<double>(p.frequency_penalty));
  }
  if (!std::isfinite(p.presence_penalty)) {
    return Status::error(kBad, "sampler: presence_penalty must be a finite number, got %g",
                         static_cast<double>(p.presence_penalty));
  }
  if (p.penalty_last_n < 0 || p.penalty_last_n > Sampler::kMaxPenaltyLastN) {
    return Status::error(kBad, "sampler: penalty_last_n must be in [0, %d] (0 disables penalties), got %d",
                         Sampler::kMaxPenaltyLastN, p.penalty_last_n);
  }
  return {};
}

}  // namespace

Result<Sampler> Sampler::create(const SamplerParams& params, int n_vocab) {
  WLLM_RETURN_IF_ERROR(check_params(params, n_vocab));
  return Sampler(params, n_vocab);
}

Sampler::Sampler(const SamplerParams& p, int n_vocab) : params_(p), n_vocab_(n_vocab) {
  buffer_.resize(static_cast<size_t>(n_vocab));
  // Stages that would do nothing are left out, as llama.cpp's common sampler does for greedy.
  const bool penalties = p.penalty_last_n > 0 &&
                         (p.repeat_penalty != 1.0f || p.frequency_penalty != 0.0f || p.presence_penalty != 0.0f);
  if (penalties) {
    chain_.add(std::make_unique<PenaltiesStage>(n_vocab, p.penalty_last_n, p.repeat_penalty, p.frequency_penalty,
                                                p.presence_penalty));
  }
  if (p.temperature <= 0.0f) {
    // top-k/top-p/min-p always keep the best-ranked token, so they cannot change the argmax.
    chain_.add(std::make_unique<GreedyStage>());
    return;
  }
  if (p.top_k > 0) chain_.add(std::make_unique<TopKStage>(p.top_k));
  if (p.top_p < 1.0f) chain_.add(std::make_unique<TopPStage>(p.top_p));
  if (p.min_p > 0.0f) chain_.add(std::make_unique<MinPStage>(p.min_p));
  chain_.add(std::make_unique<TemperatureStage>(p.temperature));
  chain_.add(std::make_unique<DistStage>(p.seed));
}

int32_t Sampler::sample(const float* logits, const uint32_t* allowed) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  size_t n = 0;
  if (allowed) {
    for (int32_t i = 0; i < n_vocab_; ++i) {
      if (!(allowed[i >> 5] >> (i & 31) & 1)) continue;
      const float l = logits[i];
      buffer_[n++] = TokenData{i, l == l ? l : kNegInf, 0.0f};
    }
  } else {
    for (int32_t i = 0; i < n_vocab_; ++i) {
      const float l = logits[i];
      buffer_[n++] = TokenData{i, l == l ? l : kNegInf, 0.0f};
    }
  }
  cur_ = Candidates{buffer_.data(), n, false, -1};
  chain_.apply(cur_);
  // The last stage (greedy or dist) always selects when at least one candidate is left, and every stage keeps one.
  if (cur_.selected < 0 || static_cast<size_t>(cur_.selected) >= cur_.size) return 0;
  return cur_.data[cur_.selected].id;
}

void Sampler::accept(int32_t token) { chain_.accept(token); }

void Sampler::reset() { chain_.reset(); }

std::string Sampler::describe() const {
  std::string out;
  for (size_t i = 0; i < chain_.size(); ++i) {
    if (i) out += " -> ";
    out += chain_.stage(i).name();
  }
  return out;
}

}  // namespace wllm
