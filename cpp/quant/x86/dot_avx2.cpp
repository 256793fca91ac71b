// AVX2 dot kernels. They reproduce the reference kernels' arithmetic exactly:
// float dots keep element i in lane i % 8 of one 8-float register; quantized
// dots sum each block's integer products exactly, then add the block's term
// (d_w·d_x)·sum into lane (block % 8). Plain multiplies and adds, no FMA.
//
// The functions carry target attributes instead of a global -mavx2, so the
// binary still runs on CPUs without AVX2; avx2_dot_kernels() checks the CPU.
// The table at the end also lists the tiled kernels (gemm_avx2.cpp), the
// single-activation ones (matvec_avx2.cpp) and the activation quantizers
// (act_quant_avx2.cpp).
#include "quant/kernels.h"

#if defined(__x86_64__) || defined(__i386__)

#include "core/half.h"
#include "quant/x86/avx2.h"

namespace wllm {
namespace {

using namespace avx2;  // block decoding shared with the tiled kernels

WLLM_AVX2 float dot_f32_avx2(int64_t n, const void* row, const void* act) {
  const float* w = static_cast<const float*>(row);
  const float* x = static_cast<const float*>(act);
  const int64_t n8 = n / 8 * 8;
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n8; i += 8) {
    acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_loadu_ps(w + i), _mm256_loadu_ps(x + i)));
  }
  return finish_lanes(acc, n8, n, [w](int64_t i) { return w[i]; }, x);
}

WLLM_AVX2 float dot_f16_avx2(int64_t n, const void* row, const void* act) {
  const uint16_t* w = static_cast<const uint16_t*>(row);
  const float* x = static_cast<const float*>(act);
  const int64_t n8 = n / 8 * 8;
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n8; i += 8) {
    const __m256 wf = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + i)));  // exact
    acc = _mm256_add_ps(acc, _mm256_mul_ps(wf, _mm256_loadu_ps(x + i)));
  }
  return finish_lanes(acc, n8, n, [w](int64_t i) { return f16_to_f32(w[i]); }, x);
}

WLLM_AVX2 float dot_bf16_avx2(int64_t n, const void* row, const void* act) {
  const uint16_t* w = static_cast<const uint16_t*>(row);
  const float* x = static_cast<const float*>(act);
  const int64_t n8 = n / 8 * 8;
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < n8; i += 8) {
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + i)));
    const __m256 wf = _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));  // bf16 is the top half of an f32
    acc = _mm256_add_ps(acc, _mm256_mul_ps(wf, _mm256_loadu_ps(x + i)));
  }
  return finish_lanes(acc, n8, n, [w](int64_t i) { return bf16_to_f32(w[i]); }, x);
}

// Shared by the Q8_0-activation types: per block an exact integer sum, then
// term = (d_w·d_x)·sum added into lane (block % 8), eight blocks per step.
// block_sum(w, x) gives a block's partial sums (total() adds them up).
template <typename Block, __m256i (*block_sum)(const Block&, const BlockQ8_0&)>
WLLM_AVX2 inline float dot_blocks_q8_0(int64_t n, const void* row, const void* act) {
  const Block* w = static_cast<const Block*>(row);
  const BlockQ8_0* x = static_cast<const BlockQ8_0*>(act);
  const int64_t nb = n / kQK;
  const int64_t nb8 = nb / 8 * 8;
  __m256 acc = _mm256_setzero_ps();
  __m256i partial[8];
  for (int64_t ib = 0; ib < nb8; ib += 8) {
    for (int j = 0; j < 8; ++j) partial[j] = block_sum(w[ib + j], x[ib + j]);
    const __m256 sum = _mm256_cvtepi32_ps(sum_each(partial));  // exact: |sum| < 2^24
    const __m256 d = _mm256_mul_ps(scales8(w + ib), scales8(x + ib));
    acc = _mm256_add_ps(acc, _mm256_mul_ps(d, sum));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc);
  for (int64_t ib = nb8; ib < nb; ++ib) {
    const float d = f16_to_f32(w[ib].d) * f16_to_f32(x[ib].d);
    lanes[ib % 8] += d * static_cast<float>(total(block_sum(w[ib], x[ib])));
  }
  return sum_lanes8(lanes);
}

WLLM_AVX2 inline __m256i block_sum_q8_0(const BlockQ8_0& w, const BlockQ8_0& x) {
  return dot_i8x32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.qs)),
                   _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs)));
}

WLLM_AVX2 inline __m256i block_sum_q4_0(const BlockQ4_0& w, const BlockQ8_0& x) {
  return dot_i8x32(q4_0_bytes(w.qs), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs)));
}

WLLM_AVX2 inline __m256i block_sum_q5_0(const BlockQ5_0& w, const BlockQ8_0& x) {
  return dot_i8x32(q5_0_bytes(w), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs)));
}

WLLM_AVX2 float dot_q5_0_avx2(int64_t n, const void* row, const void* act) {
  return dot_blocks_q8_0<BlockQ5_0, block_sum_q5_0>(n, row, act);
}

WLLM_AVX2 float dot_q8_0_avx2(int64_t n, const void* row, const void* act) {
  return dot_blocks_q8_0<BlockQ8_0, block_sum_q8_0>(n, row, act);
}

WLLM_AVX2 float dot_q4_0_avx2(int64_t n, const void* row, const void* act) {
  return dot_blocks_q8_0<BlockQ4_0, block_sum_q4_0>(n, row, act);
}

// ---- K-quants (Q8_K activations): same per-block scheme, 256 elements.

// Q6_K: sumi = Σ_j scales[j]·Σ_{16 elements of j} q·x with q in [-32, 31].
// 32 elements at a time: the sign trick gives int16 pair sums, and madd with
// the two sub-blocks' scales (one per 128-bit half) gives int32 — all exact.
WLLM_AVX2 inline __m256i block_sum_q6_K(const BlockQ6_K& w, const BlockQ8_K& x) {
  const __m256i mask4 = _mm256_set1_epi8(15), mask2 = _mm256_set1_epi8(3), bias = _mm256_set1_epi8(32);
  __m256i sum = _mm256_setzero_si256();
  for (int h = 0; h < 2; ++h) {
    const __m256i ql0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.ql + 64 * h));
    const __m256i ql1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.ql + 64 * h + 32));
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.qh + 32 * h));
    for (int g = 0; g < 4; ++g) {
      // Element 128h + 32g + l: nibble (g >> 1) of ql[64h + 32(g & 1) + l],
      // plus bits 2g..2g+1 of qh[32h + l] on top, minus 32.
      const __m256i ql = (g & 1) ? ql1 : ql0;
      const __m256i low = (g >> 1) ? _mm256_and_si256(_mm256_srli_epi16(ql, 4), mask4) : _mm256_and_si256(ql, mask4);
      const __m256i high = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * g), mask2);
      const __m256i q = _mm256_sub_epi8(_mm256_or_si256(low, _mm256_slli_epi16(high, 4)), bias);
      const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs + 128 * h + 32 * g));
      const __m256i pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(q, q), _mm256_sign_epi8(xv, q));
      const int j = 8 * h + 2 * g;
      const __m256i scale = _mm256_set_m128i(_mm_set1_epi16(w.scales[j + 1]), _mm_set1_epi16(w.scales[j]));
      sum = _mm256_add_epi32(sum, _mm256_madd_epi16(pairs, scale));
    }
  }
  return sum;
}

WLLM_AVX2 float dot_q6_K_avx2(int64_t n, const void* row, const void* act) {
  const BlockQ6_K* w = static_cast<const BlockQ6_K*>(row);
  const BlockQ8_K* x = static_cast<const BlockQ8_K*>(act);
  const int64_t nb = n / kQK_K, nb8 = nb / 8 * 8;
  __m256 acc = _mm256_setzero_ps();
  __m256i partial[8];
  for (int64_t ib = 0; ib < nb8; ib += 8) {
    for (int j = 0; j < 8; ++j) partial[j] = block_sum_q6_K(w[ib + j], x[ib + j]);
    const __m256 sum = _mm256_cvtepi32_ps(sum_each(partial));  // rounds as the reference's cast does
    const __m256 d = _mm256_mul_ps(act_scales8(x + ib), scales8(w + ib));
    acc = _mm256_add_ps(acc, _mm256_mul_ps(d, sum));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc);
  for (int64_t ib = nb8; ib < nb; ++ib) {
    const float d = x[ib].d * f16_to_f32(w[ib].d);
    lanes[ib % 8] += d * static_cast<float>(total(block_sum_q6_K(w[ib], x[ib])));
  }
  return sum_lanes8(lanes);
}

// Q4_K: sumi = Σ_j sc_j·Σ_{32 elements of j} q·x with q in [0, 15], and
// summ = Σ_j m_j·(bsums[2j] + bsums[2j+1]); term = (dx·d)·sumi − (dx·dmin)·summ.
WLLM_AVX2 inline void block_sums_q4_K(const BlockQ4_K& w, const BlockQ8_K& x, __m256i* sumi, int32_t* summ) {
  const __m256i mask4 = _mm256_set1_epi8(15);
  __m256i sum = _mm256_setzero_si256();
  int32_t mins = 0;
  for (int c = 0; c < 4; ++c) {
    const __m256i qs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.qs + 32 * c));
    for (int half = 0; half < 2; ++half) {
      const int j = 2 * c + half;
      int sc, m;
      k4_scale_min(w.scales, j, &sc, &m);
      const __m256i q = half ? _mm256_and_si256(_mm256_srli_epi16(qs, 4), mask4) : _mm256_and_si256(qs, mask4);
      const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs + 32 * j));
      const __m256i pairs = _mm256_maddubs_epi16(q, xv);  // q unsigned, x signed
      sum = _mm256_add_epi32(sum, _mm256_madd_epi16(pairs, _mm256_set1_epi16(static_cast<int16_t>(sc))));
      mins += m * (x.bsums[2 * j] + x.bsums[2 * j + 1]);
    }
  }
  *sumi = sum;
  *summ = mins;
}

WLLM_AVX2 float dot_q4_K_avx2(int64_t n, const void* row, const void* act) {
  const BlockQ4_K* w = static_cast<const BlockQ4_K*>(row);
  const BlockQ8_K* x = static_cast<const BlockQ8_K*>(act);
  const int64_t nb = n / kQK_K, nb8 = nb / 8 * 8;
  __m256 acc = _mm256_setzero_ps();
  __m256i partial[8];
  alignas(32) int32_t mins[8];
  alignas(16) uint16_t dmin[8];
  for (int64_t ib = 0; ib < nb8; ib += 8) {
    for (int j = 0; j < 8; ++j) {
      block_sums_q4_K(w[ib + j], x[ib + j], &partial[j], &mins[j]);
      dmin[j] = w[ib + j].dmin;
    }
    const __m256 dx = act_scales8(x + ib);
    const __m256 t1 = _mm256_mul_ps(_mm256_mul_ps(dx, scales8(w + ib)), _mm256_cvtepi32_ps(sum_each(partial)));
    const __m256 dm = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(dmin)));
    const __m256 t2 = _mm256_mul_ps(_mm256_mul_ps(dx, dm), _mm256_cvtepi32_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(mins))));
    acc = _mm256_add_ps(acc, _mm256_sub_ps(t1, t2));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc);
  for (int64_t ib = nb8; ib < nb; ++ib) {
    __m256i sumi;
    int32_t summ;
    block_sums_q4_K(w[ib], x[ib], &sumi, &summ);
    const float dx = x[ib].d;
    const float term = (dx * f16_to_f32(w[ib].d)) * static_cast<float>(total(sumi)) -
                       (dx * f16_to_f32(w[ib].dmin)) * static_cast<float>(summ);
    lanes[ib % 8] += term;
  }
  return sum_lanes8(lanes);
}

constexpr DotKernel kAvx2Kernels[] = {
    {TensorType::kF32, dot_f32_avx2, gemm_f32_avx2},
    {TensorType::kF16, dot_f16_avx2, gemm_f16_avx2, from_float_f16_avx2},
    {TensorType::kBF16, dot_bf16_avx2, gemm_bf16_avx2},
    {TensorType::kQ8_0, dot_q8_0_avx2, gemm_q8_0_avx2, from_float_q8_0_avx2, matvec_q8_0_avx2},
    {TensorType::kQ4_0, dot_q4_0_avx2, gemm_q4_0_avx2, nullptr, matvec_q4_0_avx2},
    {TensorType::kQ5_0, dot_q5_0_avx2, gemm_q5_0_avx2, nullptr, matvec_q5_0_avx2},
    {TensorType::kQ4_K, dot_q4_K_avx2, gemm_q4_K_avx2},
    {TensorType::kQ6_K, dot_q6_K_avx2, gemm_q6_K_avx2},
    {TensorType::kQ8_K, nullptr, nullptr, from_float_q8_K_avx2},
};

}  // namespace

const DotKernel* avx2_dot_kernels(size_t* count) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("f16c")) {
    *count = 0;
    return nullptr;
  }
  *count = sizeof(kAvx2Kernels) / sizeof(kAvx2Kernels[0]);
  return kAvx2Kernels;
}

}  // namespace wllm

#else  // not x86

namespace wllm {
const DotKernel* avx2_dot_kernels(size_t* count) {
  *count = 0;
  return nullptr;
}
}  // namespace wllm

#endif
