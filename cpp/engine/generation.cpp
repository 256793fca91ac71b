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
                       int cached, const GenerateOptions& options, Sampler sampler, TokenMasker* masker)
    : model_(model),
      tokenizer_(tokenizer),
      n_ctx_(n_ctx),
      prompt_(std::move(prompt)),
      max_tokens_(options.max_tokens),
      sampler_(std::move(sampler)),
      decoder_(tokenizer),
      matcher_(options.stop),
      masker_(masker),
      triggers_(options.constraint.triggers, options.constraint.start_triggers) {
  stats_.prompt_tokens = static_cast<int>(prompt_.size());
  stats_.cached_tokens = cached;
  pos_ = cached;
  // The penalties see the whole prompt, cached or not.
  for (int i = 0; i < cached; ++i) sampler_.accept(prompt_[i]);
  if (masker_) grammar_state_ = masker_->initial_state();
  waiting_for_trigger_ = masker_ && options.constraint.lazy();
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
  const uint32_t* mask = nullptr;
  if (stats_.generated_tokens == max_tokens_) {
    stats_.stop_reason = StopReason::kMaxTokens;
    finish(text);
  } else if (grammar_mask(&mask, text)) {
    int32_t next = sampler_.sample(logits_, mask);
    if (waiting_for_trigger_ && !tokenizer_.is_end_of_generation(next) && !watch_triggers(&next)) {
      fail_grammar(text);
    } else if (tokenizer_.is_end_of_generation(next)) {
      stats_.stop_reason = StopReason::kEndOfGeneration;
      finish(text);
    } else {
      if (mask) {  // sampled under the grammar (a token that triggered it has advanced it already)
        const double grammar_start = now_seconds();
        grammar_state_ = masker_->accept(grammar_state_, next);
        stats_.grammar_seconds += now_seconds() - grammar_start;
        // The mask allowed it: only the matcher's memory limit, met since, can leave no state.
        if (grammar_state_ == GrammarMatcher::kDead) {
          fail_grammar(text);
          stats_.decode_seconds += now_seconds() - start;
          return;
        }
      }
      sampler_.accept(next);
      ++stats_.generated_tokens;
      piece_.clear();
      if (masker_ && masker_->is_preserved(next)) {
        decoder_.finish(&piece_);  // a character cut short by a control token stays cut
        piece_ += masker_->token_bytes(next);
      } else {
        decoder_.push(next, &piece_);
      }
      if (matcher_.push(piece_, text)) {
        stats_.stop_reason = StopReason::kStopString;
        phase_ = Phase::kDone;  // the text after the stop string is dropped
      } else if (masker_ && !waiting_for_trigger_ && masker_->must_end(grammar_state_)) {
        // The grammar is complete and nothing may follow: no need to evaluate the token.
        stats_.stop_reason = StopReason::kEndOfGeneration;
        finish(text);
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

bool Generation::grammar_mask(const uint32_t** mask, std::string* text) {
  if (!masker_ || waiting_for_trigger_) return true;
  const double start = now_seconds();
  masker_->compact_if_needed(&grammar_state_);
  size_t allowed = 0;
  bool ambiguous = false;
  if (!masker_->must_end(grammar_state_)) {
    *mask = masker_->mask(grammar_state_, &allowed);
    ambiguous = masker_->overflowed();
  }
  stats_.grammar_seconds += now_seconds() - start;
  if (ambiguous) {
    fail_grammar(text);
    return false;
  }
  if (allowed > 0) return true;
  // Nothing can follow: the output is complete if the grammar can end here
  // (also when the vocabulary has no end-of-generation token to sample).
  if (masker_->can_end(grammar_state_)) {
    stats_.stop_reason = StopReason::kEndOfGeneration;
    finish(text);
  } else {
    fail_grammar(text);
  }
  return false;
}

void Generation::fail_grammar(std::string* text) {
  if (masker_->overflowed()) {
    status_ = Status::error(ErrorCode::kInvalidArgument,
                            "grammar: the grammar is too ambiguous to follow: after %d generated tokens, the output can "
                            "be read in more than %zu ways at once",
                            stats_.generated_tokens, GrammarMatcher::kMaxParses);
  } else {
    status_ = Status::error(ErrorCode::kInvalidArgument,
                            "grammar: no token of the vocabulary can continue the output after %d generated tokens",
                            stats_.generated_tokens);
  }
  finish(text);
}

bool Generation::watch_triggers(int32_t* next) {
  const double start = now_seconds();
  const std::string_view bytes = masker_->token_bytes(*next);
  TriggerScanner::Match match;
  bool ok = true;
  if (!triggers_.find(bytes, &match)) {
    triggers_.push(bytes);
  } else {
    waiting_for_trigger_ = false;
    grammar_state_ = masker_->accept_bytes(masker_->initial_state(), match.text);
    if (masker_->overflowed()) {
      ok = false;
    } else if (grammar_state_ == GrammarMatcher::kDead) {
      // Sample again from where the trigger's earlier bytes leave the grammar.
      grammar_state_ = masker_->accept_bytes(masker_->initial_state(), std::string_view(match.text).substr(0, match.before));
      size_t allowed = 0;
      const uint32_t* mask = grammar_state_ == GrammarMatcher::kDead ? nullptr : masker_->mask(grammar_state_, &allowed);
      if (allowed == 0 || masker_->overflowed()) {
        ok = false;
      } else {
        *next = sampler_.sample(logits_, mask);
        if (!tokenizer_.is_end_of_generation(*next)) {
          grammar_state_ = masker_->accept(grammar_state_, *next);
          ok = grammar_state_ != GrammarMatcher::kDead;  // as above: the matcher's memory limit
        }
      }
    }
  }
  stats_.grammar_seconds += now_seconds() - start;
  return ok;
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
