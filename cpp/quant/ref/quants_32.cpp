// 32-element block weights: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0. Dequantizers and
// quantizers follow ggml/src/ggml-quants.c (dequantize_row_*, quantize_row_*_ref);
// dot formulas are listed in ref.h.
#include <cfloat>
#include <cmath>

#include "core/half.h"
#include "quant/blocks.h"
#include "quant/ref/ref.h"
#include "quant/traits.h"

namespace wllm::ref {
namespace {

// Bit 4 of every element of a Q5 block, from its little-endian u32 qh.
inline uint32_t load_qh(const uint8_t qh[4]) {
  return static_cast<uint32_t>(qh[0]) | static_cast<uint32_t>(qh[1]) << 8 |
         static_cast<uint32_t>(qh[2]) << 16 | static_cast<uint32_t>(qh[3]) << 24;
}

inline void store_qh(uint32_t v, uint8_t qh[4]) {
  for (int k = 0; k < 4; ++k) qh[k] = static_cast<uint8_t>(v >> (8 * k));
}

// The value of largest magnitude (the first one on ties), sign kept; 0 if all
// are zero. NaN never wins a comparison, so it is skipped.
inline float signed_absmax(const float* x, int n) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < n; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

inline void min_max(const float* x, int n, float* min, float* max) {
  *min = FLT_MAX;
  *max = -FLT_MAX;
  for (int j = 0; j < n; ++j) {
    if (x[j] < *min) *min = x[j];
    if (x[j] > *max) *max = x[j];
  }
}

}  // namespace

// ---- Q4_0 ------------------------------------------------------------------

void to_float_q4_0(const void* src, float* dst, int64_t n) {
  const BlockQ4_0* b = static_cast<const BlockQ4_0*>(src);
  for (int64_t ib = 0; ib < n / kQK; ++ib, dst += kQK) {
    const float d = f16_to_f32(b[ib].d);
    for (int j = 0; j < kQK / 2; ++j) {
      dst[j] = static_cast<float>((b[ib].qs[j] & 15) - 8) * d;
      dst[j + 16] = static_cast<float>((b[ib].qs[j] >> 4) - 8) * d;
    }
  }
}

// d = max / -8 (max = signed absmax) so max itself maps to code 0 and the
// full -8..7 range is used; q = min(15, (int)(x/d + 8.5)).
void from_float_q4_0(const float* src, void* dst, int64_t n) {
  BlockQ4_0* b = static_cast<BlockQ4_0*>(dst);
  for (int64_t ib = 0; ib < n / kQK; ++ib, src += kQK) {
    const float d = signed_absmax(src, kQK) / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[ib].d = f32_to_f16(d);
    for (int j = 0; j < kQK / 2; ++j) {
      const int q0 = trunc_clamp(src[j] * id + 8.5f, 0, 15);
      const int q1 = trunc_clamp(src[j + 16] * id + 8.5f, 0, 15);
      b[ib].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
  }
}

float dot_q4_0_q8_0(int64_t n, const void* row, const void* act) {
  const BlockQ4_0* w = static_cast<const BlockQ4_0*>(row);
  const BlockQ8_0* x = static_cast<const BlockQ8_0*>(act);
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    int32_t sumi = 0;
    for (int j = 0; j < kQK / 2; ++j) {
      sumi += ((w[ib].qs[j] & 15) - 8) * x[ib].qs[j];
      sumi += ((w[ib].qs[j] >> 4) - 8) * x[ib].qs[j + 16];
    }
    const float term = (f16_to_f32(w[ib].d) * f16_to_f32(x[ib].d)) * static_cast<float>(sumi);
    acc[ib % 8] += term;
  }
  return sum_lanes8(acc);
}

// ---- Q4_1 ------------------------------------------------------------------

void to_float_q4_1(const void* src, float* dst, int64_t n) {
  const BlockQ4_1* b = static_cast<const BlockQ4_1*>(src);
  for (int64_t ib = 0; ib < n / kQK; ++ib, dst += kQK) {
    const float d = f16_to_f32(b[ib].d);
    const float m = f16_to_f32(b[ib].m);
    for (int j = 0; j < kQK / 2; ++j) {
      dst[j] = static_cast<float>(b[ib].qs[j] & 15) * d + m;
      dst[j + 16] = static_cast<float>(b[ib].qs[j] >> 4) * d + m;
    }
  }
}

// d = (max - min) / 15, m = min, q = min(15, (int)((x - min)/d + 0.5)).
void from_float_q4_1(const float* src, void* dst, int64_t n) {
  BlockQ4_1* b = static_cast<BlockQ4_1*>(dst);
  for (int64_t ib = 0; ib < n / kQK; ++ib, src += kQK) {
    float min, max;
    min_max(src, kQK, &min, &max);
    const float d = (max - min) / 15.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[ib].d = f32_to_f16(d);
    b[ib].m = f32_to_f16(min);
    for (int j = 0; j < kQK / 2; ++j) {
      const int q0 = trunc_clamp((src[j] - min) * id + 0.5f, 0, 15);
      const int q1 = trunc_clamp((src[j + 16] - min) * id + 0.5f, 0, 15);
      b[ib].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
  }
}

float dot_q4_1_q8_1(int64_t n, const void* row, const void* act) {
  const BlockQ4_1* w = static_cast<const BlockQ4_1*>(row);
  const BlockQ8_1* x = static_cast<const BlockQ8_1*>(act);
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    int32_t sumi = 0;
    for (int j = 0; j < kQK / 2; ++j) {
      sumi += (w[ib].qs[j] & 15) * x[ib].qs[j];
      sumi += (w[ib].qs[j] >> 4) * x[ib].qs[j + 16];
    }
    const float scaled = (f16_to_f32(w[ib].d) * f16_to_f32(x[ib].d)) * static_cast<float>(sumi);
    const float term = scaled + f16_to_f32(w[ib].m) * f16_to_f32(x[ib].s);
    acc[ib % 8] += term;
  }
  return sum_lanes8(acc);
}

// ---- Q5_0 ------------------------------------------------------------------

void to_float_q5_0(const void* src, float* dst, int64_t n) {
  const BlockQ5_0* b = static_cast<const BlockQ5_0*>(src);
  for (int64_t ib = 0; ib < n / kQK; ++ib, dst += kQK) {
    const float d = f16_to_f32(b[ib].d);
    const uint32_t qh = load_qh(b[ib].qh);
    for (int j = 0; j < kQK / 2; ++j) {
      const int q0 = (b[ib].qs[j] & 15) | static_cast<int>(((qh >> j) & 1u) << 4);
      const int q1 = (b[ib].qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
      dst[j] = static_cast<float>(q0 - 16) * d;
      dst[j + 16] = static_cast<float>(q1 - 16) * d;
    }
  }
}

// As Q4_0 with 5 bits: d = max / -16, q = min(31, (int)(x/d + 16.5)).
void from_float_q5_0(const float* src, void* dst, int64_t n) {
  BlockQ5_0* b = static_cast<BlockQ5_0*>(dst);
  for (int64_t ib = 0; ib < n / kQK; ++ib, src += kQK) {
    const float d = signed_absmax(src, kQK) / -16.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[ib].d = f32_to_f16(d);
    uint32_t qh = 0;
    for (int j = 0; j < kQK / 2; ++j) {
      const int q0 = trunc_clamp(src[j] * id + 16.5f, 0, 31);
      const int q1 = trunc_clamp(src[j + 16] * id + 16.5f, 0, 31);
      b[ib].qs[j] = static_cast<uint8_t>((q0 & 15) | ((q1 & 15) << 4));
      qh |= static_cast<uint32_t>(q0 >> 4) << j;
      qh |= static_cast<uint32_t>(q1 >> 4) << (j + 16);
    }
    store_qh(qh, b[ib].qh);
  }
}

float dot_q5_0_q8_0(int64_t n, const void* row, const void* act) {
  const BlockQ5_0* w = static_cast<const BlockQ5_0*>(row);
  const BlockQ8_0* x = static_cast<const BlockQ8_0*>(act);
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    const uint32_t qh = load_qh(w[ib].qh);
    int32_t sumi = 0;
    for (int j = 0; j < kQK / 2; ++j) {
      const int q0 = (w[ib].qs[j] & 15) | static_cast<int>(((qh >> j) & 1u) << 4);
      const int q1 = (w[ib].qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
      sumi += (q0 - 16) * x[ib].qs[j];
      sumi += (q1 - 16) * x[ib].qs[j + 16];
    }
    const float term = (f16_to_f32(w[ib].d) * f16_to_f32(x[ib].d)) * static_cast<float>(sumi);
    acc[ib % 8] += term;
  }
  return sum_lanes8(acc);
}

// ---- Q5_1 ------------------------------------------------------------------

void to_float_q5_1(const void* src, float* dst, int64_t n) {
  const BlockQ5_1* b = static_cast<const BlockQ5_1*>(src);
  for (int64_t ib = 0; ib < n / kQK; ++ib, dst += kQK) {
    const float d = f16_to_f32(b[ib].d);
    const float m = f16_to_f32(b[ib].m);
    const uint32_t qh = load_qh(b[ib].qh);
    for (int j = 0; j < kQK / 2; ++j) {
      const int q0 = (b[ib].qs[j] & 15) | static_cast<int>(((qh >> j) & 1u) << 4);
      const int q1 = (b[ib].qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
      dst[j] = static_cast<float>(q0) * d + m;
      dst[j + 16] = static_cast<float>(q1) * d + m;
    }
  }
}

// As Q4_1 with 5 bits: d = (max - min) / 31, q = (int)((x - min)/d + 0.5).
void from_float_q5_1(const float* src, void* dst, int64_t n) {
  BlockQ5_1* b = static_cast<BlockQ5_1*>(dst);
  for (int64_t ib = 0; ib < n / kQK; ++ib, src += kQK) {
    float min, max;
    min_max(src, kQK, &min, &max);
    const float d = (max - min) / 31.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[ib].d = f32_to_f16(d);
    b[ib].m = f32_to_f16(min);
    uint32_t qh = 0;
    for (int j = 0; j < kQK / 2; ++j) {
      const int q0 = trunc_clamp((src[j] - min) * id + 0.5f, 0, 31);
      const int q1 = trunc_clamp((src[j + 16] - min) * id + 0.5f, 0, 31);
      b[ib].qs[j] = static_cast<uint8_t>((q0 & 15) | ((q1 & 15) << 4));
      qh |= static_cast<uint32_t>(q0 >> 4) << j;
      qh |= static_cast<uint32_t>(q1 >> 4) << (j + 16);
    }
    store_qh(qh, b[ib].qh);
  }
}

float dot_q5_1_q8_1(int64_t n, const void* row, const void* act) {
  const BlockQ5_1* w = static_cast<const BlockQ5_1*>(row);
  const BlockQ8_1* x = static_cast<const BlockQ8_1*>(act);
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    const uint32_t qh = load_qh(w[ib].qh);
    int32_t sumi = 0;
    for (int j = 0; j < kQK / 2; ++j) {
      const int q0 = (w[ib].qs[j] & 15) | static_cast<int>(((qh >> j) & 1u) << 4);
      const int q1 = (w[ib].qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
      sumi += q0 * x[ib].qs[j];
      sumi += q1 * x[ib].qs[j + 16];
    }
    const float scaled = (f16_to_f32(w[ib].d) * f16_to_f32(x[ib].d)) * static_cast<float>(sumi);
    const float term = scaled + f16_to_f32(w[ib].m) * f16_to_f32(x[ib].s);
    acc[ib % 8] += term;
  }
  return sum_lanes8(acc);
}

// ---- Q8_0 (its quantizer is in act_quant.cpp) -------------------------------

void to_float_q8_0(const void* src, float* dst, int64_t n) {
  const BlockQ8_0* b = static_cast<const BlockQ8_0*>(src);
  for (int64_t ib = 0; ib < n / kQK; ++ib, dst += kQK) {
    const float d = f16_to_f32(b[ib].d);
    for (int j = 0; j < kQK; ++j) dst[j] = static_cast<float>(b[ib].qs[j]) * d;
  }
}

float dot_q8_0_q8_0(int64_t n, const void* row, const void* act) {
  const BlockQ8_0* w = static_cast<const BlockQ8_0*>(row);
  const BlockQ8_0* x = static_cast<const BlockQ8_0*>(act);
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    int32_t sumi = 0;
    for (int j = 0; j < kQK; ++j) sumi += w[ib].qs[j] * x[ib].qs[j];
    const float term = (f16_to_f32(w[ib].d) * f16_to_f32(x[ib].d)) * static_cast<float>(sumi);
    acc[ib % 8] += term;
  }
  return sum_lanes8(acc);
}

}  // namespace wllm::ref
