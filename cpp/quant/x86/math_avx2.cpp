// AVX2 elementwise math (MathKernels): core/math.h's exp_f32 and silu_f32
// step by step on 8 lanes, so every lane gets the scalar function's bits.
// Clamps use min/max with the constant first: for a NaN lane they return the
// second operand, the NaN, as the scalar comparisons let it through.
#include "quant/kernels.h"

#if defined(__x86_64__) || defined(__i386__)

#include <algorithm>

#include "core/math.h"
#include "quant/x86/avx2.h"

namespace wllm::avx2 {
namespace {

// math_detail::exp_scaled on 8 lanes: m·e^x, rounded once at the end.
WLLM_AVX2 inline __m256 exp_scaled(__m256 x, __m256 m) {
  using namespace math_detail;
  x = _mm256_min_ps(_mm256_set1_ps(kExpMax), x);
  x = _mm256_max_ps(_mm256_set1_ps(kExpMin), x);
  const __m256 shifted = _mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(kInvLn2)), _mm256_set1_ps(kRoundShift));
  const __m256 n = _mm256_sub_ps(shifted, _mm256_set1_ps(kRoundShift));
  const __m256i ni = _mm256_sub_epi32(_mm256_castps_si256(shifted), _mm256_castps_si256(_mm256_set1_ps(kRoundShift)));
  const __m256 r = _mm256_sub_ps(_mm256_sub_ps(x, _mm256_mul_ps(n, _mm256_set1_ps(kLn2Hi))),
                                 _mm256_mul_ps(n, _mm256_set1_ps(kLn2Lo)));
  __m256 q = _mm256_add_ps(_mm256_mul_ps(_mm256_set1_ps(kExpC6), r), _mm256_set1_ps(kExpC5));
  q = _mm256_add_ps(_mm256_mul_ps(q, r), _mm256_set1_ps(kExpC4));
  q = _mm256_add_ps(_mm256_mul_ps(q, r), _mm256_set1_ps(kExpC3));
  q = _mm256_add_ps(_mm256_mul_ps(q, r), _mm256_set1_ps(kExpC2));
  const __m256 p = _mm256_add_ps(_mm256_set1_ps(1.0f), _mm256_add_ps(r, _mm256_mul_ps(_mm256_mul_ps(r, r), q)));
  const __m256i n1 = _mm256_srai_epi32(ni, 1);
  const __m256i n2 = _mm256_sub_epi32(ni, n1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(_mm256_mul_ps(p, m), s1), s2);
}

// silu_f32 on 8 lanes: both of its branches, then the scalar's choices.
WLLM_AVX2 inline __m256 silu(__m256 x) {
  const __m256 far_negative = _mm256_cmp_ps(x, _mm256_set1_ps(-80.0f), _CMP_LT_OQ);
  const __m256 negated = _mm256_xor_ps(x, _mm256_set1_ps(-0.0f));  // -x: a sign flip, as in C++
  const __m256 arg = _mm256_blendv_ps(negated, x, far_negative);
  const __m256 scale = _mm256_blendv_ps(_mm256_set1_ps(1.0f), x, far_negative);
  const __m256 e = exp_scaled(arg, scale);
  const __m256 near = _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
  const __m256 r = _mm256_blendv_ps(near, e, far_negative);
  return _mm256_blendv_ps(r, _mm256_set1_ps(-0.0f), _mm256_cmp_ps(x, _mm256_set1_ps(-150.0f), _CMP_LT_OQ));
}

WLLM_AVX2 void swiglu(float* gate, const float* up, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(gate + i, _mm256_mul_ps(silu(_mm256_loadu_ps(gate + i)), _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) gate[i] = silu_f32(gate[i]) * up[i];
}

// ref::softmax on 8 lanes. The maximum: every lane starts from x[0] and
// takes max_ps(v, m) = v > m ? v : m, so a NaN is skipped unless it is x[0]
// (then every lane stays NaN), as std::max does; only the sign of a zero
// maximum may differ, which changes no x − max.
WLLM_AVX2 void softmax(float* x, int64_t n, float scale) {
  const int64_t n8 = n / 8 * 8;
  const __m256 s = _mm256_set1_ps(scale);
  for (int64_t i = 0; i < n8; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), s));
  for (int64_t i = n8; i < n; ++i) x[i] *= scale;
  __m256 m = _mm256_set1_ps(x[0]);
  for (int64_t i = 0; i < n8; i += 8) m = _mm256_max_ps(_mm256_loadu_ps(x + i), m);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, m);
  float max = x[0];
  for (float lane : lanes) max = std::max(max, lane);
  for (int64_t i = n8; i < n; ++i) max = std::max(max, x[i]);

  __m256 acc = _mm256_setzero_ps();  // lane j: elements i with i % 8 == j
  for (int64_t i = 0; i < n8; i += 8) {
    const __m256 e = exp_scaled(_mm256_sub_ps(_mm256_loadu_ps(x + i), _mm256_set1_ps(max)), _mm256_set1_ps(1.0f));
    _mm256_storeu_ps(x + i, e);
    acc = _mm256_add_ps(acc, e);
  }
  _mm256_store_ps(lanes, acc);
  for (int64_t i = n8; i < n; ++i) {
    x[i] = exp_f32(x[i] - max);
    lanes[i % 8] += x[i];
  }
  const float inv = 1.0f / sum_lanes8(lanes);
  const __m256 inv_v = _mm256_set1_ps(inv);
  for (int64_t i = 0; i < n8; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), inv_v));
  for (int64_t i = n8; i < n; ++i) x[i] *= inv;
}

constexpr MathKernels kAvx2Math = {swiglu, softmax};

}  // namespace
}  // namespace wllm::avx2

namespace wllm {
const MathKernels* avx2_math_kernels() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c") ? &avx2::kAvx2Math : nullptr;
}
}  // namespace wllm

#else  // not x86

namespace wllm {
const MathKernels* avx2_math_kernels() { return nullptr; }
}  // namespace wllm

#endif
