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
  att_.resize(static_cast<size_t>(pool.size()) * (c.n_heads / c.n_kv_heads) * n_ctx);
  kv_f32_.resize(static_cast<size_t>(pool.size() * copy_floats(c, n_ctx)));
  hb_.resize(B * c.ffn_dim);
  hb2_.resize(B * c.ffn_dim);
  logits_.resize(B * c.n_vocab);
  rope_cs_.resize(B * c.rope_dims);
  value_f16_.resize(c.kv_dim());
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
  const int64_t per_thread = static_cast<int64_t>(c.n_heads / c.n_kv_heads) * n_ctx + copy_floats(c, n_ctx);
  const int64_t floats = kMaxBatch * per_token + static_cast<int64_t>(n_threads) * per_thread;
  return floats * static_cast<int64_t>(sizeof(float)) + c.kv_dim() * static_cast<int64_t>(sizeof(uint16_t)) +
         ActivationCache::plan_bytes(std::max({c.dim, c.q_dim(), c.ffn_dim}), kMaxBatch);
}

int64_t Transformer::kv_cache_bytes() const {
  return static_cast<int64_t>(key_cache_.size() + value_cache_.size()) * sizeof(uint16_t);
}

int64_t Transformer::buffer_bytes() const {
  const size_t floats = x_.size() + xb_.size() + q_.size() + k_.size() + v_.size() + att_out_.size() + att_.size() +
                        kv_f32_.size() + hb_.size() + hb2_.size() + logits_.size() + rope_cs_.size();
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
    for (int t = 0; t < n; ++t) rmsnorm(row(xb_, dim, t), row(x_, dim, t), L.attn_norm.f32(), dim, c.rms_eps);
    const MatmulJob qkv[] = {{&L.wq, q_.data()}, {&L.wk, k_.data()}, {&L.wv, v_.data()}};
    matmul_shared(qkv, 3, xb_.data(), n, acts_, pool_);
    for (int t = 0; t < n; ++t) {
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
      f16.from_float(v, value_f16_.data(), kv_dim);
      uint16_t* value_column = value_cache_.data() + static_cast<int64_t>(l) * kv_dim * n_ctx_ + pos + t;
      for (int i = 0; i < kv_dim; ++i) value_column[static_cast<int64_t>(i) * n_ctx_] = value_f16_[i];
    }
    attention(l, n, pos);
    matmul(L.wo, att_out_.data(), n, xb_.data(), acts_, pool_);
    for (int t = 0; t < n; ++t) add_to(row(x_, dim, t), row(xb_, dim, t), dim);

    // Feed-forward block: x = x + W_down · (silu(W_gate·xn) ⊙ (W_up·xn))
    for (int t = 0; t < n; ++t) rmsnorm(row(xb_, dim, t), row(x_, dim, t), L.ffn_norm.f32(), dim, c.rms_eps);
    const MatmulJob gate_up[] = {{&L.w_gate, hb_.data()}, {&L.w_up, hb2_.data()}};
    matmul_shared(gate_up, 2, xb_.data(), n, acts_, pool_);
    swiglu(hb_.data(), hb2_.data(), static_cast<int64_t>(n) * ffn);
    matmul(L.w_down, hb_.data(), n, xb_.data(), acts_, pool_);
    for (int t = 0; t < n; ++t) add_to(row(x_, dim, t), row(xb_, dim, t), dim);
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
// keys as rows and the group's query heads as activations, the weighted sum
// with the value dimensions as rows (the value cache is stored transposed,
// so each is a contiguous row over positions) and the group's
// probabilities as activations. Each value is therefore a dot with the fixed
// 8-lane order, whatever the batch. Work is split by (kv head, token) pairs,
// head-major; each is computed whole by one thread.
//
// A batch reads each kv head's cached keys and values once per token. Where
// f16 converts slowly (wasm) a thread first converts them to f32 (exactly)
// for all the batch's positions and runs the f32 kernel: the same bits as
// the f16 kernel on the cache, without converting each key again for every
// token (512-token prompts in Node: TinyLlama q4_0 24.1 -> 27.3 tok/s,
// smollm2 q4_0 157 -> 186). One token, and native builds, read the f16 cache
// directly.
void Transformer::attention(int layer, int n, int pos) {
  const ModelConfig& c = config_;
  const int group = c.n_heads / c.n_kv_heads, head_dim = c.head_dim, kv_dim = c.kv_dim();
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  const TypeTraits& f16 = type_traits(TensorType::kF16);
  const TypeTraits& f32 = type_traits(TensorType::kF32);
  const uint16_t* keys = key_cache_.data() + static_cast<int64_t>(layer) * n_ctx_ * kv_dim;      // (n_ctx, kv_dim)
  const uint16_t* values = value_cache_.data() + static_cast<int64_t>(layer) * kv_dim * n_ctx_;  // (kv_dim, n_ctx)
  const int len = pos + n;  // the positions the batch reads
  const bool copies = n > 1 && !kv_f32_.empty();
  const int64_t copy_size = static_cast<int64_t>(kv_f32_.size()) / pool_.size();  // floats per thread
  pool_.run([&](int ith, int nth) {
    float* att = att_.data() + static_cast<int64_t>(ith) * group * n_ctx_;  // (group, n_ctx)
    float* keys_f32 = kv_f32_.data() + ith * copy_size;                      // (len, head_dim)
    float* values_f32 = keys_f32 + copy_size / 2;                           // (head_dim, len)
    int converted = -1;  // the kv head keys_f32 and values_f32 hold
    int64_t begin, end;
    split_range(static_cast<int64_t>(n) * c.n_kv_heads, ith, nth, &begin, &end);
    for (int64_t item = begin; item < end; ++item) {
      const int g = static_cast<int>(item / n), t = static_cast<int>(item % n);
      const int p = pos + t;
      const int64_t head0 = static_cast<int64_t>(g) * group * head_dim;  // the group's first query head
      const float* q = q_.data() + static_cast<int64_t>(t) * c.q_dim() + head0;
      float* out = att_out_.data() + static_cast<int64_t>(t) * c.q_dim() + head0;
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
      // att[h, u] = q_h · k_u / √d, then softmax over u <= p.
      gemm(rows, head_dim, key_rows, key_stride, p + 1, q, head_dim * 4, group, att, n_ctx_);
      for (int h = 0; h < group; ++h) softmax(att + static_cast<int64_t>(h) * n_ctx_, p + 1, scale);
      // out[h, i] = Σ_u att[h, u] · v_u[i]: row i of the transposed values.
      gemm(rows, p + 1, value_rows, value_stride, head_dim, att, n_ctx_ * 4, group, out, head_dim);
    }
  });
}

}  // namespace wllm
