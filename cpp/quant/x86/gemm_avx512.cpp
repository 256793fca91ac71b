// AVX-512 tiled kernels for the Q8_0-activation family (Q4_0, Q5_0, Q8_0),
// with AVX512-VNNI's vpdpbusd (4 byte products summed into each int32 lane).
// The scheme of the AVX2 kernel (gemm_avx2.cpp), twice as wide: the 16 lanes
// are 16 weight rows, a block of the 16 rows is decoded once and transposed
// so that vector k holds elements 4k..4k+3 of every row, and each
// activation's 4-byte groups are broadcast to all lanes. vpdpbusd wants one
// unsigned side: the activations go in plus 128 (x ^ 0x80, which the
// broadcast load folds into an xor), the codes signed, and 128·Σ codes per
// row is taken off: Σ (x + 128)·q − 128·Σ q = Σ x·q, exact in int32. Then
// term = (d_w·d_x)·sum goes into the accumulator of (activation, block % 8)
// lane by lane: the reference's float operations, so every output is the
// dot's bits.
//
// Every other type keeps its AVX2 kernels; avx512_dot_kernels() is the AVX2
// list with these gemms in place.
#include "quant/kernels.h"

#if defined(__x86_64__) || defined(__i386__)

#include <vector>

// GCC 12's AVX-512 headers start masked intrinsics from deliberately
// undefined registers, which -Wmaybe-uninitialized reports (a known false
// positive of that header, not of this code).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "quant/gemm_tile.h"
#include "quant/x86/avx2.h"

#define WLLM_AVX512 __attribute__((target("avx2,f16c,avx512f,avx512bw,avx512vl,avx512vnni")))

namespace wllm::avx2 {
namespace {

constexpr int kRowLanes = 16;  // weight rows per tile (one per 32-bit lane)
constexpr int kActChunk = 32;  // activations sharing one decoded tile

// sum_lanes8 of the same lane of eight accumulators at once.
WLLM_AVX512 inline __m512 sum_lanes8_each_512(const __m512 a[8]) {
  const __m512 s0 = _mm512_add_ps(a[0], a[4]), s1 = _mm512_add_ps(a[1], a[5]);
  const __m512 s2 = _mm512_add_ps(a[2], a[6]), s3 = _mm512_add_ps(a[3], a[7]);
  return _mm512_add_ps(_mm512_add_ps(s0, s2), _mm512_add_ps(s1, s3));
}

template <typename Block>
WLLM_AVX512 void gemm_q8_0_family_512(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                                      int64_t act_stride, int n_acts, float* out, int64_t out_stride) {
  const int64_t nb = n / kQK;
  const __m512i ones8 = _mm512_set1_epi8(1), bias = _mm512_set1_epi8(-128);
  for (int r0 = 0; r0 < n_rows; r0 += kRowLanes) {
    const Block *w[kRowLanes], *next[kRowLanes];
    tile_pointers(rows, row_stride, r0, n_rows, kRowLanes, w);
    tile_pointers(rows, row_stride, r0 + kRowLanes < n_rows ? r0 + kRowLanes : r0, n_rows, kRowLanes, next);
    const __mmask16 valid_rows = static_cast<__mmask16>((1u << tile_valid(r0, n_rows, kRowLanes)) - 1);
    for (int a0 = 0; a0 < n_acts; a0 += kActChunk) {
      const int na = tile_valid(a0, n_acts, kActChunk);
      const uint8_t* x0 = static_cast<const uint8_t*>(acts) + a0 * act_stride;
      // [activation][block % 8], lane r: row r0 + r. Each starts at +0 with its
      // first block (no 16 KB of zeroing per tile); slots of blocks that do
      // not exist (nb < 8) are zeroed after the loop.
      __m512 acc[kActChunk][8];
      for (int64_t ib = 0; ib < nb; ++ib) {
        if (a0 == 0) prefetch_rows(next, kRowLanes, ib);
        // The tile's codes: [k] lane r = codes 4k..4k+3 of row r (two 8-row
        // transposes side by side).
        __m256i low[8], high[8];
        alignas(32) uint16_t wd[kRowLanes];
#pragma GCC unroll 8
        for (int r = 0; r < 8; ++r) {
          low[r] = block_bytes(w[r][ib]);
          high[r] = block_bytes(w[8 + r][ib]);
          wd[r] = w[r][ib].d;
          wd[8 + r] = w[8 + r][ib].d;
        }
        transpose_8x32(low);
        transpose_8x32(high);
        __m512i codes[8], code_sums = _mm512_setzero_si512();
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) {
          codes[k] = _mm512_inserti64x4(_mm512_castsi256_si512(low[k]), high[k], 1);
          code_sums = _mm512_dpbusd_epi32(code_sums, ones8, codes[k]);
        }
        const __m512i offsets = _mm512_slli_epi32(code_sums, 7);  // 128·Σ q per row
        const __m512 dw = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(wd)));
        for (int a = 0; a < na; ++a) {
          const BlockQ8_0& xb = reinterpret_cast<const BlockQ8_0*>(x0 + a * act_stride)[ib];
          __m512i sums[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};  // two chains: half the latency
#pragma GCC unroll 8
          for (int k = 0; k < 8; ++k) {
            int32_t group;
            std::memcpy(&group, xb.qs + 4 * k, sizeof group);
            const __m512i biased = _mm512_xor_si512(_mm512_set1_epi32(group), bias);  // x + 128, unsigned
            sums[k % 2] = _mm512_dpbusd_epi32(sums[k % 2], biased, codes[k]);
          }
          const __m512i sum = _mm512_sub_epi32(_mm512_add_epi32(sums[0], sums[1]), offsets);
          const __m512 dx = _mm512_cvtph_ps(_mm256_set1_epi16(static_cast<int16_t>(xb.d)));
          const __m512 d = _mm512_mul_ps(dw, dx);
          const __m512 prev = ib < 8 ? _mm512_setzero_ps() : acc[a][ib % 8];
          acc[a][ib % 8] = _mm512_add_ps(prev, _mm512_mul_ps(d, _mm512_cvtepi32_ps(sum)));
        }
      }
      for (int a = 0; a < na; ++a) {
        for (int64_t j = nb; j < 8; ++j) acc[a][j] = _mm512_setzero_ps();
      }
      for (int a = 0; a < na; ++a) {
        _mm512_mask_storeu_ps(out + (a0 + a) * out_stride + r0, valid_rows, sum_lanes8_each_512(acc[a]));
      }
    }
  }
}

void gemm_q4_0_avx512(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                      int64_t act_stride, int n_acts, float* out, int64_t out_stride) {
  gemm_q8_0_family_512<BlockQ4_0>(n, rows, row_stride, n_rows, acts, act_stride, n_acts, out, out_stride);
}
void gemm_q5_0_avx512(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                      int64_t act_stride, int n_acts, float* out, int64_t out_stride) {
  gemm_q8_0_family_512<BlockQ5_0>(n, rows, row_stride, n_rows, acts, act_stride, n_acts, out, out_stride);
}
void gemm_q8_0_avx512(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                      int64_t act_stride, int n_acts, float* out, int64_t out_stride) {
  gemm_q8_0_family_512<BlockQ8_0>(n, rows, row_stride, n_rows, acts, act_stride, n_acts, out, out_stride);
}

}  // namespace
}  // namespace wllm::avx2

namespace wllm {

const DotKernel* avx512_dot_kernels(size_t* count) {
  static const std::vector<DotKernel> kernels = [] {
    std::vector<DotKernel> list;
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
        !__builtin_cpu_supports("avx512vl") || !__builtin_cpu_supports("avx512vnni")) {
      return list;
    }
    size_t n = 0;
    const DotKernel* avx2 = avx2_dot_kernels(&n);
    list.assign(avx2, avx2 + n);
    for (DotKernel& k : list) {
      if (k.type == TensorType::kQ4_0) k.gemm = avx2::gemm_q4_0_avx512;
      if (k.type == TensorType::kQ5_0) k.gemm = avx2::gemm_q5_0_avx512;
      if (k.type == TensorType::kQ8_0) k.gemm = avx2::gemm_q8_0_avx512;
    }
    return list;
  }();
  *count = kernels.size();
  return kernels.data();
}

}  // namespace wllm

#else  // not x86

namespace wllm {
const DotKernel* avx512_dot_kernels(size_t* count) {
  *count = 0;
  return nullptr;
}
}  // namespace wllm

#endif
