// The numeric operations of a transformer forward pass. Each states its math
// in one line. All are deterministic: fixed summation order, no FMA, own exp,
// so every build (x86, ARM, wasm) computes the same bits.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/tensor.h"
#include "runtime/thread_pool.h"

namespace wllm {

// Σ a[i]·b[i] over n floats with the engine's fixed 8-lane order.
float dot_f32(const float* a, const float* b, int64_t n);

// out = x / sqrt(mean(x²) + eps) · w        (w may be null: no gain)
void rmsnorm(float* out, const float* x, const float* w, int64_t n, float eps);

// out = (x − mean(x)) / sqrt(mean((x − mean(x))²) + eps) · w + b   (LayerNorm)
void layernorm(float* out, const float* x, const float* w, const float* b, int64_t n, float eps);

// x = softmax(x · scale) in place, over n >= 1 values.
void softmax(float* x, int64_t n, float scale = 1.0f);

// gate = silu(gate) · up, elementwise over n values (SwiGLU).
void swiglu(float* gate, const float* up, int64_t n);

// gate = gelu(gate) · up, elementwise over n values (GeGLU), with
// gelu(x) = x/2·(1 + tanh(√(2/π)·(x + 0.044715·x³))) as llama.cpp's CPU
// backend computes it: x rounded to f16, the result rounded to f16 (its
// 65536-entry table), 0 at or below -10 and x at or above 10.
void geglu(float* gate, const float* up, int64_t n);
float gelu_f16_rounded(float x);
// x = gelu(x), elementwise over n values (the same GELU).
void gelu(float* x, int64_t n);

// y += x over n values.
void add_to(float* y, const float* x, int64_t n);
// y = y ⊙ x over n values.
void mul_to(float* y, const float* x, int64_t n);
// y[i] += x[i] · w[i·stride] over n values: one tap of a depthwise
// convolution whose taps are stored per channel (w: that tap of channel 0).
void add_tap(float* y, const float* x, const float* w, int64_t stride, int64_t n);

// Converts activation vectors to the formats weights dot against, once per
// product, into buffers allocated up front (nothing allocates per token).
class ActivationCache {
 public:
  // Sizes the buffers for up to max_rows vectors of up to max_cols floats.
  explicit ActivationCache(int64_t max_cols = 0, int64_t max_rows = 1);
  // Rows x[t·n .. t·n+n) for t < n_rows converted to the weight's act_type
  // (F32: x itself), each row `*stride` bytes after the previous one, the
  // rows split across the pool's threads. Valid until the next call.
  const uint8_t* convert(const float* x, int64_t n, int64_t n_rows, const TypeTraits& weight, int64_t* stride,
                         ThreadPool& pool);
  int64_t bytes() const { return static_cast<int64_t>(buffer_.size()); }
  // Every activation format takes under 1.25 bytes per element (Q8_K: 292 per 256).
  static int64_t plan_bytes(int64_t max_cols, int64_t max_rows) { return max_rows * (max_cols * 5 / 4 + 64); }

 private:
  std::vector<uint8_t> buffer_;
};

// out[r] = W[r,:] · x for every row r of w (w.cols() == length of x);
// rows are split across the pool, each computed whole by one thread.
void matvec(const Tensor& w, const float* x, float* out, ActivationCache& acts, ThreadPool& pool);
// The same for n_rows vectors at once (x and out row-major: x[t·cols + i],
// out[t·rows + r]). Each weight row is read once for all of them, and every
// out value is the same dot matvec computes, bit for bit.
void matmul(const Tensor& w, const float* x, int64_t n_rows, float* out, ActivationCache& acts, ThreadPool& pool);

// One product of several that share their input: out = W·x (layout as matmul).
struct MatmulJob {
  const Tensor* w;
  float* out;
};
// matmul for each job, with the input converted once (when the weights take
// the same activation format) and the rows of all the weights split across
// the threads in one pass: fewer conversions and thread hand-offs for
// Q/K/V and gate/up. Each value is the one matmul computes.
void matmul_shared(const MatmulJob* jobs, int n_jobs, const float* x, int64_t n_rows, ActivationCache& acts,
                   ThreadPool& pool);

// Dequantizes row `r` of w into out (w.cols() floats): embedding lookup.
// A repacked w (a tied token_embd) has the row's group unpacked for it.
void get_row(const Tensor& w, int64_t r, float* out);

// Rotary position embedding. cos/sin tables for one position are built once
// per token (rope_angles) and applied to every head.
struct RopeParams {
  int n_dims = 0;            // leading dims of each head that rotate
  float freq_base = 10000.f;
  float freq_scale = 1.f;    // 1 / linear scaling factor
  bool neox = false;         // pairs (i, i+n/2) instead of (2i, 2i+1)
  const float* freq_factors = nullptr;  // rope_freqs tensor (n_dims/2), or null
  float attn_factor = 1.f;   // magnitude: cos and sin are multiplied by it (LongRoPE)
};
// cos_sin[2i], cos_sin[2i+1] = m·cos θ_i, m·sin θ_i with θ_i = pos·scale·base^(-2i/n)/factor_i
// and m the attn_factor.
void rope_angles(const RopeParams& p, int64_t pos, float* cos_sin);
// Rotates n_heads heads of head_dim floats each, in place.
void rope_apply(const RopeParams& p, const float* cos_sin, float* x, int n_heads, int head_dim);

}  // namespace wllm
