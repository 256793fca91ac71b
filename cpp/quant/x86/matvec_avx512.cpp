// AVX-512 single-activation kernels (the decode step). Q4_0, Q5_0 and Q8_0 are
// VNNI matvecs through the shared driver (matvec_driver.inc): vpdpbusd takes
// unsigned × signed bytes and sums each 4 products in int32 in one
// instruction. Q4_0's nibbles are unsigned as stored (Σ (u − 8)·x = Σ u·x −
// 8·Σ x), as are Q5_0's five-bit codes (− 16·Σ x); Q8_0's codes are made
// unsigned by flipping their sign bit (u = q + 128: Σ q·x = Σ u·x − 128·Σ x).
// Q4_K is a dot through the K-quant driver (dot_k_driver.inc) with avx2.h's
// scheme on 64 bytes at a time. All exact.
#include "quant/kernels.h"

#if defined(__x86_64__) || defined(__i386__)

// GCC 12's AVX-512 headers start some intrinsics from deliberately undefined
// registers, which -Wmaybe-uninitialized reports (as in gemm_avx512.cpp).
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include "core/half.h"
#include "quant/x86/avx2.h"

// The ISA for everything up to the matching pop (clang spells it differently).
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,f16c,avx512f,avx512bw,avx512vl,avx512vnni"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,f16c,avx512f,avx512bw,avx512vl,avx512vnni")
#endif

namespace wllm::avx512 {
namespace {

using namespace avx2;  // the reductions and scale loads the driver uses

// The word indices vpermt2w takes to copy two Q4_0 blocks' 16 code bytes
// (8 words from word 9k + 1: blocks are 9 words) into the 128-bit lanes
// [k, k, k + 1, k + 1] of a vector, for pair p = blocks 2p, 2p + 1 of a group
// of 8, from a window of two vectors starting at word 0 (pairs 0, 1) or 32.
struct PairWords {
  alignas(64) int16_t index[4][32];
  constexpr PairWords() : index{} {
    for (int p = 0; p < 4; ++p) {
      const int window = p < 2 ? 0 : 32;
      for (int half = 0; half < 2; ++half) {
        const int first = 9 * (2 * p + half) + 1 - window;
        for (int i = 0; i < 16; ++i) index[p][16 * half + i] = static_cast<int16_t>(first + i % 8);
      }
    }
  }
};
constexpr PairWords kPairWords;
alignas(64) constexpr int16_t kScaleWords[32] = {0, 9, 18, 27, 36, 45, 54, 63};  // each block's d

// Lanes 2i and 2i + 1 summed, for the 16 lanes of a then of b.
inline __m512i add_pairs(__m512i a, __m512i b) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  return _mm512_add_epi32(_mm512_permutex2var_epi32(a, even, b), _mm512_permutex2var_epi32(a, odd, b));
}

// Σ u·x of a block's 32 unsigned codes and the activation's 32 bytes, as 8
// partial int32 sums.
inline __m256i sum_unsigned(__m256i u, const int8_t* x) {
  return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)));
}

struct Q4_0Sum {
  static constexpr int32_t kOffset = 8;
  static __m256i sum(const BlockQ4_0& w, const int8_t* x) { return sum_unsigned(q4_0_nibbles(w.qs), x); }
  // Eight blocks (144 bytes, three loads) at once: vpermt2w lays out two
  // blocks' codes per vector, a shift by 0 or 4 per 128-bit lane and a mask
  // give their 64 nibbles in element order, one vpdpbusd meets them with the
  // two blocks' activation bytes (x: 8 blocks' codes back to back). The 8
  // scales come from the same loads (words 0, 9, .., 63); the int32 lanes
  // fold into one total per block by lane pairs. Per 8 blocks this is about
  // half the instructions of 8 sum() calls and sum_each's hadds.
  static void sums8(const BlockQ4_0* w, const int8_t* x, __m256i* sums, __m256* scales) {
    const uint8_t* bytes = reinterpret_cast<const uint8_t*>(w);
    const __m512i v0 = _mm512_loadu_si512(bytes), v1 = _mm512_loadu_si512(bytes + 64);
    const __m512i v2 = _mm512_zextsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + 128)));
    const __m512i shift = _mm512_setr_epi64(0, 0, 4, 4, 0, 0, 4, 4), mask = _mm512_set1_epi8(15);
    __m512i pair_sums[4];
#pragma GCC unroll 4
    for (int p = 0; p < 4; ++p) {
      const __m512i index = _mm512_load_si512(kPairWords.index[p]);
      const __m512i codes = p < 2 ? _mm512_permutex2var_epi16(v0, index, v1) : _mm512_permutex2var_epi16(v1, index, v2);
      const __m512i nibbles = _mm512_and_si512(_mm512_srlv_epi64(codes, shift), mask);
      pair_sums[p] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), nibbles, _mm512_load_si512(x + 64 * p));
    }
    // [8 lanes of block 2p | 8 of 2p + 1] -> 4 lanes per block -> 2 -> 1.
    const __m512i by2 = add_pairs(add_pairs(pair_sums[0], pair_sums[1]), add_pairs(pair_sums[2], pair_sums[3]));
    *sums = _mm512_cvtepi64_epi32(_mm512_add_epi32(by2, _mm512_srli_epi64(by2, 32)));
    const __m512i scale_words = _mm512_load_si512(kScaleWords);
    *scales = _mm256_cvtph_ps(_mm512_castsi512_si128(_mm512_permutex2var_epi16(v0, scale_words, v1)));
  }
};

// Q5_0's codes are unsigned as built (nibble + 16·fifth bit, 0..31):
// Σ (u − 16)·x = Σ u·x − 16·Σ x.
struct Q5_0Sum {
  static constexpr int32_t kOffset = 16;
  static __m256i sum(const BlockQ5_0& w, const int8_t* x) { return sum_unsigned(q5_codes(w), x); }
};

struct Q8_0Sum {
  static constexpr int32_t kOffset = 128;
  static __m256i sum(const BlockQ8_0& w, const int8_t* x) {
    const __m256i codes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.qs));
    return sum_unsigned(_mm256_xor_si256(codes, _mm256_set1_epi8(static_cast<char>(0x80))), x);
  }
};

#include "quant/x86/matvec_driver.inc"

// Q4_K's block sums, 512 bits at a time: each 64 code bytes hold sub-blocks
// 4t, 4t + 1 (bytes 0..31, low and high nibbles) and 4t + 2, 4t + 3 (bytes
// 32..63), so the low nibbles meet the activation bytes of sub-blocks 4t and
// 4t + 2 (two 32-byte halves) in one maddubs, the high ones those of 4t + 1
// and 4t + 3, and each half's int16 pairs meet its sub-block's scale in madd.
// KScales::sc holds sc_j in int16 lanes 2j, 2j + 1; vpermw spreads two of
// them over the halves: 64 bytes at a time, where AVX2's dot takes 32
// (docs/performance.md).
struct KSumsQ4_K512 {
  static __m512i halves(const int8_t* lo, const int8_t* hi) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(lo))),
                              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(hi)), 1);
  }
  static __m512i scales(__m512i sc, int a, int b) {  // sc_a in int16 lanes 0..15, sc_b in 16..31
    const __m512i index = _mm512_inserti64x4(_mm512_set1_epi16(static_cast<int16_t>(2 * a)),
                                             _mm256_set1_epi16(static_cast<int16_t>(2 * b)), 1);
    return _mm512_permutexvar_epi16(index, sc);
  }
  // Inlined by force: GCC kept it out of line, returning the sums through memory.
  __attribute__((always_inline)) static KSums of(const BlockQ4_K& w, const BlockQ8_K& x) {
    const KScales s = k_scales(w);
    const __m512i sc = _mm512_castsi256_si512(s.sc), mask = _mm512_set1_epi8(15);
    __m512i sum = _mm512_setzero_si512();
#pragma GCC unroll 2
    for (int t = 0; t < 2; ++t) {
      const __m512i q = _mm512_loadu_si512(w.qs + 64 * t);
      const __m512i low = _mm512_and_si512(q, mask), high = _mm512_and_si512(_mm512_srli_epi16(q, 4), mask);
      const int8_t* xt = x.qs + 128 * t;
      const __m512i low_pairs = _mm512_maddubs_epi16(low, halves(xt, xt + 64));
      const __m512i high_pairs = _mm512_maddubs_epi16(high, halves(xt + 32, xt + 96));
      sum = _mm512_add_epi32(sum, _mm512_madd_epi16(low_pairs, scales(sc, 4 * t, 4 * t + 2)));
      sum = _mm512_add_epi32(sum, _mm512_madd_epi16(high_pairs, scales(sc, 4 * t + 1, 4 * t + 3)));
    }
    const __m256i sumi = _mm256_add_epi32(_mm512_castsi512_si256(sum), _mm512_extracti64x4_epi64(sum, 1));
    return with_bsums(w, x, sumi, s.m);
  }
};

#include "quant/x86/dot_k_driver.inc"

}  // namespace

void matvec_q4_0_avx512(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out) {
  matvec_blocks<BlockQ4_0, Q4_0Sum>(n, rows, row_stride, n_rows, act, out);
}
void matvec_q5_0_avx512(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out) {
  matvec_blocks<BlockQ5_0, Q5_0Sum>(n, rows, row_stride, n_rows, act, out);
}
void matvec_q8_0_avx512(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out) {
  matvec_blocks<BlockQ8_0, Q8_0Sum>(n, rows, row_stride, n_rows, act, out);
}
float dot_q4_K_avx512(int64_t n, const void* row, const void* act) {
  return dot_k_blocks<BlockQ4_K, KSumsQ4_K512>(n, row, act);
}

}  // namespace wllm::avx512

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#endif
