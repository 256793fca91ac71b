#include "model/transformer.h"

#include <algorithm>
#include <cmath>

#include "quant/kernels.h"

namespace wllm {
namespace {

// Floats of f32 cache copies per thread (one kv head's keys and values), for
// a batch's attention where the kernels' f16 conversion is slow (attention()).
// x86 converts in one instruction inside its f16 kernel, and the copies made
// smollm2's 512-token prompt 2-5% slower there.
int64_t copy_floats(const ModelConfig& c, int n_ctx) {
  return active_isa_has_slow_f16() ? 2LL * n_ctx * c.head_dim : 0;
}

// Tokens per attention tile: queries of one kv head up to kAttentionActs
// (with 3 query heads per kv head, 15 activations per product instead of 3
// made a 512-row f16 gemm 32 -> 43 GMAC/s natively).
constexpr int kAttentionActs = 16;
int attention_tile(const ModelConfig& c) { return std::max(1, kAttentionActs / (c.n_heads / c.n_kv_heads)); }
// Queries of a full tile: its tokens × the query heads of one kv head.
int64_t attention_tile_acts(const ModelConfig& c) {
  return static_cast<int64_t>(attention_tile(c)) * (c.n_heads / c.n_kv_heads);
}

// Floats per thread for attention: a tile's scores, its gathered queries and outputs.
int64_t attention_floats(const ModelConfig& c, int n_ctx) {
  return attention_tile_acts(c) * (n_ctx + 2 * c.head_dim);
}

}  // namespace

Transformer::Transformer(const ModelConfig& c, const ModelWeights& w, int n_ctx, ThreadPool& pool)
    : config_(c), w_(w), n_ctx_(n_ctx), pool_(pool) {
  rope_.n_dims = c.rope_dims;
  rope_.freq_base = c.rope_freq_base;
  rope_.freq_scale = c.rope_freq_scale;
  rope_.neox = c.rope_neox;
  rope_.freq_factors = w.rope_freqs.present() ? w.rope_freqs.f32() : nullptr;

  const int64_t kv_size = static_cast<int64_t>(c.n_layers) * n_ctx * c.kv_dim();
  const size_t B = kMaxBatch;
  x_.resize(B * c.dim);
  xb_.resize(B * std::max(c.dim, c.q_dim()));
  q_.resize(B * c.q_dim());
  k_.resize(B * c.kv_dim());
  v_.resize(B * c.kv_dim());
  att_out_.resize(B * c.q_dim());
  att_.resize(static_cast<size_t>(pool.size() * attention_tile_acts(c) * n_ctx));
  att_q_.resize(static_cast<size_t>(pool.size() * 2 * attention_tile_acts(c) * c.head_dim));
  kv_f32_.resize(static_cast<size_t>(pool.size() * copy_floats(c, n_ctx)));
  hb_.resize(B * c.ffn_dim);
  hb2_.resize(B * c.ffn_dim);
  logits_.resize(B * c.n_vocab);
  rope_cs_.resize(B * c.rope_dims);
  value_f16_.resize(B * c.kv_dim());
  acts_ = ActivationCache(std::max({c.dim, c.q_dim(), c.ffn_dim}), kMaxBatch);
  key_cache_.resize(kv_size);
  value_cache_.resize(kv_size);
}

int64_t Transformer::plan_kv_cache_bytes(const ModelConfig& c, int n_ctx) {
  return 2 * static_cast<int64_t>(c.n_layers) * n_ctx * c.kv_dim() * static_cast<int64_t>(sizeof(uint16_t));
}

int64_t Transformer::plan_buffer_bytes(const ModelConfig& c, int n_ctx, int n_threads) {
  const int64_t per_token = c.dim + std::max(c.dim, c.q_dim()) + 2 * c.q_dim() + 2 * c.kv_dim() + 2 * c.ffn_dim +
                            c.n_vocab + c.rope_dims;
  const int64_t per_thread = attention_floats(c, n_ctx) + copy_floats(c, n_ctx);
  const int64_t floats = kMaxBatch * per_token + static_cast<int64_t>(n_threads) * per_thread;
  const int64_t value_staging = kMaxBatch * c.kv_dim() * static_cast<int64_t>(sizeof(uint16_t));
  return floats * static_cast<int64_t>(sizeof(float)) + value_staging +
         ActivationCache::plan_bytes(std::max({c.dim, c.q_dim(), c.ffn_dim}), kMaxBatch);
}

int64_t Transformer::kv_cache_bytes() const {
  return static_cast<int64_t>(key_cache_.size() + value_cache_.size()) * sizeof(uint16_t);
}

int64_t Transformer::buffer_bytes() const {
  const size_t floats = x_.size() + xb_.size() + q_.size() + k_.size() + v_.size() + att_out_.size() + att_.size() +
                        att_q_.size() + kv_f32_.size() + hb_.size() + hb2_.size() + logits_.size() + rope_cs_.size();
  return static_cast<int64_t>(floats * sizeof(float) + value_f16_.size() * sizeof(uint16_t)) + acts_.bytes();
}

const float* Transformer::forward_batch(const int32_t* tokens, int n, int pos, bool all_logits) {
  const ModelConfig& c = config_;
  const int dim = c.dim, q_dim = c.q_dim(), kv_dim = c.kv_dim(), ffn = c.ffn_dim;
  const TypeTraits& f16 = type_traits(TensorType::kF16);
  for (int t = 0; t < n; ++t) {
    get_row(w_.token_embd, tokens[t], &x_[static_cast<size_t>(t) * dim]);
    rope_angles(rope_, pos + t, &rope_cs_[static_cast<size_t>(t) * c.rope_dims]);
  }
  // Row t of a (B, width) buffer.
  const auto row = [](std::vector<float>& buf, int width, int t) { return buf.data() + static_cast<int64_t>(t) * width; };

  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& L = w_.layers[l];

    // Attention block: h = x + Wo · attention(rope(Wq·xn), rope(Wk·xn), Wv·xn)
    for_each_row(pool_, n, [&](int64_t t) {
      rmsnorm(row(xb_, dim, t), row(x_, dim, t), L.attn_norm.f32(), dim, c.rms_eps);
    });
    const MatmulJob qkv[] = {{&L.wq, q_.data()}, {&L.wk, k_.data()}, {&L.wv, v_.data()}};
    matmul_shared(qkv, 3, xb_.data(), n, acts_, pool_);
    for_each_row(pool_, n, [&](int64_t t) {
      float *q = row(q_, q_dim, t), *k = row(k_, kv_dim, t), *v = row(v_, kv_dim, t);
      if (L.bq.present()) {
        add_to(q, L.bq.f32(), q_dim);
        add_to(k, L.bk.f32(), kv_dim);
        add_to(v, L.bv.f32(), kv_dim);
      }
      const float* cs = row(rope_cs_, c.rope_dims, t);
      rope_apply(rope_, cs, q, c.n_heads, c.head_dim);
      rope_apply(rope_, cs, k, c.n_kv_heads, c.head_dim);
      // Store this position's key and value in the cache (f16; values transposed).
      const int64_t slot = (static_cast<int64_t>(l) * n_ctx_ + pos + t) * kv_dim;
      f16.from_float(k, key_cache_.data() + slot, kv_dim);
      uint16_t* value_f16 = value_f16_.data() + t * kv_dim;
      f16.from_float(v, value_f16, kv_dim);
      uint16_t* value_column = value_cache_.data() + static_cast<int64_t>(l) * kv_dim * n_ctx_ + pos + t;
      for (int i = 0; i < kv_dim; ++i) value_column[static_cast<int64_t>(i) * n_ctx_] = value_f16[i];
    });
    attention(l, n, pos);
    matmul(L.wo, att_out_.data(), n, xb_.data(), acts_, pool_);
    for_each_row(pool_, n, [&](int64_t t) { add_to(row(x_, dim, t), row(xb_, dim, t), dim); });

    // Feed-forward block: x = x + W_down · (silu(W_gate·xn) ⊙ (W_up·xn))
    for_each_row(pool_, n, [&](int64_t t) {
      rmsnorm(row(xb_, dim, t), row(x_, dim, t), L.ffn_norm.f32(), dim, c.rms_eps);
    });
    const MatmulJob gate_up[] = {{&L.w_gate, hb_.data()}, {&L.w_up, hb2_.data()}};
    matmul_shared(gate_up, 2, xb_.data(), n, acts_, pool_);
    for_each_row(pool_, n, [&](int64_t t) { swiglu(row(hb_, ffn, t), row(hb2_, ffn, t), ffn); });
    matmul(L.w_down, hb_.data(), n, xb_.data(), acts_, pool_);
    for_each_row(pool_, n, [&](int64_t t) { add_to(row(x_, dim, t), row(xb_, dim, t), dim); });
  }

  // Logits: of every token, or only of the last one.
  const int first = all_logits ? 0 : n - 1;
  for (int t = first; t < n; ++t) rmsnorm(row(x_, dim, t), row(x_, dim, t), w_.output_norm.f32(), dim, c.rms_eps);
  matmul(w_.output, row(x_, dim, first), n - first, logits_.data(), acts_, pool_);
  return logits_.data();
}

// For each token t of the batch (position p = pos + t):
// att_out[t, h] = Σ_{u<=p} softmax_u(q_{t,h} · k_u / √d) · v_u,
// with query head h reading key-value head h / (n_heads / n_kv_heads).
// Both products go through a float tiled kernel (gemm): the scores with the
// keys as rows and the queries as activations, the weighted sum with the
// value dimensions as rows (the value cache is stored transposed, so each is
// a contiguous row over positions) and the probabilities as activations.
// Each value is therefore a dot with the fixed 8-lane order, whatever the
// batch.
//
// Work is split by (kv head, tile of consecutive tokens), head-major; each is
// computed whole by one thread. A tile's queries (its tokens' heads of the
// group, up to kAttentionActs) are one gemm's activations, so the kv head's
// keys and values are read once per tile, not once per token. The tile's
// earlier tokens get scores for keys past their position too; those are not
// in their softmax and their probabilities are set to +0, which adds nothing
// to the weighted sum (+0·v is +0; an exact no-op on a non-negative-zero sum)
// while letting the whole tile share one product of length last + 1.
// Tiling took smollm2 q4_0's 512-token prompt natively from 1170 to 1235 tok/s
// with 1 thread, 1821 to 1922 with 2.
//
// Where f16 converts slowly (wasm) a thread first converts the kv head's
// cached keys and values to f32 (exactly) for all the batch's positions and
// runs the f32 kernel: the same bits as the f16 kernel on the cache, without
// converting each key again for every tile (512-token prompts in Node:
// TinyLlama q4_0 24.1 -> 27.3 tok/s, smollm2 q4_0 157 -> 186). One token,
// and native builds, read the f16 cache directly.
void Transformer::attention(int layer, int n, int pos) {
  const ModelConfig& c = config_;
  const int group = c.n_heads / c.n_kv_heads, head_dim = c.head_dim, kv_dim = c.kv_dim(), q_dim = c.q_dim();
  const int tile = attention_tile(c), tiles = (n + tile - 1) / tile;
  const int64_t group_floats = static_cast<int64_t>(group) * head_dim;  // one token's queries of the group
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  const TypeTraits& f16 = type_traits(TensorType::kF16);
  const TypeTraits& f32 = type_traits(TensorType::kF32);
  const uint16_t* keys = key_cache_.data() + static_cast<int64_t>(layer) * n_ctx_ * kv_dim;      // (n_ctx, kv_dim)
  const uint16_t* values = value_cache_.data() + static_cast<int64_t>(layer) * kv_dim * n_ctx_;  // (kv_dim, n_ctx)
  const int len = pos + n;  // the positions the batch reads
  const bool copies = n > 1 && !kv_f32_.empty();
  const int64_t copy_size = static_cast<int64_t>(kv_f32_.size()) / pool_.size();  // floats per thread
  const int64_t tile_floats = tile * group_floats;
  pool_.run([&](int ith, int nth) {
    float* att = att_.data() + ith * attention_tile_acts(c) * n_ctx_;              // (tile · group, n_ctx)
    float* tile_q = att_q_.data() + ith * 2 * tile_floats;                         // (tile · group, head_dim)
    float* tile_out = tile_q + tile_floats;                                        // (tile · group, head_dim)
    float* keys_f32 = kv_f32_.data() + ith * copy_size;                            // (len, head_dim)
    float* values_f32 = keys_f32 + copy_size / 2;                                  // (head_dim, len)
    int converted = -1;  // the kv head keys_f32 and values_f32 hold
    int64_t begin, end;
    split_range(static_cast<int64_t>(tiles) * c.n_kv_heads, ith, nth, &begin, &end);
    for (int64_t item = begin; item < end; ++item) {
      const int g = static_cast<int>(item / tiles), t0 = static_cast<int>(item % tiles) * tile;
      const int tokens = std::min(tile, n - t0), acts = tokens * group;
      const int last = pos + t0 + tokens - 1;  // the tile's last position
      const int64_t head0 = static_cast<int64_t>(g) * group_floats;  // the group's first query head
      const uint16_t* head_keys = keys + static_cast<int64_t>(g) * head_dim;
      const uint16_t* head_values = values + static_cast<int64_t>(g) * head_dim * n_ctx_;
      if (copies && converted != g) {
        for (int u = 0; u < len; ++u) {
          f16.to_float(head_keys + static_cast<int64_t>(u) * kv_dim, keys_f32 + static_cast<int64_t>(u) * head_dim,
                       head_dim);
        }
        for (int i = 0; i < head_dim; ++i) {
          f16.to_float(head_values + static_cast<int64_t>(i) * n_ctx_, values_f32 + static_cast<int64_t>(i) * len, len);
        }
        converted = g;
      }
      // The rows both products read: the f32 copies, or the cache itself.
      const TypeTraits& rows = copies ? f32 : f16;
      const void* key_rows = copies ? static_cast<const void*>(keys_f32) : head_keys;
      const void* value_rows = copies ? static_cast<const void*>(values_f32) : head_values;
      const int64_t key_stride = copies ? head_dim * 4 : kv_dim * 2;
      const int64_t value_stride = copies ? static_cast<int64_t>(len) * 4 : n_ctx_ * 2;
      // A token's queries of the group are contiguous; a tile of several
      // tokens gathers them into one block of rows (and scatters the output).
      const float* q = q_.data() + static_cast<int64_t>(t0) * q_dim + head0;
      float* out = att_out_.data() + static_cast<int64_t>(t0) * q_dim + head0;
      if (tokens > 1) {
        for (int t = 0; t < tokens; ++t) {
          std::copy_n(q + static_cast<int64_t>(t) * q_dim, group_floats, tile_q + t * group_floats);
        }
        q = tile_q;
      }
      float* result = tokens > 1 ? tile_out : out;
      // att[a, u] = q_a · k_u / √d, then softmax over u <= the position of a's token.
      gemm(rows, head_dim, key_rows, key_stride, last + 1, q, head_dim * 4, acts, att, n_ctx_);
      for (int a = 0; a < acts; ++a) {
        float* scores = att + static_cast<int64_t>(a) * n_ctx_;
        const int p = pos + t0 + a / group;
        softmax(scores, p + 1, scale);
        std::fill(scores + p + 1, scores + last + 1, 0.0f);
      }
      // result[a, i] = Σ_u att[a, u] · v_u[i]: row i of the transposed values.
      gemm(rows, last + 1, value_rows, value_stride, head_dim, att, n_ctx_ * 4, acts, result, head_dim);
      if (tokens > 1) {
        for (int t = 0; t < tokens; ++t) {
          std::copy_n(tile_out + t * group_floats, group_floats, out + static_cast<int64_t>(t) * q_dim);
        }
      }
    }
  });
}

}  // namespace wllm
