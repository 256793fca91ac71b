// AVX2 single-activation kernels (matvec, the decode step) for the Q8_0-
// activation types. Each row is still dotted as the dot kernel does — eight
// blocks' exact integer sums at a time, term (d_w·d_x)·sum into lane
// block % 8 — but what depends only on the activation is prepared once per
// call instead of once per row: its block scales as floats and its block sums.
// The sums let Q4_0 use its nibbles unsigned, as they are stored:
// Σ (u − 8)·x = Σ u·x − 8·Σ x, and maddubs takes unsigned × signed bytes
// directly, which saves the sign trick and the −8 per block.
#include "quant/kernels.h"

#if defined(__x86_64__) || defined(__i386__)

#include "core/half.h"
#include "quant/x86/avx2.h"

namespace wllm::avx2 {
namespace {

constexpr int64_t kPreparedBlocks = 1024;  // 32768 elements per chunk, 8 KiB of stack

// The activation's blocks [first, first + count): scales and sums.
struct PreparedActivation {
  alignas(32) float d[kPreparedBlocks];
  alignas(32) int32_t sum[kPreparedBlocks];
};

WLLM_AVX2 void prepare(const BlockQ8_0* x, int64_t count, PreparedActivation* p) {
  const __m256i ones8 = _mm256_set1_epi8(1), ones16 = _mm256_set1_epi16(1);
  for (int64_t ib = 0; ib < count; ++ib) {
    const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[ib].qs));
    p->sum[ib] = total(_mm256_madd_epi16(_mm256_maddubs_epi16(ones8, bytes), ones16));
    p->d[ib] = f16_to_f32(x[ib].d);
  }
}

// Per format: a block's integer sum against the activation's bytes as 8
// partial sums, and kOffset, what that sum exceeds Σ code·x by per unit of Σ x.
struct Q4_0Sum {
  static constexpr int32_t kOffset = 8;
  WLLM_AVX2 static __m256i sum(const BlockQ4_0& w, const int8_t* x) {
    // The 16 bytes in both halves (a load, no shuffle), the upper half shifted
    // by 4 within dwords: masked, the low nibbles (elements 0..15) then the
    // high ones (16..31).
    const __m256i both = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w.qs)));
    const __m256i nibbles =
        _mm256_and_si256(_mm256_srlv_epi32(both, _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4)), _mm256_set1_epi8(15));
    const __m256i pairs = _mm256_maddubs_epi16(nibbles, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)));
    return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));  // pairs are at most 2·15·127: exact
  }
};

template <typename Block>
struct SignedCodesSum {
  static constexpr int32_t kOffset = 0;
  WLLM_AVX2 static __m256i sum(const Block& w, const int8_t* x) {
    return dot_i8x32(block_bytes(w), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)));
  }
};

template <typename Block, typename Sum>
WLLM_AVX2 void matvec_blocks(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act,
                             float* out) {
  const int64_t nb = n / kQK;
  const BlockQ8_0* x = static_cast<const BlockQ8_0*>(act);
  PreparedActivation prepared;
  const bool prepared_once = nb <= kPreparedBlocks;  // else re-prepared per chunk of each row
  if (prepared_once) prepare(x, nb, &prepared);
  const __m256i offset = _mm256_set1_epi32(Sum::kOffset);
  for (int r = 0; r < n_rows; ++r) {
    const Block* w = reinterpret_cast<const Block*>(static_cast<const uint8_t*>(rows) + r * row_stride);
    __m256 acc = _mm256_setzero_ps();
    alignas(32) float lanes[8];
    for (int64_t c0 = 0; c0 < nb; c0 += kPreparedBlocks) {  // chunks are whole groups of 8
      const int64_t c1 = c0 + kPreparedBlocks < nb ? c0 + kPreparedBlocks : nb;
      if (!prepared_once) prepare(x + c0, c1 - c0, &prepared);
      const int64_t c8 = c0 + (c1 - c0) / 8 * 8;
      for (int64_t ib = c0; ib < c8; ib += 8) {
        __m256i partial[8];
#pragma GCC unroll 8
        for (int j = 0; j < 8; ++j) partial[j] = Sum::sum(w[ib + j], x[ib + j].qs);
        __m256i sums = sum_each(partial);
        if constexpr (Sum::kOffset != 0) {
          const __m256i x_sums = _mm256_load_si256(reinterpret_cast<const __m256i*>(prepared.sum + (ib - c0)));
          sums = _mm256_sub_epi32(sums, _mm256_mullo_epi32(offset, x_sums));
        }
        const __m256 sum = _mm256_cvtepi32_ps(sums);  // exact: |sum| < 2^24
        const __m256 d = _mm256_mul_ps(scales8(w + ib), _mm256_load_ps(prepared.d + (ib - c0)));
        acc = _mm256_add_ps(acc, _mm256_mul_ps(d, sum));
      }
      if (c8 == c1) continue;
      _mm256_store_ps(lanes, acc);  // the last few blocks, one at a time
      for (int64_t ib = c8; ib < c1; ++ib) {
        const int32_t sum = total(Sum::sum(w[ib], x[ib].qs)) - Sum::kOffset * prepared.sum[ib - c0];
        lanes[ib % 8] += (f16_to_f32(w[ib].d) * prepared.d[ib - c0]) * static_cast<float>(sum);
      }
      acc = _mm256_load_ps(lanes);
    }
    _mm256_store_ps(lanes, acc);
    out[r] = sum_lanes8(lanes);
  }
}

}  // namespace

void matvec_q4_0_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out) {
  matvec_blocks<BlockQ4_0, Q4_0Sum>(n, rows, row_stride, n_rows, act, out);
}
void matvec_q5_0_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out) {
  matvec_blocks<BlockQ5_0, SignedCodesSum<BlockQ5_0>>(n, rows, row_stride, n_rows, act, out);
}
void matvec_q8_0_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out) {
  matvec_blocks<BlockQ8_0, SignedCodesSum<BlockQ8_0>>(n, rows, row_stride, n_rows, act, out);
}

}  // namespace wllm::avx2

#endif
