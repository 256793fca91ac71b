#include "model/forward.h"

#include <algorithm>

#include "core/math.h"
#include "model/architecture.h"

namespace wllm {
namespace {

bool has_conv_layers(const ModelConfig& c) {
  return std::any_of(c.layers.begin(), c.layers.end(), [](const LayerConfig& l) { return !l.attention; });
}

// Width of the short convolution's buffers (bch, then xc): 3·dim and dim, or none.
int64_t conv_width(const ModelConfig& c) { return has_conv_layers(c) ? c.dim : 0; }

// Floats per token of the Rows buffers, in the order Forward lays them out.
int64_t row_floats(const ModelConfig& c) {
  return 2 * c.dim + 2 * c.q_dim() + 2 * c.kv_dim() + 2 * c.ffn_dim + 4 * conv_width(c);
}

// RoPE tables a batch needs: the global one, and the local layers' own.
int rope_tables(const ModelConfig& c) { return c.rope_freq_base_local > 0 ? 2 : 1; }

int64_t activation_width(const ModelConfig& c) { return std::max({c.dim, c.q_dim(), c.ffn_dim}); }

// Positions the KV cache holds: none for an encoder, which attends within its batch.
int cache_positions(const ModelConfig& c, int n_ctx) { return c.encoder ? 0 : n_ctx; }

// Per-token ints of a pass (positions; an encoder's text bounds) and an
// encoder's transposed values.
int64_t int_rows(const ModelConfig& c) { return c.encoder ? 3 : 1; }
int64_t transposed_values(const ModelConfig& c) { return c.encoder ? c.kv_dim() : 0; }
// Logits per token: none for an encoder.
int64_t logit_floats(const ModelConfig& c) { return c.encoder ? 0 : c.n_vocab; }
// The global layers' frequency divisors: rope_freqs, else LongRoPE's long
// set for a context beyond the pretrained one and its short set otherwise
// (llama.cpp's get_rope_factors), else none.
const float* rope_factors(const ModelConfig& c, const ModelWeights& w, int n_ctx) {
  if (w.rope_freqs.present()) return w.rope_freqs.f32();
  if (w.rope_long.present()) return (n_ctx > c.rope_orig_ctx ? w.rope_long : w.rope_short).f32();
  return nullptr;
}

}  // namespace

Forward::Forward(const ModelConfig& c, const ModelWeights& w, int n_ctx, int max_batch, ThreadPool& pool)
    : config(c),
      weights(w),
      pool_(pool),
      max_batch_(max_batch),
      positions_(static_cast<size_t>(max_batch)),
      text_first_(static_cast<size_t>(c.encoder ? max_batch : 0)),
      text_end_(static_cast<size_t>(c.encoder ? max_batch : 0)),
      values_t_(static_cast<size_t>(max_batch * transposed_values(c))),
      cache_(c, cache_positions(c, n_ctx), max_batch),
      conv_(c, n_ctx),
      attention_(c, n_ctx, pool.size()),
      buffer_(static_cast<size_t>(max_batch * row_floats(c))),
      logits_(static_cast<size_t>(max_batch * logit_floats(c))),
      rope_cs_(static_cast<size_t>(max_batch) * c.rope_dims * rope_tables(c)),
      value_f16_(static_cast<size_t>(max_batch) * c.kv_dim()),
      acts_(activation_width(c), max_batch) {
  float* p = buffer_.data();
  const auto take = [&](int64_t width) {
    Rows r{p, width};
    p += max_batch * width;
    return r;
  };
  x = take(c.dim);
  xb = take(c.dim);
  q = take(c.q_dim());
  k = take(c.kv_dim());
  v = take(c.kv_dim());
  att = take(c.q_dim());
  hb = take(c.ffn_dim);
  hb2 = take(c.ffn_dim);
  bch = take(3 * conv_width(c));
  xc = take(conv_width(c));

  rope_global_.n_dims = c.rope_dims;
  rope_global_.freq_base = c.rope_freq_base;
  rope_global_.freq_scale = c.rope_freq_scale;
  rope_global_.neox = c.rope_neox;
  rope_global_.freq_factors = rope_factors(c, w, n_ctx);
  rope_global_.attn_factor = c.rope_attn_factor;
  rope_local_ = rope_global_;
  rope_local_.freq_base = c.rope_freq_base_local;
  rope_local_.freq_scale = c.rope_freq_scale_local;
  rope_local_.freq_factors = nullptr;
  sequence_.reserve(static_cast<size_t>(n_ctx));
}

int64_t Forward::buffer_bytes() const {
  const size_t floats = buffer_.size() + logits_.size() + rope_cs_.size() + values_t_.size();
  const size_t ints = positions_.size() + text_first_.size() + text_end_.size();
  return static_cast<int64_t>(floats * sizeof(float) + ints * sizeof(int32_t) + value_f16_.size() * sizeof(uint16_t)) +
         attention_.bytes() + acts_.bytes() + conv_.bytes();
}

int64_t Forward::plan_buffer_bytes(const ModelConfig& c, int n_ctx, int max_batch, int n_threads) {
  const int64_t per_token =
      row_floats(c) + logit_floats(c) + static_cast<int64_t>(c.rope_dims) * rope_tables(c) + transposed_values(c);
  const int64_t value_staging = max_batch * c.kv_dim() * static_cast<int64_t>(sizeof(uint16_t));
  return max_batch * (per_token * static_cast<int64_t>(sizeof(float)) + int_rows(c) * static_cast<int64_t>(sizeof(int32_t))) +
         value_staging + Attention::plan_bytes(c, n_ctx, n_threads) +
         ActivationCache::plan_bytes(activation_width(c), max_batch) + ConvState::plan_bytes(c, n_ctx);
}

int64_t Forward::plan_kv_cache_bytes(const ModelConfig& c, int n_ctx, int max_batch) {
  return KvCache::plan_bytes(c, cache_positions(c, n_ctx), max_batch);
}

int64_t Forward::rewind_point(int64_t p) const {
  const int64_t length = static_cast<int64_t>(sequence_.size());
  if (p >= length) return length;
  if (has_conv_layers(config)) p = conv_.rewind_point(p);
  return cache_.can_continue_at(p) ? p : 0;
}

void Forward::rewind(int64_t p) {
  if (p >= static_cast<int64_t>(sequence_.size())) return;
  sequence_.resize(static_cast<size_t>(p));
  cache_.continue_at(p);
  if (has_conv_layers(config)) conv_.rewind(p);
}

const float* Forward::run(const int32_t* batch_tokens, int n_tokens, int64_t batch_pos, bool all_logits) {
  return pass(batch_tokens, n_tokens, batch_pos, all_logits ? Want::kAllLogits : Want::kLastLogits);
}

const float* Forward::run_hidden(const int32_t* batch_tokens, int n_tokens, int64_t batch_pos) {
  return pass(batch_tokens, n_tokens, batch_pos, Want::kHidden);
}

const float* Forward::run_packed(const int32_t* batch_tokens, int n_tokens, const int32_t* text_lengths,
                                 int n_texts) {
  int t = 0;
  for (int i = 0; i < n_texts; ++i) {
    for (int j = 0; j < text_lengths[i]; ++j, ++t) {
      positions_[t] = j;
      text_first_[t] = t - j;
      text_end_[t] = t - j + text_lengths[i];
    }
  }
  packed_ = true;
  pass(batch_tokens, n_tokens, 0, Want::kHidden);
  packed_ = false;
  return x.data;
}

const float* Forward::pass(const int32_t* batch_tokens, int n_tokens, int64_t batch_pos, Want want) {
  // An encoder's packed texts have no cache; a decoder's pass continues its sequence.
  if (!packed_) rewind(batch_pos);
  tokens = batch_tokens;
  n = n_tokens;
  pos = batch_pos;
  want_ = want;
  if (!packed_) {
    for (int t = 0; t < n; ++t) positions_[t] = static_cast<int32_t>(pos + t);
  }
  const int dims = config.rope_dims;
  for (int t = 0; t < n; ++t) {
    rope_angles(rope_global_, positions_[t], &rope_cs_[static_cast<size_t>(t) * dims]);
    if (rope_tables(config) == 2) {
      rope_angles(rope_local_, positions_[t], &rope_cs_[static_cast<size_t>(max_batch_ + t) * dims]);
    }
  }
  config.arch->forward(*this);
  if (!packed_) {
    sequence_.insert(sequence_.end(), tokens, tokens + n);
    cache_.stored_up_to(pos + n);
  }
  return want == Want::kHidden ? x.data : logits_.data();
}

void Forward::embed(const Tensor& table, float scale) {
  for (int t = 0; t < n; ++t) {
    float* out = x.row(t);
    get_row(table, tokens[t], out);
    if (scale != 1.0f) {
      for (int64_t i = 0; i < x.width; ++i) out[i] *= scale;
    }
  }
}

void Forward::add_positions(const Tensor& table) {
  for_each_row(pool_, n, [&](int64_t t) {
    get_row(table, positions_[t], xb.row(t));
    add_to(x.row(t), xb.row(t), x.width);
  });
}

void Forward::add_row(const Tensor& table, int64_t row) {
  get_row(table, row, xb.row(0));
  for (int t = 0; t < n; ++t) add_to(x.row(t), xb.row(0), x.width);
}

void Forward::rmsnorm(Rows out, Rows in, const Tensor& w) {
  const int64_t dim = config.dim;
  const float eps = config.norm_eps;
  for_each_row(pool_, n, [&](int64_t t) { wllm::rmsnorm(out.row(t), in.row(t), w.f32(), dim, eps); });
}

void Forward::layernorm(Rows out, Rows in, const Tensor& w, const Tensor& b) {
  const int64_t dim = config.dim;
  const float eps = config.norm_eps;
  for_each_row(pool_, n, [&](int64_t t) { wllm::layernorm(out.row(t), in.row(t), w.f32(), b.f32(), dim, eps); });
}

void Forward::head_rmsnorm(Rows y, int n_heads, const Tensor& w) {
  const int head_dim = config.head_dim;
  const float eps = config.norm_eps;
  for_each_row(pool_, n, [&](int64_t t) {
    for (int h = 0; h < n_heads; ++h) {
      float* head = y.row(t) + static_cast<int64_t>(h) * head_dim;
      wllm::rmsnorm(head, head, w.f32(), head_dim, eps);
    }
  });
}

void Forward::matmul(const Tensor& w, Rows in, Rows out) { wllm::matmul(w, in.data, n, out.data, acts_, pool_); }

void Forward::qkv(const LayerWeights& L, Rows in) {
  const MatmulJob jobs[] = {{&L.wq, q.data}, {&L.wk, k.data}, {&L.wv, v.data}};
  matmul_shared(jobs, 3, in.data, n, acts_, pool_);
  if (!L.bq.present()) return;
  for_each_row(pool_, n, [&](int64_t t) {
    add_to(q.row(t), L.bq.f32(), L.bq.cols());
    add_to(k.row(t), L.bk.f32(), L.bk.cols());
    add_to(v.row(t), L.bv.f32(), L.bv.cols());
  });
}

void Forward::rope(int l) {
  const ModelConfig& c = config;
  const bool local = c.layers[l].window > 0 && rope_tables(c) == 2;
  const RopeParams& params = local ? rope_local_ : rope_global_;
  const float* tables = rope_cs_.data() + (local ? static_cast<int64_t>(max_batch_) * c.rope_dims : 0);
  for_each_row(pool_, n, [&](int64_t t) {
    const float* cs = tables + t * c.rope_dims;
    rope_apply(params, cs, q.row(t), c.n_heads, c.head_dim);
    rope_apply(params, cs, k.row(t), c.layers[l].n_kv_heads, c.head_dim);
  });
}

void Forward::matmul2(const Tensor& w1, Rows out1, const Tensor& w2, Rows out2, Rows in) {
  const MatmulJob jobs[] = {{&w1, out1.data}, {&w2, out2.data}};
  matmul_shared(jobs, 2, in.data, n, acts_, pool_);
}

void Forward::attention(int l) {
  AttentionParams p;
  p.scale = config.query_scale();
  p.softcap = config.attn_softcap;
  p.window = config.layers[l].window;
  attention(l, p);
}

void Forward::attention(int l, const AttentionParams& params) {
  const int64_t kv_dim = config.layer_kv_dim(l);
  if (packed_) {
    // Each value dimension's row over the batch's tokens.
    for_each_row(pool_, kv_dim, [&](int64_t i) {
      float* row = values_t_.data() + i * max_batch_;
      for (int t = 0; t < n; ++t) row[t] = v.row(t)[i];
    });
    attention_.run_packed(l, q.data, k.data, values_t_.data(), max_batch_, n, text_first_.data(), text_end_.data(),
                          config.causal, params, att.data, pool_);
    return;
  }
  for_each_row(pool_, n, [&](int64_t t) {
    cache_.store(l, pos + t, k.row(t), v.row(t), value_f16_.data() + t * kv_dim);
  });
  attention_.run(cache_, l, q.data, n, pos, params, att.data, pool_);
}

void Forward::short_conv(int l, const Tensor& w) {
  const int64_t dim = config.dim;
  const int taps = conv_.taps();
  if (pos == 0) conv_.clear(l);  // a new sequence
  // b ⊙ h, in place of b: the convolution's input at each position.
  for_each_row(pool_, n, [&](int64_t t) { mul_to(bch.row(t), bch.row(t) + 2 * dim, dim); });
  // Each channel's taps in order, from the oldest position (as ggml's
  // ssm_conv sums them), then the gate c.
  for_each_row(pool_, n, [&](int64_t t) {
    float* out = xc.row(t);
    std::fill(out, out + dim, 0.0f);
    for (int j = 0; j < taps; ++j) {
      const int64_t u = t - (taps - 1) + j;  // the input's token in the batch; < 0: an earlier pass's
      const float* in = u >= 0 ? bch.row(u) : conv_.rows(l) + (u + taps - 1) * dim;
      add_tap(out, in, w.f32() + j, taps, dim);
    }
    mul_to(out, bch.row(t) + dim, dim);
  });
  conv_.push(l, pos, bch.data, bch.width, n);
}

void Forward::add(Rows y, Rows from, float scale) {
  const int64_t dim = config.dim;
  for_each_row(pool_, n, [&](int64_t t) {
    float* out = y.row(t);
    const float* in = from.row(t);
    if (scale == 1.0f) {
      add_to(out, in, dim);
    } else {
      for (int64_t i = 0; i < dim; ++i) out[i] += in[i] * scale;
    }
  });
}

void Forward::add_bias(Rows y, const Tensor& b) {
  if (!b.present()) return;  // an optional bias the file does not have
  for_each_row(pool_, n, [&](int64_t t) { add_to(y.row(t), b.f32(), b.cols()); });
}

void Forward::gated_ffn(const LayerWeights& L, Gate gate) { gated_ffn(L, gate, xb, xb); }

void Forward::gated_ffn(const LayerWeights& L, Gate gate, Rows in, Rows out) {
  const int64_t width = config.ffn_dim;
  matmul2(L.w_gate, hb, L.w_up, hb2, in);  // hb, hb2 = W_gate·in, W_up·in
  add_bias(hb, L.b_gate);
  add_bias(hb2, L.b_up);
  for_each_row(pool_, n, [&](int64_t t) {  // hb = act(hb) ⊙ hb2
    if (gate == Gate::kSilu) {
      wllm::swiglu(hb.row(t), hb2.row(t), width);
    } else {
      wllm::geglu(hb.row(t), hb2.row(t), width);
    }
  });
  matmul(L.w_down, hb, out);  // out = W_down·hb
  add_bias(out, L.b_down);
}

void Forward::gelu(Rows y, int64_t width) {
  for_each_row(pool_, n, [&](int64_t t) { wllm::gelu(y.row(t), width); });
}

void Forward::output(const Tensor& norm, const Tensor& w_out) {
  for (int t = first_output(); t < n; ++t) wllm::rmsnorm(x.row(t), x.row(t), norm.f32(), config.dim, config.norm_eps);
  logits(w_out);
}

void Forward::output(const Tensor& norm, const Tensor& norm_bias, const Tensor& w_out) {
  for (int t = first_output(); t < n; ++t) {
    wllm::layernorm(x.row(t), x.row(t), norm.f32(), norm_bias.f32(), config.dim, config.norm_eps);
  }
  logits(w_out);
}

void Forward::logits(const Tensor& w_out) {
  if (want_ == Want::kHidden) return;
  const int first = first_output();
  wllm::matmul(w_out, x.row(first), n - first, logits_.data(), acts_, pool_);
}

void Forward::cap_logits(float cap) {
  if (want_ == Want::kHidden) return;
  const int first = first_output();
  const int64_t count = static_cast<int64_t>(n - first) * config.n_vocab;
  const float inv_cap = 1.0f / cap;  // a multiplication, as llama.cpp
  for (int64_t i = 0; i < count; ++i) logits_[i] = cap * tanh_f32(logits_[i] * inv_cap);
}

void Forward::scale_logits(float scale) {
  if (want_ == Want::kHidden) return;
  const int first = first_output();
  const int64_t count = static_cast<int64_t>(n - first) * config.n_vocab;
  const float inv_scale = 1.0f / scale;  // a multiplication, as llama.cpp
  for (int64_t i = 0; i < count; ++i) logits_[i] *= inv_scale;
}

}  // namespace wllm
