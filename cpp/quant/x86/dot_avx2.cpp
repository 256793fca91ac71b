// AVX2 dot kernels. They reproduce the reference kernels' arithmetic exactly:
// float dots keep element i in lane i % 8 of one 8-float register; quantized
// dots sum each block's integer products exactly, then add the block's term
// (d_w·d_x)·sum into lane (block % 8). Plain multiplies and adds, no FMA.
//
// The functions carry target attributes instead of a global -mavx2, so the
// binary still runs on CPUs without AVX2; avx2_dot_kernels() checks the CPU.
#include "quant/kernels.h"

#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>

#include <cstring>

#include "core/half.h"
#include "quant/blocks.h"

#define WLLM_AVX2 __attribute__((target("avx2,f16c")))

namespace wllm {
namespace {

// Finishes a lane-structured float dot: the tail elements n8..n go to lanes
// (i % 8) of the stored accumulator, then the fixed reduction of traits.h.
template <typename Load>
WLLM_AVX2 inline float finish_lanes(__m256 acc_v, int64_t n8, int64_t n, Load load, const float* x) {
  alignas(32) float acc[8];
  _mm256_store_ps(acc, acc_v);
  for (int64_t i = n8; i < n; ++i) {
    const float p = load(i) * x[i];
    acc[i % 8] += p;
  }
  return sum_lanes8(acc);
}

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

// Σ w_i·x_i over 32 signed bytes as 8 partial int32 sums (exact). maddubs
// multiplies unsigned by signed bytes, so |w| meets x with w's sign moved
// onto it; a pair of products is at most 2·128·127, inside int16.
WLLM_AVX2 inline __m256i dot_i8x32(__m256i w, __m256i x) {
  const __m256i pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(x, w));
  return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
}

// The totals of 8 vectors of partial sums, as one vector (lane j: v[j]).
// Integer adds are exact, so the order does not matter.
WLLM_AVX2 inline __m256i sum_each(const __m256i v[8]) {
  const __m256i a = _mm256_hadd_epi32(_mm256_hadd_epi32(v[0], v[1]), _mm256_hadd_epi32(v[2], v[3]));
  const __m256i b = _mm256_hadd_epi32(_mm256_hadd_epi32(v[4], v[5]), _mm256_hadd_epi32(v[6], v[7]));
  // a holds blocks 0..3 in each 128-bit half, b blocks 4..7: add the halves.
  return _mm256_add_epi32(_mm256_permute2x128_si256(a, b, 0x20), _mm256_permute2x128_si256(a, b, 0x31));
}

WLLM_AVX2 inline int32_t total(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(s);
}

// The f16 scales of 8 consecutive blocks as floats (exact conversion).
template <typename Block>
WLLM_AVX2 inline __m256 scales8(const Block* b) {
  alignas(16) uint16_t d[8];
  for (int j = 0; j < 8; ++j) d[j] = b[j].d;
  return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(d)));
}

// Q4_0 quants of a block as 32 signed bytes in element order: the low
// nibbles are elements 0..15, the high nibbles 16..31, each minus 8.
WLLM_AVX2 inline __m256i q4_0_bytes(const uint8_t* qs) {
  const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m128i mask = _mm_set1_epi8(15);
  const __m128i lo = _mm_and_si128(packed, mask);
  const __m128i hi = _mm_and_si128(_mm_srli_epi16(packed, 4), mask);
  return _mm256_sub_epi8(_mm256_set_m128i(hi, lo), _mm256_set1_epi8(8));
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

WLLM_AVX2 float dot_q8_0_avx2(int64_t n, const void* row, const void* act) {
  return dot_blocks_q8_0<BlockQ8_0, block_sum_q8_0>(n, row, act);
}

WLLM_AVX2 float dot_q4_0_avx2(int64_t n, const void* row, const void* act) {
  return dot_blocks_q8_0<BlockQ4_0, block_sum_q4_0>(n, row, act);
}

constexpr DotKernel kAvx2Kernels[] = {
    {TensorType::kF32, dot_f32_avx2},   {TensorType::kF16, dot_f16_avx2}, {TensorType::kBF16, dot_bf16_avx2},
    {TensorType::kQ8_0, dot_q8_0_avx2}, {TensorType::kQ4_0, dot_q4_0_avx2},
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
