#include "ops/ops.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/math.h"
#include "quant/kernels.h"

namespace wllm {

float dot_f32(const float* a, const float* b, int64_t n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t i = 0; i < n; ++i) acc[i & 7] += a[i] * b[i];
  return sum_lanes8(acc);
}

void rmsnorm(float* out, const float* x, const float* w, int64_t n, float eps) {
  const float mean = dot_f32(x, x, n) / static_cast<float>(n);
  const float scale = 1.0f / std::sqrt(mean + eps);  // sqrt is exact (IEEE) everywhere
  if (w) {
    for (int64_t i = 0; i < n; ++i) out[i] = (x[i] * scale) * w[i];
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = x[i] * scale;
  }
}

void layernorm(float* out, const float* x, const float* w, const float* b, int64_t n, float eps) {
  // As ggml's norm: the centred values first, then their mean square (in
  // the engine's fixed 8-lane order), then the gain and the bias.
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t i = 0; i < n; ++i) acc[i & 7] += x[i];
  const float mean = sum_lanes8(acc) / static_cast<float>(n);
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] - mean;
  const float variance = dot_f32(out, out, n) / static_cast<float>(n);
  const float scale = 1.0f / std::sqrt(variance + eps);
  for (int64_t i = 0; i < n; ++i) out[i] = (out[i] * scale) * w[i] + b[i];
}

void softmax(float* x, int64_t n, float scale) { math_kernels().softmax(x, n, scale); }

void swiglu(float* gate, const float* up, int64_t n) {
  math_kernels().swiglu(gate, up, n);
}

namespace {

// GELU of every f16 value h, rounded to f16 (as ggml's table), as floats:
// computed once, then read by the f16 bits of a rounded input (a tanh per
// element made GELU a large share of GPT-2's prefill).
const float* gelu_table() {
  static const std::vector<float> table = [] {
    constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
    constexpr float kCoefA = 0.044715f;
    std::vector<float> t(1 << 16);
    for (uint32_t bits = 0; bits < t.size(); ++bits) {
      const float h = f16_to_f32(static_cast<uint16_t>(bits));
      const float g = 0.5f * h * (1.0f + tanh_f32(kSqrt2OverPi * h * (1.0f + kCoefA * h * h)));
      t[bits] = f16_to_f32(f32_to_f16(g));
    }
    return t;
  }();
  return table.data();
}

// f32_to_f16(x) for |x| < 65504, without branches: a normal half drops 13
// mantissa bits, rounding to nearest even, and rebiases the exponent; below
// 2^-14, adding 0.5 rounds x to the subnormal step 2^-24 (the ulp of 0.5),
// and the sum's mantissa is the half's.
inline uint32_t f16_bits_of(float x) {
  const uint32_t bits = f32_bits(x);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t abs = bits & 0x7fffffffu;
  const uint32_t normal = (abs - (112u << 23) + 0xfffu + ((abs >> 13) & 1u)) >> 13;
  const uint32_t subnormal = f32_bits(f32_from_bits(abs) + 0.5f) - f32_bits(0.5f);
  return sign | (abs < 0x38800000u ? subnormal : normal);
}

// ggml's GELU: 0 at or below -10, x at or above 10 (and NaN stays NaN).
inline float gelu_from(const float* table, float x) {
  if ((f32_bits(x) & 0x7fffffffu) < f32_bits(10.0f)) return table[f16_bits_of(x)];
  return x <= -10.0f ? 0.0f : x;
}

}  // namespace

float gelu_f16_rounded(float x) { return gelu_from(gelu_table(), x); }

void geglu(float* gate, const float* up, int64_t n) {
  const float* table = gelu_table();
  for (int64_t i = 0; i < n; ++i) gate[i] = gelu_from(table, gate[i]) * up[i];
}

void gelu(float* x, int64_t n) {
  const float* table = gelu_table();
  for (int64_t i = 0; i < n; ++i) x[i] = gelu_from(table, x[i]);
}

void add_to(float* y, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

void mul_to(float* y, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] *= x[i];
}

void add_tap(float* y, const float* x, const float* w, int64_t stride, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += x[i] * w[i * stride];
}

ActivationCache::ActivationCache(int64_t max_cols, int64_t max_rows)
    : buffer_(static_cast<size_t>(plan_bytes(max_cols, max_rows))) {}

const uint8_t* ActivationCache::convert(const float* x, int64_t n, int64_t n_rows, const TypeTraits& weight,
                                        int64_t* stride, ThreadPool& pool) {
  if (weight.act_type == TensorType::kF32) {
    *stride = n * static_cast<int64_t>(sizeof(float));
    return reinterpret_cast<const uint8_t*>(x);
  }
  const TypeTraits& act = type_traits(weight.act_type);
  *stride = row_bytes(act, n);
  const int64_t row_stride = *stride;
  uint8_t* out = buffer_.data();
  for_each_row(pool, n_rows, [&](int64_t t) { act.from_float(x + t * n, out + t * row_stride, n); });
  return out;
}

void matvec(const Tensor& w, const float* x, float* out, ActivationCache& acts, ThreadPool& pool) {
  matmul(w, x, 1, out, acts, pool);
}

void matmul(const Tensor& w, const float* x, int64_t n_rows, float* out, ActivationCache& acts, ThreadPool& pool) {
  const MatmulJob job{&w, out};
  matmul_shared(&job, 1, x, n_rows, acts, pool);
}

void matmul_shared(const MatmulJob* jobs, int n_jobs, const float* x, int64_t n_rows, ActivationCache& acts,
                   ThreadPool& pool) {
  const TypeTraits& first = *jobs[0].w->traits;
  // Threads split the stacked rows in whole groups when a weight is repacked
  // (a group of R rows is read together), so every job of several must be
  // whole groups; one job's last rows may be fewer (those are not repacked).
  int64_t group = 1;
  for (int j = 0; j < n_jobs; ++j) {
    if (jobs[j].w->repacked) group = std::max<int64_t>(group, jobs[j].w->repacked->rows);
  }
  for (int j = 0; j < n_jobs && n_jobs > 1; ++j) {
    if (jobs[j].w->traits->act_type != first.act_type || jobs[j].w->cols() != jobs[0].w->cols() ||
        jobs[j].w->rows() % group != 0) {
      for (int k = 0; k < n_jobs; ++k) matmul_shared(jobs + k, 1, x, n_rows, acts, pool);  // formats differ
      return;
    }
  }
  const int64_t n = jobs[0].w->cols();
  int64_t act_stride = 0;
  const uint8_t* act = acts.convert(x, n, n_rows, first, &act_stride, pool);
  int64_t total_rows = 0;
  for (int j = 0; j < n_jobs; ++j) total_rows += jobs[j].w->rows();
  pool.run([&](int ith, int nth) {
    // This thread's rows of all the weights, stacked in job order.
    int64_t begin, end;
    split_range((total_rows + group - 1) / group, ith, nth, &begin, &end);
    begin *= group;
    end = std::min(end * group, total_rows);
    int64_t job_first_row = 0;
    for (int j = 0; j < n_jobs && begin < end; ++j) {
      const Tensor& w = *jobs[j].w;
      const int64_t rows = w.rows(), stride = w.row_size();
      const int64_t lo = std::max(begin, job_first_row) - job_first_row;
      const int64_t hi = std::min(end, job_first_row + rows) - job_first_row;
      job_first_row += rows;
      if (lo >= hi) continue;
      float* out = jobs[j].out;
      // Rows [lo, mid) are repacked, [mid, hi) in the file's layout.
      const int64_t mid = std::clamp(w.repacked_rows, lo, hi);
      if (lo < mid) {
        if (n_rows == 1) {
          w.repacked->matvec(n, w.row(lo), stride, static_cast<int>(mid - lo), act, out + lo);
        } else {
          w.repacked->gemm(n, w.row(lo), stride, static_cast<int>(mid - lo), act, act_stride,
                           static_cast<int>(n_rows), out + lo, rows);
        }
      }
      if (mid == hi) continue;
      if (n_rows == 1) {  // decode: several rows at a time against the one activation
        matvec_rows(*w.traits, n, w.row(mid), stride, static_cast<int>(hi - mid), act, out + mid);
        continue;
      }
      // A batch: the tiled kernel decodes each weight block once for several tokens.
      gemm(*w.traits, n, w.row(mid), stride, static_cast<int>(hi - mid), act, act_stride,
           static_cast<int>(n_rows), out + mid, rows);
    }
  });
}

void get_row(const Tensor& w, int64_t r, float* out) {
  if (r >= w.repacked_rows) {
    w.traits->to_float(w.row(r), out, w.cols());
    return;
  }
  // Rows repacked at load are interleaved in groups (repack.h): unpack a copy of row r's group.
  const int64_t group = w.repacked->rows, first = r / group * group;
  std::vector<uint8_t> rows(w.row(first), w.row(first + group));
  w.repacked->unpack(rows.data(), w.cols(), group);
  w.traits->to_float(rows.data() + (r - first) * w.row_size(), out, w.cols());
}

void rope_angles(const RopeParams& p, int64_t pos, float* cos_sin) {
  // As ggml's rope cache: θ starts at pos and is multiplied by base^(-2/n)
  // per pair, in float, so the angles match llama.cpp's bit for bit.
  const float theta_scale = static_cast<float>(pow_f64(p.freq_base, static_cast<double>(-2.0f / p.n_dims)));
  float theta = static_cast<float>(pos);
  for (int i = 0; i < p.n_dims / 2; ++i) {
    const float factor = p.freq_factors ? p.freq_factors[i] : 1.0f;
    const float angle = p.freq_scale * (theta / factor);
    cos_sin[2 * i] = static_cast<float>(cos_f64(angle)) * p.attn_factor;
    cos_sin[2 * i + 1] = static_cast<float>(sin_f64(angle)) * p.attn_factor;
    theta *= theta_scale;
  }
}

void rope_apply(const RopeParams& p, const float* cos_sin, float* x, int n_heads, int head_dim) {
  const int half = p.n_dims / 2;
  for (int h = 0; h < n_heads; ++h) {
    float* v = x + static_cast<int64_t>(h) * head_dim;
    for (int i = 0; i < half; ++i) {
      const float c = cos_sin[2 * i], s = cos_sin[2 * i + 1];
      // NeoX rotates element i with i + n/2; the original layout rotates 2i with 2i+1.
      const int a = p.neox ? i : 2 * i;
      const int b = p.neox ? i + half : 2 * i + 1;
      const float x0 = v[a], x1 = v[b];
      v[a] = x0 * c - x1 * s;
      v[b] = x0 * s + x1 * c;
    }
  }
}

}  // namespace wllm
