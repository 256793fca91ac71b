// Attention of a batch of queries over the KV cache, in tiles of tokens
// (attention.cpp says how), with the masks the architectures need: causal,
// and causal over a sliding window; scores optionally soft-capped. And, for
// encoders, attention of a batch of packed texts over their own keys and
// values: each token sees its whole text (or, causal, the text up to it),
// with ALiBi's distance penalty where the model has it.
#pragma once

#include <cstdint>
#include <vector>

#include "model/config.h"
#include "model/kv_cache.h"
#include "runtime/thread_pool.h"

namespace wllm {

struct AttentionParams {
  float scale = 1.0f;    // scores = q·k · scale
  float softcap = 0.0f;  // > 0: scores = softcap · tanh(scores / softcap)
  int window = 0;        // > 0: a query at p sees positions p - window < u <= p
};

class Attention {
 public:
  // Scratch for n_threads threads, for contexts of up to n_ctx positions.
  Attention(const ModelConfig& config, int n_ctx, int n_threads);
  int64_t bytes() const;
  static int64_t plan_bytes(const ModelConfig& config, int n_ctx, int n_threads);

  // out[t, h] = Σ_u softmax_u(score(q[t, h], k_u)) · v_u for the n tokens at
  // positions pos..pos+n-1 (their keys and values already in the cache),
  // over the positions each may see. q and out: (n, n_heads·head_dim);
  // query head h reads key-value head h / (n_heads / n_kv_heads of layer l).
  void run(const KvCache& cache, int l, const float* q, int n, int64_t pos, const AttentionParams& p, float* out,
           ThreadPool& pool);

  // out[t, h] for the n tokens of a batch of packed texts (Forward::run_packed),
  // over the batch's own keys k (n, kv_dim) and values values_t (kv_dim rows
  // of `values_stride` floats, a column per token), in f32 and never cached,
  // as llama.cpp's encoders: token t sees the tokens [first[t], end[t]) of its
  // text, or, causal, [first[t], t]. With ALiBi (config.alibi_bias_max > 0)
  // query head h's score of token u gets slope_h · −|u − t| before the
  // softmax (scaled by p.scale). Needs n <= n_ctx.
  void run_packed(int l, const float* q, const float* k, const float* values_t, int64_t values_stride, int n,
                  const int32_t* first, const int32_t* end, bool causal, const AttentionParams& p, float* out,
                  ThreadPool& pool);

 private:
  const ModelConfig& config_;
  int n_ctx_;
  int tile_acts_;               // queries of a full tile
  std::vector<float> att_;      // (n_threads, tile_acts, n_ctx) scores of an attention tile
  std::vector<float> tile_qo_;  // (n_threads, 2, tile_acts, head_dim) its queries, its outputs
  std::vector<float> kv_f32_;   // (n_threads, 2, n_ctx, head_dim) f32 copies of a kv head's cache, if f16 is slow
  std::vector<float> alibi_slopes_;  // (n_heads) ALiBi's slope per query head, or empty
  std::vector<int32_t> tile_starts_; // (n_ctx) encoders: the first token of each tile of a packed batch
};

}  // namespace wllm
