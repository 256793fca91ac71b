// One forward pass over a batch of tokens: the activations, the KV cache,
// and the steps an architecture's forward function is written in (its file
// in architectures/ reads top-down, like llama2.c's `forward`).
//
// Every step applies to each of the batch's n tokens, one row each, split
// across the threads (for_each_row: a row is always computed whole by one
// thread, so results never depend on the thread count), and computes for a
// batch exactly what n single-token passes compute. Everything is allocated
// in the constructor; a pass allocates nothing.
//
// A pass is one of three kinds: a decoder's tokens continuing its sequence
// through the KV cache, for logits (run) or for the hidden states an
// embedding pools (run_hidden); or an encoder's batch of whole texts packed
// one after another, each from position 0 and attending only to itself,
// with no cache (run_packed).
#pragma once

#include <cstdint>
#include <vector>

#include "model/attention.h"
#include "model/config.h"
#include "model/conv_state.h"
#include "model/kv_cache.h"
#include "model/weights.h"
#include "ops/ops.h"
#include "runtime/thread_pool.h"

namespace wllm {

// A (B, width) activation buffer: one row of `width` floats per token. The
// width is the row stride, so it must be what the matrices that read and
// write the rows take and give.
struct Rows {
  float* data = nullptr;
  int64_t width = 0;
  float* row(int64_t t) const { return data + t * width; }
};

class Forward {
 public:
  Forward(const ModelConfig& config, const ModelWeights& weights, int n_ctx, int max_batch, ThreadPool& pool);

  // Runs tokens[0..n) at positions pos..pos+n-1 through the architecture and
  // returns the logits after the last token, or (all_logits) after each. pos
  // is where the last pass ended, or a rewind_point() before it.
  const float* run(const int32_t* tokens, int n, int64_t pos, bool all_logits);
  // The same, but returns the hidden states after the final norm, n rows of
  // dim, where run() would go on to the logits.
  const float* run_hidden(const int32_t* tokens, int n, int64_t pos);
  // An encoder's pass over n_texts texts of text_lengths[i] tokens each,
  // tokens[0..n) one text after another: returns the hidden states after the
  // last layer, n rows of dim. Each text's rows are the bits it gets alone.
  const float* run_packed(const int32_t* tokens, int n, const int32_t* text_lengths, int n_texts);

  // The tokens evaluated so far, position by position: what the KV cache
  // (and the convolution state) holds.
  const std::vector<int32_t>& sequence() const { return sequence_; }
  // The latest position <= p (and <= the sequence's length) from which
  // evaluation can continue exactly: p itself, an earlier convolution
  // checkpoint, or 0 where a sliding-window ring no longer holds what p needs.
  int64_t rewind_point(int64_t p) const;
  // Forgets the positions from p on (p a rewind_point()).
  void rewind(int64_t p);
  // What a saved sequence restores (engine/state_file.h): the cache and the
  // convolution state, written there; then declare their tokens.
  KvCache& kv_cache() { return cache_; }
  ConvState& conv_state() { return conv_; }
  void set_sequence(const int32_t* tokens, int64_t n) { sequence_.assign(tokens, tokens + n); }

  int64_t kv_cache_bytes() const { return cache_.bytes(); }
  // Activations, scratch and the convolution layers' state.
  int64_t buffer_bytes() const;
  static int64_t plan_buffer_bytes(const ModelConfig& config, int n_ctx, int max_batch, int n_threads);
  static int64_t plan_kv_cache_bytes(const ModelConfig& config, int n_ctx, int max_batch);

  const ModelConfig& config;
  const ModelWeights& weights;

  // The batch: n tokens at positions pos..pos+n-1 (a packed batch: pos 0,
  // each token at its position in its text).
  const int32_t* tokens = nullptr;
  int n = 0;
  int64_t pos = 0;

  // Activations, B = max_batch rows each.
  Rows x;         // (B, dim) residual stream
  Rows xb;        // (B, dim) a block's normalised input, then its output
  Rows q, k, v;   // (B, q_dim), (B, kv_dim) x2
  Rows att;       // (B, q_dim) attention output, before Wo
  Rows hb, hb2;   // (B, ffn_dim) x2 feed-forward hidden
  // Short-convolution layers only (width 0 in models without them):
  Rows bch;       // (B, 3·dim) the input projection: gates b and c, input h
  Rows xc;        // (B, dim) the convolution's gated output, before W_out

  // ---- Steps (math in the comment; "each token" is implied) ----

  // x = token_embd[token] · scale
  void embed(const Tensor& table, float scale = 1.0f);
  // x += pos_embd[position] (learned position embeddings; xb holds the rows
  // on their way)
  void add_positions(const Tensor& table);
  // x += table[row] (encoders: the token-type embedding of type 0; xb holds the row)
  void add_row(const Tensor& table, int64_t row);
  // out = in / sqrt(mean(in²) + eps) · w
  void rmsnorm(Rows out, Rows in, const Tensor& w);
  // out = (in − mean(in)) / sqrt(var(in) + eps) · w + b
  void layernorm(Rows out, Rows in, const Tensor& w, const Tensor& b);
  // Each of the n_heads heads of y: y_h = rmsnorm(y_h) · w (w: head_dim gains)
  void head_rmsnorm(Rows y, int n_heads, const Tensor& w);
  // out = W · in
  void matmul(const Tensor& w, Rows in, Rows out);
  // out1, out2 = W1 · in, W2 · in (the input converted once)
  void matmul2(const Tensor& w1, Rows out1, const Tensor& w2, Rows out2, Rows in);
  // q, k, v = Wq·in + bq, Wk·in + bk, Wv·in + bv (biases where present)
  void qkv(const LayerWeights& L, Rows in);
  // Rotates q's and k's heads by position with layer l's RoPE (a sliding-
  // window layer may have its own frequency base).
  void rope(int l);
  // att = attention of q over layer l's cache, after storing this batch's k
  // and v there (attention.h), with the config's query scale and score cap
  // and the layer's window; or with the given parameters.
  void attention(int l);
  void attention(int l, const AttentionParams& params);
  // Short convolution of layer l (lfm2), from bch = (b, c, h) to
  // xc = c ⊙ Σ_j w_j ⊙ (b ⊙ h)[p − taps + 1 + j], j = 0..taps−1: each
  // channel's taps w over the last positions' b ⊙ h, earlier passes' from
  // the layer's state (conv_state.h).
  void short_conv(int l, const Tensor& w);
  // y += x · scale
  void add(Rows y, Rows x, float scale = 1.0f);
  // y += b (b: y's width of f32 values)
  void add_bias(Rows y, const Tensor& b);
  // The gated feed-forward of layer L on xb, into xb:
  // xb = W_down·(act(W_gate·xb) ⊙ W_up·xb), act silu (SwiGLU) or GELU's tanh
  // form as llama.cpp computes it (GeGLU: ops.h); with L's gate, up and down
  // biases added after their products where it has them.
  enum class Gate { kSilu, kGelu };
  void gated_ffn(const LayerWeights& L, Gate gate);
  // The same from `in` into `out`.
  void gated_ffn(const LayerWeights& L, Gate gate, Rows in, Rows out);
  // y = gelu(y) (the same GELU)
  void gelu(Rows y, int64_t width);
  // The batch's output: logits = W_out · rmsnorm(x)·w_norm, for the last
  // token (or each); or with a LayerNorm, W_out · (layernorm(x)·w_norm + b_norm).
  // Then optionally cap (logits = cap·tanh(logits/cap)) or scale
  // (logits = logits·(1/scale)).
  // In a run_hidden pass: x = rmsnorm(x)·w_norm for every token, and no logits.
  void output(const Tensor& norm, const Tensor& w_out);
  void output(const Tensor& norm, const Tensor& norm_bias, const Tensor& w_out);
  void cap_logits(float cap);
  void scale_logits(float scale);

 private:
  // What a pass gives: the last token's logits, every token's, or the hidden states.
  enum class Want { kLastLogits, kAllLogits, kHidden };
  const float* pass(const int32_t* tokens, int n, int64_t pos, Want want);
  // The rows output() normalises and gives logits for.
  int first_output() const { return want_ == Want::kLastLogits ? n - 1 : 0; }
  // logits = W_out · x, for the rows output() normalised.
  void logits(const Tensor& w_out);

  ThreadPool& pool_;
  int max_batch_;
  Want want_ = Want::kLastLogits;
  bool packed_ = false;          // a run_packed pass
  std::vector<int32_t> positions_;    // (B) each token's position
  std::vector<int32_t> text_first_;   // (B) encoders: the first token of each token's text in the batch
  std::vector<int32_t> text_end_;     // (B) encoders: and one past its last
  std::vector<float> values_t_;       // (kv_dim, B) encoders: the batch's values, transposed
  KvCache cache_;
  ConvState conv_;
  std::vector<int32_t> sequence_;  // (n_ctx) reserved: the tokens at positions 0 .. length - 1
  Attention attention_;
  RopeParams rope_global_, rope_local_;
  std::vector<float> buffer_;    // every Rows above, one after another
  std::vector<float> logits_;    // (B, n_vocab)
  std::vector<float> rope_cs_;   // (B, rope_dims) cos, sin per rotated pair; then the local layers' table
  std::vector<uint16_t> value_f16_;  // (B, kv_dim) f16: each position's values on their way to the cache
  ActivationCache acts_;
};

}  // namespace wllm
