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

// ---- Q8_1-activation types (Q4_1, Q5_1) --------------------------------------
//
// Their codes carry no offset (the min comes back through the activation's
// s = d_x·Σ x), so per block an exact Σ q·x, then term = (d_w·d_x)·sum +
// m_w·s_x into lane (block % 8), eight blocks per step.

WLLM_AVX2 inline __m256i codes_q4_1(const BlockQ4_1& w) { return nibbles_32(w.qs); }

template <typename Block, __m256i (*codes)(const Block&)>
WLLM_AVX2 inline float dot_blocks_q8_1(int64_t n, const void* row, const void* act) {
  const Block* w = static_cast<const Block*>(row);
  const BlockQ8_1* x = static_cast<const BlockQ8_1*>(act);
  const int64_t nb = n / kQK, nb8 = nb / 8 * 8;
  __m256 acc = _mm256_setzero_ps();
  __m256i partial[8];
  alignas(16) uint16_t mw[8], sx[8];
  for (int64_t ib = 0; ib < nb8; ib += 8) {
    for (int j = 0; j < 8; ++j) {
      partial[j] = dot_u8x32(codes(w[ib + j]), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[ib + j].qs)));
      mw[j] = w[ib + j].m;
      sx[j] = x[ib + j].s;
    }
    const __m256 d = _mm256_mul_ps(scales8(w + ib), scales8(x + ib));
    const __m256 scaled = _mm256_mul_ps(d, _mm256_cvtepi32_ps(sum_each(partial)));
    const __m256 mins = _mm256_mul_ps(f16x8_to_f32(mw), f16x8_to_f32(sx));
    acc = _mm256_add_ps(acc, _mm256_add_ps(scaled, mins));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc);
  for (int64_t ib = nb8; ib < nb; ++ib) {
    const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[ib].qs));
    const float sum = static_cast<float>(total(dot_u8x32(codes(w[ib]), xv)));
    const float term = (f16_to_f32(w[ib].d) * f16_to_f32(x[ib].d)) * sum + f16_to_f32(w[ib].m) * f16_to_f32(x[ib].s);
    lanes[ib % 8] += term;
  }
  return sum_lanes8(lanes);
}

// ---- K-quants (Q8_K activations): the scheme of avx2.h, 256 elements a block.

// A block's exact integer sums through the scheme of avx2.h.
struct KSumsAvx2 {
  template <typename Block>
  WLLM_AVX2 static KSums of(const Block& w, const BlockQ8_K& x) {
    const KScales s = k_scales(w);
    __m256i sum = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
      sum = _mm256_add_epi32(sum, group_sum(group_codes(w, k), x.qs + 32 * k, scale_pair(s.sc, k)));
    }
    return with_bsums(w, x, sum, s.m);
  }
};

// The ISA for everything up to the matching pop (clang spells it differently).
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,f16c"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,f16c")
#endif
#include "quant/x86/dot_k_driver.inc"
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

constexpr DotKernel kAvx2Kernels[] = {
    {TensorType::kF32, dot_f32_avx2, gemm_f32_avx2, nullptr, matvec_f32_avx2},
    {TensorType::kF16, dot_f16_avx2, gemm_f16_avx2, from_float_f16_avx2, matvec_f16_avx2},
    {TensorType::kBF16, dot_bf16_avx2, gemm_bf16_avx2, nullptr, matvec_bf16_avx2},
    {TensorType::kQ8_0, dot_q8_0_avx2, gemm_q8_0_avx2, from_float_q8_0_avx2, matvec_q8_0_avx2},
    {TensorType::kQ4_0, dot_q4_0_avx2, gemm_q4_0_avx2, nullptr, matvec_q4_0_avx2},
    {TensorType::kQ5_0, dot_q5_0_avx2, gemm_q5_0_avx2, nullptr, matvec_q5_0_avx2},
    {TensorType::kQ4_1, dot_blocks_q8_1<BlockQ4_1, codes_q4_1>},
    {TensorType::kQ5_1, dot_blocks_q8_1<BlockQ5_1, q5_codes<BlockQ5_1>>},
    {TensorType::kQ2_K, dot_k_blocks<BlockQ2_K, KSumsAvx2>, gemm_k_avx2<BlockQ2_K>},
    {TensorType::kQ3_K, dot_k_blocks<BlockQ3_K, KSumsAvx2>, gemm_k_avx2<BlockQ3_K>},
    {TensorType::kQ4_K, dot_k_blocks<BlockQ4_K, KSumsAvx2>, gemm_k_avx2<BlockQ4_K>},
    {TensorType::kQ5_K, dot_k_blocks<BlockQ5_K, KSumsAvx2>, gemm_k_avx2<BlockQ5_K>},
    {TensorType::kQ6_K, dot_k_blocks<BlockQ6_K, KSumsAvx2>, gemm_k_avx2<BlockQ6_K>},
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
