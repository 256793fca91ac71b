// One generation request as a step-by-step state machine: evaluate the
// prompt, then sample a token at a time. Each step() does a bounded amount of
// work and returns the text it completed, so a caller that must stay
// responsive (the wasm worker, which has to notice an abort message between
// tokens) can run the loop itself; Engine::generate() is the blocking loop.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/output_constraint.h"
#include "grammar/token_masker.h"
#include "grammar/trigger_scanner.h"
#include "model/transformer.h"
#include "sampler/sampler.h"
#include "tokenizer/tokenizer.h"

namespace wllm {

struct GenerateOptions {
  SamplerParams sampling;
  int max_tokens = 256;               // tokens to generate at most
  std::vector<std::string> stop;      // stop strings (not included in the output)
  bool add_special = true;            // add BOS etc. as the vocabulary asks
  bool parse_special = true;          // control-token text in the prompt becomes control tokens
  OutputConstraint constraint;        // the output must match this grammar or JSON (schema)
  bool reuse_cache = true;            // evaluate only the prompt's tokens after those the cache holds
};

enum class StopReason { kMaxTokens, kEndOfGeneration, kStopString, kContextFull };
const char* stop_reason_name(StopReason reason);

struct GenerateStats {
  int prompt_tokens = 0;
  int cached_tokens = 0;       // of the prompt's, those the cache held already (not evaluated again)
  int generated_tokens = 0;
  double prefill_seconds = 0;
  double decode_seconds = 0;
  double grammar_seconds = 0;  // masking tokens and advancing the grammar (part of decode_seconds)
  StopReason stop_reason = StopReason::kMaxTokens;
};

// Holds back generated text that could be the start of a stop string, so a
// stop string is never partly emitted.
class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {}
  // Adds text and appends what is safe to emit to *out; true when a stop
  // string has been completed (the text before it is emitted, the rest dropped).
  bool push(std::string_view text, std::string* out);
  // Appends everything still held back.
  void flush(std::string* out);

 private:
  size_t longest_stop_prefix_suffix() const;
  void emit(size_t n, std::string* out);

  std::vector<std::string> stops_;
  std::string pending_;
};

class Generation {
 public:
  // Prompt tokens evaluated per step: one batch, short enough that a step
  // stays responsive.
  static constexpr int kPrefillTokensPerStep = Transformer::kMaxBatch;

  // `prompt` must be non-empty, shorter than n_ctx, and every id in the
  // vocabulary. Its first `cached` tokens (fewer than all) are the model's
  // cache already, at a rewind point (Transformer::rewind_point): evaluation
  // starts after them. `masker` (optional) constrains the output to its
  // grammar: only tokens that can continue it are sampled, end-of-generation
  // only where it can end, and generation ends where nothing else can follow.
  Generation(Transformer& model, const Tokenizer& tokenizer, int n_ctx, std::vector<int32_t> prompt, int cached,
             const GenerateOptions& options, Sampler sampler, TokenMasker* masker = nullptr);

  // Does one step of work and appends the text it completed to *text.
  // Returns false once generation has finished (stats().stop_reason says why,
  // or status() holds an error); the text of the last step is complete then.
  bool step(std::string* text);
  // Ends early (abort): appends the text held back so far.
  void cancel(std::string* text);

  bool done() const { return phase_ == Phase::kDone; }
  // Whether the whole prompt has been evaluated (the cache holds it).
  bool prefilled() const { return phase_ != Phase::kPrefill; }
  const GenerateStats& stats() const { return stats_; }
  // kInvalidArgument if the grammar left no token to sample (no token of the
  // vocabulary can continue it); OK otherwise.
  const Status& status() const { return status_; }

 private:
  enum class Phase { kPrefill, kDecode, kDone };
  void prefill_some();
  void decode_one(std::string* text);
  void finish(std::string* text);
  // The grammar's mask for the next token (nullptr without a grammar); ends
  // the generation (false) where the grammar must end or no token fits.
  bool grammar_mask(const uint32_t** mask, std::string* text);
  // Lazy grammar, not yet triggered: whether `*next` (sampled freely)
  // completes a trigger, and then the grammar's state after it. A token
  // whose bytes past the trigger the grammar rejects is sampled again under
  // the grammar (*next changes). false: no token fits, or (the masker
  // overflowed) the grammar is too ambiguous to follow.
  bool watch_triggers(int32_t* next);
  // Ends with an error: the grammar has too many parses of the output to
  // follow (TokenMasker::overflowed()), or else no token of the vocabulary
  // can continue it.
  void fail_grammar(std::string* text);

  Transformer& model_;
  const Tokenizer& tokenizer_;
  const int n_ctx_;
  const std::vector<int32_t> prompt_;
  const int max_tokens_;
  Sampler sampler_;
  StreamDecoder decoder_;
  StopMatcher matcher_;
  Phase phase_ = Phase::kPrefill;
  int pos_ = 0;                    // next position to evaluate
  const float* logits_ = nullptr;  // next-token logits of the last evaluated position
  GenerateStats stats_;
  std::string piece_;              // scratch: the current token's text
  TokenMasker* masker_;            // nullptr: unconstrained
  TokenMasker::StateId grammar_state_ = 0;
  // A lazy constraint (options.constraint.lazy()) holds from the first
  // trigger on; before it the output is free.
  TriggerScanner triggers_;
  bool waiting_for_trigger_ = false;  // lazy grammar, no trigger yet
  Status status_;
};

}  // namespace wllm
