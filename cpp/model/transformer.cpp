#include "model/transformer.h"

#include <algorithm>
#include <cmath>

#include "core/half.h"

namespace wllm {

Transformer::Transformer(const ModelConfig& c, const ModelWeights& w, int n_ctx, ThreadPool& pool)
    : config_(c), w_(w), n_ctx_(n_ctx), pool_(pool) {
  rope_.n_dims = c.rope_dims;
  rope_.freq_base = c.rope_freq_base;
  rope_.freq_scale = c.rope_freq_scale;
  rope_.neox = c.rope_neox;
  rope_.freq_factors = w.rope_freqs.present() ? w.rope_freqs.f32() : nullptr;

  const int64_t kv_size = static_cast<int64_t>(c.n_layers) * n_ctx * c.kv_dim();
  x_.resize(c.dim);
  xb_.resize(std::max(c.dim, c.q_dim()));
  q_.resize(c.q_dim());
  k_.resize(c.kv_dim());
  v_.resize(c.kv_dim());
  att_out_.resize(c.q_dim());
  att_.resize(static_cast<size_t>(pool.size()) * n_ctx);
  hb_.resize(c.ffn_dim);
  hb2_.resize(c.ffn_dim);
  logits_.resize(c.n_vocab);
  rope_cs_.resize(c.rope_dims);
  k_row_.resize(static_cast<size_t>(pool.size()) * c.head_dim);
  acts_ = ActivationCache(std::max({c.dim, c.q_dim(), c.ffn_dim}));
  key_cache_.resize(kv_size);
  value_cache_.resize(kv_size);
}

int64_t Transformer::plan_kv_cache_bytes(const ModelConfig& c, int n_ctx) {
  return 2 * static_cast<int64_t>(c.n_layers) * n_ctx * c.kv_dim() * static_cast<int64_t>(sizeof(uint16_t));
}

int64_t Transformer::plan_buffer_bytes(const ModelConfig& c, int n_ctx, int n_threads) {
  const int64_t floats = c.dim + std::max(c.dim, c.q_dim()) + 2 * c.q_dim() + 2 * c.kv_dim() +
                         static_cast<int64_t>(n_threads) * (n_ctx + c.head_dim) + 2 * c.ffn_dim + c.n_vocab +
                         c.rope_dims;
  return floats * static_cast<int64_t>(sizeof(float)) + ActivationCache::plan_bytes(std::max({c.dim, c.q_dim(), c.ffn_dim}));
}

int64_t Transformer::kv_cache_bytes() const {
  return static_cast<int64_t>(key_cache_.size() + value_cache_.size()) * sizeof(uint16_t);
}

int64_t Transformer::buffer_bytes() const {
  const size_t floats = x_.size() + xb_.size() + q_.size() + k_.size() + v_.size() + att_out_.size() + att_.size() +
                        hb_.size() + hb2_.size() + logits_.size() + rope_cs_.size() + k_row_.size();
  return static_cast<int64_t>(floats * sizeof(float)) + acts_.bytes();
}

const float* Transformer::forward(int32_t token, int pos) {
  const ModelConfig& c = config_;
  get_row(w_.token_embd, token, x_.data());
  rope_angles(rope_, pos, rope_cs_.data());

  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& L = w_.layers[l];

    // Attention block: h = x + Wo · attention(rope(Wq·xn), rope(Wk·xn), Wv·xn)
    rmsnorm(xb_.data(), x_.data(), L.attn_norm.f32(), c.dim, c.rms_eps);
    matvec(L.wq, xb_.data(), q_.data(), acts_, pool_);
    matvec(L.wk, xb_.data(), k_.data(), acts_, pool_);
    matvec(L.wv, xb_.data(), v_.data(), acts_, pool_);
    if (L.bq.present()) {
      add_to(q_.data(), L.bq.f32(), c.q_dim());
      add_to(k_.data(), L.bk.f32(), c.kv_dim());
      add_to(v_.data(), L.bv.f32(), c.kv_dim());
    }
    rope_apply(rope_, rope_cs_.data(), q_.data(), c.n_heads, c.head_dim);
    rope_apply(rope_, rope_cs_.data(), k_.data(), c.n_kv_heads, c.head_dim);

    // Store this position's key and value in the cache (f16).
    const int64_t slot = (static_cast<int64_t>(l) * n_ctx_ + pos) * c.kv_dim();
    for (int i = 0; i < c.kv_dim(); ++i) {
      key_cache_[slot + i] = f32_to_f16(k_[i]);
      value_cache_[slot + i] = f32_to_f16(v_[i]);
    }
    attention(l, pos);
    matvec(L.wo, att_out_.data(), xb_.data(), acts_, pool_);
    add_to(x_.data(), xb_.data(), c.dim);

    // Feed-forward block: x = x + W_down · (silu(W_gate·xn) ⊙ (W_up·xn))
    rmsnorm(xb_.data(), x_.data(), L.ffn_norm.f32(), c.dim, c.rms_eps);
    matvec(L.w_gate, xb_.data(), hb_.data(), acts_, pool_);
    matvec(L.w_up, xb_.data(), hb2_.data(), acts_, pool_);
    swiglu(hb_.data(), hb2_.data(), c.ffn_dim);
    matvec(L.w_down, hb_.data(), xb_.data(), acts_, pool_);
    add_to(x_.data(), xb_.data(), c.dim);
  }

  rmsnorm(x_.data(), x_.data(), w_.output_norm.f32(), c.dim, c.rms_eps);
  matvec(w_.output, x_.data(), logits_.data(), acts_, pool_);
  return logits_.data();
}

// att_out[h] = Σ_t softmax_t(q_h · k_t / √d) · v_t over positions t <= pos,
// with query head h reading key-value head h / (n_heads / n_kv_heads).
void Transformer::attention(int layer, int pos) {
  const ModelConfig& c = config_;
  const int group = c.n_heads / c.n_kv_heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  const int64_t layer_base = static_cast<int64_t>(layer) * n_ctx_ * c.kv_dim();
  pool_.run([&](int ith, int nth) {
    float* att = att_.data() + static_cast<int64_t>(ith) * n_ctx_;
    float* k_row = k_row_.data() + static_cast<int64_t>(ith) * c.head_dim;
    int64_t begin, end;
    split_range(c.n_heads, ith, nth, &begin, &end);
    for (int64_t h = begin; h < end; ++h) {
      const float* q = q_.data() + h * c.head_dim;
      const int64_t kv_off = (h / group) * c.head_dim;
      for (int t = 0; t <= pos; ++t) {
        const uint16_t* k = key_cache_.data() + layer_base + static_cast<int64_t>(t) * c.kv_dim() + kv_off;
        for (int i = 0; i < c.head_dim; ++i) k_row[i] = f16_to_f32(k[i]);
        att[t] = dot_f32(q, k_row, c.head_dim) * scale;
      }
      softmax(att, pos + 1);
      float* out = att_out_.data() + h * c.head_dim;
      std::fill(out, out + c.head_dim, 0.0f);
      for (int t = 0; t <= pos; ++t) {
        const uint16_t* v = value_cache_.data() + layer_base + static_cast<int64_t>(t) * c.kv_dim() + kv_off;
        const float p = att[t];
        for (int i = 0; i < c.head_dim; ++i) out[i] += p * f16_to_f32(v[i]);
      }
    }
  });
}

}  // namespace wllm
