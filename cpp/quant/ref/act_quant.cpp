// Activation quantizers: Q8_0 (also Q8_0 weights), Q8_1 and Q8_K. They run once
// per matrix-vector product, and SIMD versions must match them bit for bit, so
// every rounding is round_clamp (nearest, ties to even) of x times a
// precomputed inverse scale. Algorithms: ggml's quantize_row_q8_0/q8_1/q8_K_ref,
// except that ggml's roundf (ties away from zero) in Q8_0/Q8_1 is ties-to-even.
#include <cmath>
#include <cstring>

#include "core/half.h"
#include "quant/blocks.h"
#include "quant/ref/ref.h"

namespace wllm::ref {
namespace {

inline float abs_max(const float* x, int n) {
  float amax = 0.0f;
  for (int j = 0; j < n; ++j) {
    const float a = std::fabs(x[j]);
    if (a > amax) amax = a;
  }
  return amax;
}

}  // namespace

// d = amax/127, id = d ? 1/d : 0, q = round(x*id) in [-127, 127].
void from_float_q8_0(const float* src, void* dst, int64_t n) {
  BlockQ8_0* b = static_cast<BlockQ8_0*>(dst);
  for (int64_t ib = 0; ib < n / kQK; ++ib, src += kQK) {
    const float d = abs_max(src, kQK) / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[ib].d = f32_to_f16(d);
    for (int j = 0; j < kQK; ++j) b[ib].qs[j] = static_cast<int8_t>(round_clamp(src[j] * id, -127, 127));
  }
}

void to_float_q8_1(const void* src, float* dst, int64_t n) {
  const BlockQ8_1* b = static_cast<const BlockQ8_1*>(src);
  for (int64_t ib = 0; ib < n / kQK; ++ib, dst += kQK) {
    const float d = f16_to_f32(b[ib].d);
    for (int j = 0; j < kQK; ++j) dst[j] = static_cast<float>(b[ib].qs[j]) * d;
  }
}

// As Q8_0, plus s = f16(d * Σq) with the unrounded f32 d (ggml does the same),
// which carries Q4_1/Q5_1's min term: Σ m·x ≈ m·s.
void from_float_q8_1(const float* src, void* dst, int64_t n) {
  BlockQ8_1* b = static_cast<BlockQ8_1*>(dst);
  for (int64_t ib = 0; ib < n / kQK; ++ib, src += kQK) {
    const float d = abs_max(src, kQK) / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[ib].d = f32_to_f16(d);
    int32_t sum = 0;
    for (int j = 0; j < kQK; ++j) {
      const int q = round_clamp(src[j] * id, -127, 127);
      b[ib].qs[j] = static_cast<int8_t>(q);
      sum += q;
    }
    b[ib].s = f32_to_f16(d * static_cast<float>(sum));
  }
}

void to_float_q8_K(const void* src, float* dst, int64_t n) {
  const BlockQ8_K* b = static_cast<const BlockQ8_K*>(src);
  for (int64_t ib = 0; ib < n / kQK_K; ++ib, dst += kQK_K) {
    for (int j = 0; j < kQK_K; ++j) dst[j] = static_cast<float>(b[ib].qs[j]) * b[ib].d;
  }
}

// ggml's signed-max scheme: iscale = -127/max, where max is the first value of
// largest magnitude, so the largest maps to exactly ∓127; q = min(127,
// round(iscale*x)); d = 1/iscale kept in f32; bsums[j] = Σ qs[16j..16j+15].
void from_float_q8_K(const float* src, void* dst, int64_t n) {
  BlockQ8_K* b = static_cast<BlockQ8_K*>(dst);
  for (int64_t ib = 0; ib < n / kQK_K; ++ib, src += kQK_K) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < kQK_K; ++j) {
      const float a = std::fabs(src[j]);
      if (a > amax) {
        amax = a;
        max = src[j];
      }
    }
    if (amax == 0.0f) {
      b[ib].d = 0.0f;
      std::memset(b[ib].qs, 0, sizeof(b[ib].qs));
      std::memset(b[ib].bsums, 0, sizeof(b[ib].bsums));
      continue;
    }
    const float iscale = -127.0f / max;
    for (int j = 0; j < kQK_K; ++j) b[ib].qs[j] = static_cast<int8_t>(round_clamp(iscale * src[j], -128, 127));
    for (int j = 0; j < kQK_K / 16; ++j) {
      int sum = 0;
      for (int k = 0; k < 16; ++k) sum += b[ib].qs[16 * j + k];
      b[ib].bsums[j] = static_cast<int16_t>(sum);
    }
    b[ib].d = 1.0f / iscale;
  }
}

}  // namespace wllm::ref
