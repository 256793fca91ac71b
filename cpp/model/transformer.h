// The Llama-family transformer (llama, qwen2): weights, KV cache and the
// buffers of one forward pass. Everything it needs is allocated in the
// constructor; forward() allocates nothing.
#pragma once

#include <cstdint>
#include <vector>

#include "model/config.h"
#include "model/weights.h"
#include "ops/ops.h"
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
  // 64 rather than 32: ~8% faster prefill (fewer per-call overheads: the
  // activation conversion, thread hand-offs, tile decoding), for 32 more rows
  // in each activation buffer (logits: 32 · n_vocab floats more).
  static constexpr int kMaxBatch = 64;

  // Runs token `token` at position `pos` (0 <= pos < n_ctx) and returns the
  // next-token logits (n_vocab floats, valid until the next call). Positions
  // must be fed in order; feeding pos p discards cache entries >= p.
  const float* forward(int32_t token, int pos) { return forward_batch(&token, 1, pos, false); }

  // Runs n (1..kMaxBatch) tokens at positions pos..pos+n-1 (< n_ctx). Returns
  // the logits after the last one, or with all_logits those after each one
  // (n rows of n_vocab). Every number equals what n forward() calls give.
  const float* forward_batch(const int32_t* tokens, int n, int pos, bool all_logits);

  // Bytes of runtime memory beyond the weights (KV cache + buffers), as
  // allocated, and as planned before allocating (the two agree).
  int64_t kv_cache_bytes() const;
  int64_t buffer_bytes() const;
  static int64_t plan_kv_cache_bytes(const ModelConfig& config, int n_ctx);
  static int64_t plan_buffer_bytes(const ModelConfig& config, int n_ctx, int n_threads);

 private:
  void attention(int layer, int n, int pos);

  ModelConfig config_;
  ModelWeights w_;
  int n_ctx_;
  ThreadPool& pool_;
  RopeParams rope_;

  // Activations of a batch: one row per token (B = kMaxBatch rows).
  std::vector<float> x_;        // (B, dim) residual stream
  std::vector<float> xb_;       // (B, max(dim, q_dim)) normalised input of a block
  std::vector<float> q_;        // (B, q_dim) queries
  std::vector<float> k_;        // (B, kv_dim) keys of these positions
  std::vector<float> v_;        // (B, kv_dim) values of these positions
  std::vector<float> att_out_;  // (B, q_dim) attention output, before wo
  std::vector<float> att_;      // (n_threads, tile · n_heads / n_kv_heads, n_ctx) scores of an attention tile
  std::vector<float> att_q_;    // (n_threads, 2, tile · n_heads / n_kv_heads, head_dim) its queries, its outputs
  std::vector<float> kv_f32_;   // (n_threads, 2, n_ctx, head_dim) f32 copies of a kv head's cache, if f16 is slow
  std::vector<float> hb_;       // (B, ffn_dim) gate, then silu(gate)·up
  std::vector<float> hb2_;      // (B, ffn_dim) up
  std::vector<float> logits_;   // (B, n_vocab)
  std::vector<float> rope_cs_;  // (B, rope_dims) cos, sin per rotated pair
  std::vector<uint16_t> value_f16_;  // (B, kv_dim) f16: each position's values on their way to the transposed cache
  ActivationCache acts_;

  // KV cache in f16: half the memory of f32, like llama.cpp's default.
  std::vector<uint16_t> key_cache_;    // (layer, n_ctx, kv_dim) f16
  std::vector<uint16_t> value_cache_;  // (layer, kv_dim, n_ctx) f16, transposed: a row per value dimension
};

}  // namespace wllm
