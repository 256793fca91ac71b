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

  // Runs token `token` at position `pos` (0 <= pos < n_ctx) and returns the
  // next-token logits (n_vocab floats, valid until the next call). Positions
  // must be fed in order; feeding pos p discards cache entries >= p.
  const float* forward(int32_t token, int pos);

  // Bytes of runtime memory beyond the weights (KV cache + buffers), as
  // allocated, and as planned before allocating (the two agree).
  int64_t kv_cache_bytes() const;
  int64_t buffer_bytes() const;
  static int64_t plan_kv_cache_bytes(const ModelConfig& config, int n_ctx);
  static int64_t plan_buffer_bytes(const ModelConfig& config, int n_ctx, int n_threads);

 private:
  void attention(int layer, int pos);

  ModelConfig config_;
  ModelWeights w_;
  int n_ctx_;
  ThreadPool& pool_;
  RopeParams rope_;

  // Activations of one position.
  std::vector<float> x_;        // (dim) residual stream
  std::vector<float> xb_;       // (dim) normalised input of a block
  std::vector<float> q_;        // (q_dim) queries
  std::vector<float> k_;        // (kv_dim) key of this position
  std::vector<float> v_;        // (kv_dim) value of this position
  std::vector<float> att_out_;  // (q_dim) attention output, before wo
  std::vector<float> att_;      // (n_threads, n_ctx) softmax scratch per thread
  std::vector<float> hb_;       // (ffn_dim) gate, then silu(gate)·up
  std::vector<float> hb2_;      // (ffn_dim) up
  std::vector<float> logits_;   // (n_vocab)
  std::vector<float> rope_cs_;  // (rope_dims) cos, sin per rotated pair
  std::vector<float> k_row_;    // (n_threads, head_dim) a cached key as f32
  ActivationCache acts_;

  // KV cache in f16: half the memory of f32, like llama.cpp's default.
  std::vector<uint16_t> key_cache_;    // (layer, n_ctx, kv_dim) f16
  std::vector<uint16_t> value_cache_;  // (layer, n_ctx, kv_dim) f16
};

}  // namespace wllm
