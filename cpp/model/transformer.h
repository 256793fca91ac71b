// A loaded model ready to run: its config, weights and the state of its
// forward passes (forward.h: activations and KV cache). Everything it needs
// is allocated in the constructor; forward() allocates nothing. The
// architecture's own code runs inside (architecture.h).
#pragma once

#include <cstdint>
#include <vector>

#include "model/config.h"
#include "model/forward.h"
#include "model/weights.h"
#include "runtime/thread_pool.h"

namespace wllm {

class Transformer {
 public:
  // n_ctx: positions the KV cache holds (at most the training context).
  Transformer(const ModelConfig& config, const ModelWeights& weights, int n_ctx, ThreadPool& pool);

  const ModelConfig& config() const { return config_; }
  int n_ctx() const { return n_ctx_; }

  // Tokens evaluated together at most: prompt tokens are fed in batches so
  // each weight row is read and decoded once per batch, not once per token.
  // 64 rather than 32: a faster prefill (fewer per-call overheads: the
  // activation conversion, thread hand-offs, tile decoding), for 32 more rows
  // in each activation buffer (logits: 32 · n_vocab floats more).
  static constexpr int kMaxBatch = 64;
  // An encoder's batch is a whole pass of texts, up to the context size:
  // every token must see every other of its text within the pass.
  static int max_batch(const ModelConfig& config, int n_ctx) { return config.encoder ? n_ctx : kMaxBatch; }
  int max_batch() const { return max_batch(config_, n_ctx_); }

  // Runs token `token` at position `pos` (0 <= pos < n_ctx) and returns the
  // next-token logits (n_vocab floats, valid until the next call). Positions
  // must be fed in order: pos is where the last pass ended, or an earlier
  // rewind_point(), and the positions from pos on are forgotten first.
  const float* forward(int32_t token, int pos) { return forward_batch(&token, 1, pos, false); }

  // Runs n (1..kMaxBatch) tokens at positions pos..pos+n-1 (< n_ctx). Returns
  // the logits after the last one, or with all_logits those after each one
  // (n rows of n_vocab). Every number equals what n forward() calls give.
  const float* forward_batch(const int32_t* tokens, int n, int pos, bool all_logits) {
    return forward_.run(tokens, n, pos, all_logits);
  }

  // Embeddings. A decoder: forward_batch's pass, returning the hidden states
  // after the final norm (n rows of dim). An encoder (config().encoder):
  // texts of text_lengths[i] tokens packed in `tokens` (n in all, at most
  // max_batch()), each attending to itself only; returns the last layer's
  // hidden states, n rows of dim.
  const float* hidden_batch(const int32_t* tokens, int n, int pos) { return forward_.run_hidden(tokens, n, pos); }
  const float* encode(const int32_t* tokens, int n, const int32_t* text_lengths, int n_texts) {
    return forward_.run_packed(tokens, n, text_lengths, n_texts);
  }
  // The tokens evaluated so far, position by position (what the cache holds).
  const std::vector<int32_t>& sequence() const { return forward_.sequence(); }
  // The latest position <= p from which evaluation can continue exactly,
  // giving the bits a fresh evaluation from 0 gives: p itself; for a model
  // with convolution layers (lfm2) going back, the convolution checkpoint
  // before p (conv_state.h); 0 where a sliding-window layer's ring no longer
  // holds the window of p (kv_cache.h).
  int rewind_point(int p) const { return static_cast<int>(forward_.rewind_point(p)); }
  // Forgets the positions from p on (p a rewind_point()).
  void rewind(int p) { forward_.rewind(p); }
  // The sequence's memory, for saving and restoring it (engine/state_file.h).
  KvCache& kv_cache() { return forward_.kv_cache(); }
  ConvState& conv_state() { return forward_.conv_state(); }
  void set_sequence(const int32_t* tokens, int n) { forward_.set_sequence(tokens, n); }

  // Bytes of runtime memory beyond the weights (KV cache + buffers), as
  // allocated, and as planned before allocating (the two agree).
  int64_t kv_cache_bytes() const { return forward_.kv_cache_bytes(); }
  int64_t buffer_bytes() const { return forward_.buffer_bytes(); }
  static int64_t plan_kv_cache_bytes(const ModelConfig& config, int n_ctx);
  static int64_t plan_buffer_bytes(const ModelConfig& config, int n_ctx, int n_threads);

 private:
  ModelConfig config_;
  ModelWeights weights_;
  int n_ctx_;
  Forward forward_;  // refers to config_ and weights_
};

}  // namespace wllm
