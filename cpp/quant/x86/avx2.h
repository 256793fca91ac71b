// Block decoding and integer helpers shared by the AVX2 dot (dot_avx2.cpp) and
// tiled (gemm_avx2.cpp) kernels, so each block format is unpacked by one piece
// of code. Include only from x86 builds; every function carries the target
// attribute, so the rest of the binary keeps the baseline ISA.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "quant/blocks.h"
#include "quant/traits.h"

#define WLLM_AVX2 __attribute__((target("avx2,f16c")))

namespace wllm::avx2 {

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

// sum_lanes8 of the same lane of eight accumulators at once: lane c of the
// result is ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7)) over lane c of a[0..7].
WLLM_AVX2 inline __m256 sum_lanes8_each(const __m256 a[8]) {
  const __m256 s0 = _mm256_add_ps(a[0], a[4]), s1 = _mm256_add_ps(a[1], a[5]);
  const __m256 s2 = _mm256_add_ps(a[2], a[6]), s3 = _mm256_add_ps(a[3], a[7]);
  return _mm256_add_ps(_mm256_add_ps(s0, s2), _mm256_add_ps(s1, s3));
}

// Σ w_i·x_i over 32 signed bytes as 8 partial int32 sums (exact). maddubs
// multiplies unsigned by signed bytes, so |w| meets x with w's sign moved
// onto it; a pair of products is at most 2·128·127, inside int16. x must not
// hold -128 (negating it would wrap): our activation quantizers (Q8_0, Q8_K)
// produce [-127, 127] only; weights may hold any byte.
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

// Transposes 8 vectors of 8 int32 in place: v[k] lane r <- v[r] lane k.
WLLM_AVX2 inline void transpose_8x32(__m256i v[8]) {
  __m256i t[8], u[8];
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_epi32(v[2 * i], v[2 * i + 1]);      // r, r+1 of lanes 0, 1 | 4, 5
    t[2 * i + 1] = _mm256_unpackhi_epi32(v[2 * i], v[2 * i + 1]);  // lanes 2, 3 | 6, 7
  }
#pragma GCC unroll 2
  for (int i = 0; i < 2; ++i) {
    u[4 * i] = _mm256_unpacklo_epi64(t[4 * i], t[4 * i + 2]);      // rows 4i..4i+3 of lane 0 | 4
    u[4 * i + 1] = _mm256_unpackhi_epi64(t[4 * i], t[4 * i + 2]);  // lane 1 | 5
    u[4 * i + 2] = _mm256_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);  // lane 2 | 6
    u[4 * i + 3] = _mm256_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);  // lane 3 | 7
  }
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    v[k] = _mm256_permute2x128_si256(u[k], u[4 + k], 0x20);
    v[k + 4] = _mm256_permute2x128_si256(u[k], u[4 + k], 0x31);
  }
}

WLLM_AVX2 inline int32_t total(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(s);
}

// Eight f16 values as floats (exact conversion).
WLLM_AVX2 inline __m256 f16x8_to_f32(const uint16_t h[8]) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h)));
}

// The f16 scales of 8 consecutive blocks as floats (exact conversion).
template <typename Block>
WLLM_AVX2 inline __m256 scales8(const Block* b) {
  alignas(16) uint16_t d[8];
  for (int j = 0; j < 8; ++j) d[j] = b[j].d;
  return f16x8_to_f32(d);
}

// One f16 as 8 copies of its float value (exact conversion).
WLLM_AVX2 inline __m256 splat_f16(uint16_t h) { return _mm256_cvtph_ps(_mm_set1_epi16(static_cast<int16_t>(h))); }

// The nibbles of 16 packed bytes (Q4_0, Q4_1) as 32 unsigned bytes in element
// order: the low nibbles are elements 0..15, the high nibbles 16..31.
WLLM_AVX2 inline __m256i nibbles_32(const uint8_t* qs) {
  const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m128i mask = _mm_set1_epi8(15);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(packed, 4), mask), _mm_and_si128(packed, mask));
}

// Q4_0's nibbles as 32 unsigned bytes in element order (the codes plus 8):
// the 16 bytes loaded into both halves (no shuffle), the upper half shifted
// to its high nibbles within dwords, then masked.
WLLM_AVX2 inline __m256i q4_0_nibbles(const uint8_t* qs) {
  const __m256i both = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)));
  return _mm256_and_si256(_mm256_srlv_epi32(both, _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4)), _mm256_set1_epi8(15));
}

// Q4_0 quants of a block as 32 signed bytes in element order: the nibbles minus 8.
WLLM_AVX2 inline __m256i q4_0_bytes(const uint8_t* qs) { return _mm256_sub_epi8(nibbles_32(qs), _mm256_set1_epi8(8)); }

// Q5_0/Q5_1 codes of a block, 0..31: the nibbles plus a fifth bit per element
// (bit i of the 32-bit qh for element i).
template <typename Block>
WLLM_AVX2 inline __m256i q5_codes(const Block& b) {
  uint32_t qh;
  std::memcpy(&qh, b.qh, sizeof qh);
  // Byte i/8 of qh into element i, then test bit i % 8.
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int32_t>(qh)),
      _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0x0000000000000000));
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
  const __m256i high = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), _mm256_set1_epi8(16));
  return _mm256_or_si256(nibbles_32(b.qs), high);
}

// Q5_0: the codes minus 16.
WLLM_AVX2 inline __m256i q5_0_bytes(const BlockQ5_0& b) { return _mm256_sub_epi8(q5_codes(b), _mm256_set1_epi8(16)); }

// Σ u_i·x_i over 32 unsigned codes u < 128 and 32 signed bytes x, as 8 partial
// int32 sums (exact: a pair of products is at most 2·127·128, inside
// maddubs' int16).
WLLM_AVX2 inline __m256i dot_u8x32(__m256i u, __m256i x) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), _mm256_set1_epi16(1));
}

// Prefetches block ib of `count` rows. Tiled kernels call it for the next
// row tile while they compute this one: a tile reads its rows as that many
// interleaved streams, more than the hardware prefetcher follows, and
// weights come cold from memory (without it, ~1/3 of the time in big models
// is spent waiting for them).
template <typename Block>
inline void prefetch_rows(const Block* const* rows, int count, int64_t ib) {
  for (int r = 0; r < count; ++r) _mm_prefetch(reinterpret_cast<const char*>(rows[r] + ib), _MM_HINT_T0);
}

// Asks for the kSize bytes that start kDotPrefetchBytes past p, one request
// per 64-byte line (a prefetch past the end of a buffer cannot fault). A
// single-row dot streams its row alone, which the hardware prefetcher should
// follow, but it fell behind on rows that are not a whole number of lines
// (docs/performance.md). Asking ~4.5 KB ahead (past the row's end into the
// next) closes the gap.
constexpr int kDotPrefetchBytes = 4608;
template <int kSize>
inline void prefetch_ahead(const void* p) {
  const char* ahead = static_cast<const char*>(p) + kDotPrefetchBytes;
  for (int line = 0; line < (kSize + 63) / 64; ++line) _mm_prefetch(ahead + 64 * line, _MM_HINT_T0);
}

// The signed codes of a block against Q8_0, one overload per weight format.
WLLM_AVX2 inline __m256i block_bytes(const BlockQ4_0& b) { return q4_0_bytes(b.qs); }
WLLM_AVX2 inline __m256i block_bytes(const BlockQ5_0& b) { return q5_0_bytes(b); }
WLLM_AVX2 inline __m256i block_bytes(const BlockQ8_0& b) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs));
}

// ---- K-quant blocks against Q8_K ----------------------------------------------
//
// Every K-quant block goes through the same integer scheme, in the dot and
// tiled kernels alike: its codes as unsigned bytes u < 64 in 8 groups of 32
// elements (group_codes), met by the activation bytes with maddubs, and each
// 16 elements' int16 pair sums times their sub-block's scale (madd), all
// exact. What bsums[j] (the sum of activation bytes 16j..16j+15) is
// multiplied by, KScales::m, then gives either the min term (Q2_K, Q4_K,
// Q5_K: summ = Σ_j m_j·bsums[j]) or takes off the codes' offset (Q3_K, Q6_K,
// whose q = u − offset: sumi = Σ sc·u·x − Σ_j m_j·bsums[j], m_j = offset·sc_j).

// A block's scales as int16, one lane per 16-element sub-block j (a 32-element
// sub-block's value in both of its lanes).
struct KScales {
  __m256i sc;  // sub-block scale (Q3_K: bias removed)
  __m256i m;   // bsums[j] weight: the min, or offset·sc_j
};

// 16 bytes that scalar code just wrote (the whole-block scale decoders of
// blocks.h) as a vector, moved through two 64-bit registers: one 16-byte
// load of smaller pending stores is not forwarded from them and stalls (it
// slowed the Q3_K dot badly; docs/performance.md).
WLLM_AVX2 inline __m128i from_scalar_bytes(const uint8_t bytes[16]) {
  int64_t half[2];
  std::memcpy(half, bytes, 16);
  return _mm_insert_epi64(_mm_cvtsi64_si128(half[0]), half[1], 1);
}

WLLM_AVX2 inline KScales k_scales(const BlockQ2_K& b) {  // scales[j] = sc | m << 4
  const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales));
  const __m128i mask = _mm_set1_epi8(15);
  return {_mm256_cvtepu8_epi16(_mm_and_si128(packed, mask)),
          _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), mask))};
}

WLLM_AVX2 inline KScales k_scales(const BlockQ3_K& b) {  // q = u − 4
  uint8_t biased[16];
  q3_K_scales(b.scales, biased);
  const __m256i sc = _mm256_sub_epi16(_mm256_cvtepu8_epi16(from_scalar_bytes(biased)), _mm256_set1_epi16(32));
  return {sc, _mm256_slli_epi16(sc, 2)};
}

template <typename Block>  // Q4_K, Q5_K: 32-element sub-blocks
WLLM_AVX2 inline KScales k4_scales(const Block& b) {
  uint8_t sm[16];
  k4_scales_mins(b.scales, sm);
  const __m128i v = from_scalar_bytes(sm);
  const __m128i pairs_sc = _mm_unpacklo_epi8(v, v), pairs_m = _mm_unpackhi_epi8(v, v);
  return {_mm256_cvtepu8_epi16(pairs_sc), _mm256_cvtepu8_epi16(pairs_m)};
}
WLLM_AVX2 inline KScales k_scales(const BlockQ4_K& b) { return k4_scales(b); }
WLLM_AVX2 inline KScales k_scales(const BlockQ5_K& b) { return k4_scales(b); }

WLLM_AVX2 inline KScales k_scales(const BlockQ6_K& b) {  // q = u − 32
  const __m256i sc = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales)));
  return {sc, _mm256_slli_epi16(sc, 5)};
}

// For madd against group k (elements 32k..32k+31): the scale of sub-block 2k
// in lanes 0..7, of 2k + 1 in lanes 8..15.
WLLM_AVX2 inline __m256i scale_pair(__m256i sc, int k) {
  const __m256i both = _mm256_permutevar8x32_epi32(sc, _mm256_set1_epi32(k));  // int32 lane k = (2k, 2k + 1)
  return _mm256_shuffle_epi8(both, _mm256_set_epi64x(0x0302030203020302, 0x0302030203020302, 0x0100010001000100,
                                                     0x0100010001000100));
}

// Bit `from` of every byte of v moved to bit `to`, the other bits cleared.
WLLM_AVX2 inline __m256i move_bit(__m256i v, int from, int to) {
  const __m256i moved = from > to ? _mm256_srli_epi16(v, from - to) : _mm256_slli_epi16(v, to - from);
  return _mm256_and_si256(moved, _mm256_set1_epi8(static_cast<char>(1 << to)));
}

// The unsigned codes u of group k (elements 32k..32k+31), as blocks.h lays
// them out. Q2_K: bits 2(k % 4).. of qs[32(k / 4) + l].
WLLM_AVX2 inline __m256i group_codes(const BlockQ2_K& b, int k) {
  const __m256i qs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * (k / 4)));
  return _mm256_and_si256(_mm256_srli_epi16(qs, 2 * (k % 4)), _mm256_set1_epi8(3));
}

// Q3_K: Q2_K's bits plus bit k of hmask[l] as bit 2 (u = q + 4).
WLLM_AVX2 inline __m256i group_codes(const BlockQ3_K& b, int k) {
  const __m256i qs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * (k / 4)));
  const __m256i low = _mm256_and_si256(_mm256_srli_epi16(qs, 2 * (k % 4)), _mm256_set1_epi8(3));
  return _mm256_or_si256(low, move_bit(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.hmask)), k, 2));
}

// Q4_K: nibble k % 2 of qs[32(k / 2) + l].
WLLM_AVX2 inline __m256i group_codes(const BlockQ4_K& b, int k) {
  const __m256i qs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * (k / 2)));
  return _mm256_and_si256(k % 2 ? _mm256_srli_epi16(qs, 4) : qs, _mm256_set1_epi8(15));
}

// Q5_K: Q4_K's nibble plus bit k of qh[l] as bit 4.
WLLM_AVX2 inline __m256i group_codes(const BlockQ5_K& b, int k) {
  const __m256i qs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * (k / 2)));
  const __m256i low = _mm256_and_si256(k % 2 ? _mm256_srli_epi16(qs, 4) : qs, _mm256_set1_epi8(15));
  return _mm256_or_si256(low, move_bit(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qh)), k, 4));
}

// Q6_K (h = k / 4, g = k % 4): nibble g / 2 of ql[64h + 32(g % 2) + l], plus
// bits 2g..2g+1 of qh[32h + l] on top (u = q + 32).
WLLM_AVX2 inline __m256i group_codes(const BlockQ6_K& b, int k) {
  const int h = k / 4, g = k % 4;
  const __m256i ql = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.ql + 64 * h + 32 * (g % 2)));
  const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qh + 32 * h));
  const __m256i low = _mm256_and_si256(g / 2 ? _mm256_srli_epi16(ql, 4) : ql, _mm256_set1_epi8(15));
  const __m256i high = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * g), _mm256_set1_epi8(3));
  return _mm256_or_si256(low, _mm256_slli_epi16(high, 4));
}

// Group k's scaled sum Σ_{j ∈ {2k, 2k+1}} sc_j·Σ_{16 elements of j} u·x as
// 8 partial int32 sums: maddubs pairs are at most 2·63·127 and madd by a
// scale of at most 128 in magnitude stays far inside int32.
WLLM_AVX2 inline __m256i group_sum(__m256i codes, const int8_t* x, __m256i scale) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(codes, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x))), scale);
}

// A block's exact integer sums as partial-sum vectors: sumi, with the codes'
// offset already taken off (Q3_K, Q6_K), and summ (the types with mins).
struct KSums {
  __m256i sumi, summ;
};

// KSums from a block's scaled code sums Σ sc·u·x (partial sums) and KScales::m.
template <typename Block>
WLLM_AVX2 inline KSums with_bsums(const Block& w, const BlockQ8_K& x, __m256i scaled, __m256i m) {
  const __m256i by_bsums = _mm256_madd_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.bsums)), m);
  if constexpr (requires { w.dmin; }) {
    return {scaled, by_bsums};
  } else {
    return {_mm256_sub_epi32(scaled, by_bsums), _mm256_setzero_si256()};
  }
}

// The activation quantizers (act_quant_avx2.cpp).
void from_float_q8_0_avx2(const float* src, void* dst, int64_t n);
void from_float_q8_K_avx2(const float* src, void* dst, int64_t n);
void from_float_f16_avx2(const float* src, void* dst, int64_t n);

// The tiled kernels (gemm_avx2.cpp), registered with the dots in dot_avx2.cpp.
void gemm_f32_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts, int64_t act_stride,
                   int n_acts, float* out, int64_t out_stride);
void gemm_f16_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts, int64_t act_stride,
                   int n_acts, float* out, int64_t out_stride);
void gemm_bf16_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts, int64_t act_stride,
                    int n_acts, float* out, int64_t out_stride);
void gemm_q4_0_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts, int64_t act_stride,
                    int n_acts, float* out, int64_t out_stride);
void gemm_q5_0_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts, int64_t act_stride,
                    int n_acts, float* out, int64_t out_stride);
void gemm_q8_0_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts, int64_t act_stride,
                    int n_acts, float* out, int64_t out_stride);
// Every K-quant, for BlockQ2_K .. BlockQ6_K.
template <typename Block>
void gemm_k_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                 int64_t act_stride, int n_acts, float* out, int64_t out_stride);

// The single-activation kernels (matvec_avx2.cpp; the float ones, the float
// gemm's tiles with one activation, in gemm_avx2.cpp).
void matvec_f32_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out);
void matvec_f16_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out);
void matvec_bf16_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out);
void matvec_q4_0_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out);
void matvec_q5_0_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out);
void matvec_q8_0_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out);

}  // namespace wllm::avx2
