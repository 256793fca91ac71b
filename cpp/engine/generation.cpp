#include "engine/generation.h"

#include <algorithm>
#include <chrono>

namespace wllm {
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

const char* stop_reason_name(StopReason reason) {
  switch (reason) {
    case StopReason::kMaxTokens: return "max_tokens";
    case StopReason::kEndOfGeneration: return "end_of_generation";
    case StopReason::kStopString: return "stop_string";
    case StopReason::kContextFull: return "context_full";
  }
  return "unknown";
}

bool StopMatcher::push(std::string_view text, std::string* out) {
  pending_.append(text);
  size_t cut = std::string::npos;
  for (const std::string& s : stops_) {
    if (s.empty()) continue;
    const size_t at = pending_.find(s);
    if (at != std::string::npos) cut = std::min(cut, at);
  }
  if (cut != std::string::npos) {
    emit(cut, out);
    pending_.clear();
    return true;
  }
  emit(pending_.size() - longest_stop_prefix_suffix(), out);
  return false;
}

void StopMatcher::flush(std::string* out) { emit(pending_.size(), out); }

// Length of the longest suffix of pending_ that is a proper prefix of a stop string.
size_t StopMatcher::longest_stop_prefix_suffix() const {
  size_t best = 0;
  for (const std::string& s : stops_) {
    if (s.empty()) continue;
    for (size_t len = std::min(s.size() - 1, pending_.size()); len > best; --len) {
      if (pending_.compare(pending_.size() - len, len, s, 0, len) == 0) {
        best = len;
        break;
      }
    }
  }
  return best;
}

void StopMatcher::emit(size_t n, std::string* out) {
  if (n == 0) return;
  out->append(pending_, 0, n);
  pending_.erase(0, n);
}

Generation::Generation(Transformer& model, const Tokenizer& tokenizer, int n_ctx, std::vector<int32_t> prompt,
                       const GenerateOptions& options, Sampler sampler)
    : model_(model),
      tokenizer_(tokenizer),
      n_ctx_(n_ctx),
      prompt_(std::move(prompt)),
      max_tokens_(options.max_tokens),
      sampler_(std::move(sampler)),
      decoder_(tokenizer),
      matcher_(options.stop) {
  stats_.prompt_tokens = static_cast<int>(prompt_.size());
}

bool Generation::step(std::string* text) {
  switch (phase_) {
    case Phase::kPrefill: prefill_some(); break;
    case Phase::kDecode: decode_one(text); break;
    case Phase::kDone: break;
  }
  return phase_ != Phase::kDone;
}

void Generation::prefill_some() {
  const double start = now_seconds();
  const int n = std::min<int>(kPrefillTokensPerStep, static_cast<int>(prompt_.size()) - pos_);
  logits_ = model_.forward_batch(prompt_.data() + pos_, n, pos_, false);
  for (int i = 0; i < n; ++i) sampler_.accept(prompt_[pos_ + i]);
  pos_ += n;
  stats_.prefill_seconds += now_seconds() - start;
  if (pos_ == static_cast<int>(prompt_.size())) phase_ = Phase::kDecode;
}

void Generation::decode_one(std::string* text) {
  const double start = now_seconds();
  if (stats_.generated_tokens == max_tokens_) {
    stats_.stop_reason = StopReason::kMaxTokens;
    finish(text);
  } else {
    const int32_t next = sampler_.sample(logits_);
    if (tokenizer_.is_end_of_generation(next)) {
      stats_.stop_reason = StopReason::kEndOfGeneration;
      finish(text);
    } else {
      sampler_.accept(next);
      ++stats_.generated_tokens;
      piece_.clear();
      decoder_.push(next, &piece_);
      if (matcher_.push(piece_, text)) {
        stats_.stop_reason = StopReason::kStopString;
        phase_ = Phase::kDone;  // the text after the stop string is dropped
      } else if (stats_.generated_tokens == max_tokens_) {
        stats_.stop_reason = StopReason::kMaxTokens;
        finish(text);
      } else if (pos_ >= n_ctx_) {
        // The cache is full; this last token was predicted from all of it.
        stats_.stop_reason = StopReason::kContextFull;
        finish(text);
      } else {
        logits_ = model_.forward(next, pos_++);
      }
    }
  }
  stats_.decode_seconds += now_seconds() - start;
}

void Generation::finish(std::string* text) {
  piece_.clear();
  decoder_.finish(&piece_);
  if (!matcher_.push(piece_, text)) matcher_.flush(text);
  phase_ = Phase::kDone;
}

void Generation::cancel(std::string* text) {
  if (phase_ == Phase::kDone) return;
  matcher_.flush(text);
  phase_ = Phase::kDone;
}

}  // namespace wllm
