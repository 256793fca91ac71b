// AVX2 activation quantizers (Q8_0, Q8_K; F16 for the KV cache): the reference algorithms of
// ref/act_quant.cpp with the per-element work in vectors. Maxima do not
// depend on order, x·id is one rounding either way, and rounding to nearest
// even then clamping equals the reference's round_clamp, so the bytes are
// the reference's (tests/cpp/kernels_test.cpp checks, NaN and inf included).
#include "quant/kernels.h"

#if defined(__x86_64__) || defined(__i386__)

#include "core/half.h"
#include "quant/x86/avx2.h"

namespace wllm::avx2 {
namespace {

// max(acc, |v|) lane-wise, skipping NaN as the reference's `a > amax` does:
// max_ps returns its second operand when either is NaN.
WLLM_AVX2 inline __m256 max_abs(__m256 acc, __m256 v) {
  return _mm256_max_ps(_mm256_and_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff))), acc);
}

WLLM_AVX2 inline float horizontal_max(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ps(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
}

// round_clamp (ref.h) of 8 values: nearest, ties to even, clamped, NaN -> 0.
WLLM_AVX2 inline __m256i round_clamp(__m256 v, float lo, float hi) {
  const __m256 ordered = _mm256_cmp_ps(v, v, _CMP_ORD_Q);
  __m256 r = _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  r = _mm256_min_ps(_mm256_max_ps(r, _mm256_set1_ps(lo)), _mm256_set1_ps(hi));
  return _mm256_cvtps_epi32(_mm256_and_ps(r, ordered));
}

// 32 int32 in [-128, 127] (4 vectors, element order) as 32 bytes in order.
WLLM_AVX2 inline __m256i pack_bytes(const __m256i q[4]) {
  const __m256i words = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
  // The packs work per 128-bit half: dwords now hold q0, q1, q2, q3 (lanes 0-3), then lanes 4-7.
  return _mm256_permutevar8x32_epi32(words, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

}  // namespace

WLLM_AVX2 void from_float_q8_0_avx2(const float* src, void* dst, int64_t n) {
  BlockQ8_0* b = static_cast<BlockQ8_0*>(dst);
  for (int64_t ib = 0; ib < n / kQK; ++ib, src += kQK) {
    __m256 v[4], m = _mm256_setzero_ps();
    for (int k = 0; k < 4; ++k) {
      v[k] = _mm256_loadu_ps(src + 8 * k);
      m = max_abs(m, v[k]);
    }
    const float d = horizontal_max(m) / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[ib].d = f32_to_f16(d);
    __m256i q[4];
    for (int k = 0; k < 4; ++k) q[k] = round_clamp(_mm256_mul_ps(v[k], _mm256_set1_ps(id)), -127.0f, 127.0f);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(b[ib].qs), pack_bytes(q));
  }
}

WLLM_AVX2 void from_float_q8_K_avx2(const float* src, void* dst, int64_t n) {
  BlockQ8_K* b = static_cast<BlockQ8_K*>(dst);
  for (int64_t ib = 0; ib < n / kQK_K; ++ib, src += kQK_K) {
    __m256 m = _mm256_setzero_ps();
    for (int k = 0; k < kQK_K / 8; ++k) m = max_abs(m, _mm256_loadu_ps(src + 8 * k));
    const float amax = horizontal_max(m);
    if (amax == 0.0f) {
      b[ib].d = 0.0f;
      std::memset(b[ib].qs, 0, sizeof(b[ib].qs));
      std::memset(b[ib].bsums, 0, sizeof(b[ib].bsums));
      continue;
    }
    // The first value of that magnitude, sign kept (the reference's max).
    float max = 0.0f;
    for (int k = 0; k < kQK_K / 8; ++k) {
      const __m256 a = _mm256_and_ps(_mm256_loadu_ps(src + 8 * k), _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)));
      const int hits = _mm256_movemask_ps(_mm256_cmp_ps(a, _mm256_set1_ps(amax), _CMP_EQ_OQ));
      if (hits) {
        max = src[8 * k + __builtin_ctz(static_cast<unsigned>(hits))];
        break;
      }
    }
    const float iscale = -127.0f / max;
    for (int c = 0; c < kQK_K / 32; ++c) {
      __m256i q[4];
      for (int k = 0; k < 4; ++k) {
        q[k] = round_clamp(_mm256_mul_ps(_mm256_set1_ps(iscale), _mm256_loadu_ps(src + 32 * c + 8 * k)), -128.0f, 127.0f);
      }
      const __m256i bytes = pack_bytes(q);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(b[ib].qs + 32 * c), bytes);
      // Sums of 16: sad adds 8 unsigned bytes, so bias by 128 and take 16·128 off.
      const __m256i sums8 = _mm256_sad_epu8(_mm256_xor_si256(bytes, _mm256_set1_epi8(-128)), _mm256_setzero_si256());
      alignas(32) int64_t s[4];
      _mm256_store_si256(reinterpret_cast<__m256i*>(s), sums8);
      b[ib].bsums[2 * c] = static_cast<int16_t>(s[0] + s[1] - 16 * 128);
      b[ib].bsums[2 * c + 1] = static_cast<int16_t>(s[2] + s[3] - 16 * 128);
    }
    b[ib].d = 1.0f / iscale;
  }
}

// F16 (the KV cache): vcvtps2ph rounds to nearest even, as f32_to_f16, and
// gives the same infinities, subnormals and quiet NaNs (top payload bits).
WLLM_AVX2 void from_float_f16_avx2(const float* src, void* dst, int64_t n) {
  uint16_t* h = static_cast<uint16_t*>(dst);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i v = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(h + i), v);
  }
  for (; i < n; ++i) h[i] = f32_to_f16(src[i]);
}

}  // namespace wllm::avx2

#endif
