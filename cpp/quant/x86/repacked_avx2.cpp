// AVX2 kernels for Q4_K rows repacked at load as Q4_Kx8i4 (repack.h,
// blocks.h): the 8 rows of a group in the 8 lanes of every vector. A vector
// of codes holds 4 elements of each row; it meets the activation's matching
// 4 bytes (broadcast) in maddubs, and the 8 such products of a 32-element
// sub-block add up in int16 (each lane's 16 products are at most
// 16·15·128 < 2^15) before one madd applies the 8 rows' scales of that
// sub-block. So a block costs 9 multiplies per 32·8 products instead of the
// file layout's 16 (maddubs and madd per 32 products, gemm_avx2.cpp), and
// its 8 row sums come out in one vector with no horizontal reduction.
//
// The arithmetic per (row, activation) is the dot's (traits.h, ref
// dot_k4_like): exact integer sumi and summ per block, then term =
// (dx·d)·sumi − (dx·dmin)·summ added into accumulator block % 8, and the
// reference's reduction of the 8.
#include "quant/kernels.h"

#if defined(__x86_64__) || defined(__i386__)

#include <iterator>
#include <type_traits>
#include <utility>

#include "quant/x86/avx2.h"

namespace wllm::avx2 {
namespace {

constexpr int kActTile = 4;  // activations per tile: 8 code vectors + 4 sums + temporaries fill the 16 registers

// 16 bytes of rows 0..3 (half 0) and 16 of rows 4..7 (half 1): lane r holds row r's.
WLLM_AVX2 inline __m256i load_halves(const uint8_t* half0, const uint8_t* half1) {
  const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(half0));
  return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), _mm_loadu_si128(reinterpret_cast<const __m128i*>(half1)), 1);
}

// Byte b of every 32-bit lane, zero-extended into both of its int16 halves
// (a madd multiplier for the lane's two int16 sums).
template <int b>
WLLM_AVX2 inline __m256i byte_in_both_halves(__m256i v) {
  constexpr auto mask = [](int e) { return static_cast<int>(0x80008000u | static_cast<uint32_t>(4 * e + b) * 0x00010001u); };
  return _mm256_shuffle_epi8(v, _mm256_setr_epi32(mask(0), mask(1), mask(2), mask(3), mask(0), mask(1), mask(2), mask(3)));
}

// Four bytes of a row as one broadcast int32.
WLLM_AVX2 inline __m256i broadcast4(const void* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm256_set1_epi32(v);
}

// A block's 6-bit scales and mins (k4_scale_min), lane r = row r, byte j % 4
// of each vector = sub-block j's.
struct Scales {
  __m256i sc03, sc47, m03, m47;
};

WLLM_AVX2 inline Scales decode_scales(const BlockQ4_Kx8& b) {
  const __m256i w0 = load_halves(b.scales[0], b.scales[1]);  // word w of row r's 12 scale bytes, lane r
  const __m256i w1 = load_halves(b.scales[0] + 16, b.scales[1] + 16);
  const __m256i w2 = load_halves(b.scales[0] + 32, b.scales[1] + 32);
  const __m256i low6 = _mm256_set1_epi8(63), low4 = _mm256_set1_epi8(15), low2 = _mm256_set1_epi8(3);
  const auto top2 = [&](__m256i w) WLLM_AVX2 {  // bits 6..7 of each byte, as bits 4..5
    return _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(w, 6), low2), 4);
  };
  return {_mm256_and_si256(w0, low6), _mm256_or_si256(_mm256_and_si256(w2, low4), top2(w0)),
          _mm256_and_si256(w1, low6), _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(w2, 4), low4), top2(w1))};
}

// Sub-block j's scale (kMins: min) of each row in both int16 halves of its lane.
template <int j, bool kMins>
WLLM_AVX2 inline __m256i sub_block(const Scales& s) {
  const __m256i v = kMins ? (j < 4 ? s.m03 : s.m47) : (j < 4 ? s.sc03 : s.sc47);
  return byte_in_both_halves<j % 4>(v);
}

// Sub-block j's contribution Σ sc_j·u·x to the 8 rows' sumi, for each of
// kActs activations (x[a]: its block's 256 bytes).
template <int j, int kActs>
WLLM_AVX2 inline void add_sub_block(const BlockQ4_Kx8& b, const Scales& s, const int8_t* const* x, __m256i* sumi) {
  const __m256i nibble = _mm256_set1_epi8(15);
  __m256i codes[8];  // [c]: elements 4c..4c+3; [4 + c]: 16 + 4c..
#pragma GCC unroll 4
  for (int c = 0; c < 4; ++c) {
    const __m256i packed = load_halves(b.qs[j][0] + 16 * c, b.qs[j][1] + 16 * c);
    codes[c] = _mm256_and_si256(packed, nibble);
    codes[4 + c] = _mm256_and_si256(_mm256_srli_epi16(packed, 4), nibble);
  }
  const __m256i scale = sub_block<j, false>(s);
#pragma GCC unroll 4
  for (int a = 0; a < kActs; ++a) {
    const int8_t* xj = x[a] + 32 * j;
    __m256i pairs = _mm256_maddubs_epi16(codes[0], broadcast4(xj));
#pragma GCC unroll 8
    for (int k = 1; k < 8; ++k) {
      const int offset = k < 4 ? 4 * k : 16 + 4 * (k - 4);
      pairs = _mm256_add_epi16(pairs, _mm256_maddubs_epi16(codes[k], broadcast4(xj + offset)));
    }
    sumi[a] = _mm256_add_epi32(sumi[a], _mm256_madd_epi16(pairs, scale));
  }
}

// summ = Σ_j m_j·(bsums[2j] + bsums[2j + 1]) for each activation.
template <int j, int kActs>
WLLM_AVX2 inline void add_mins(const Scales& s, const BlockQ8_K* const* x, int64_t ib, __m256i* summ) {
  const __m256i m = sub_block<j, true>(s);
#pragma GCC unroll 4
  for (int a = 0; a < kActs; ++a) summ[a] = _mm256_add_epi32(summ[a], _mm256_madd_epi16(m, broadcast4(x[a][ib].bsums + 2 * j)));
}

template <int... j, typename F>
WLLM_AVX2 inline void for_sub_blocks(std::integer_sequence<int, j...>, F f) {
  (f(std::integral_constant<int, j>{}), ...);
}

// One group of 8 rows (w: its nb blocks) against kActs activations; out[a]:
// where activation a's 8 outputs go.
template <int kActs>
WLLM_AVX2 void group_tile(int64_t nb, const BlockQ4_Kx8* w, const BlockQ8_K* const* x, float* const* out) {
  __m256 acc[kActs][8];
  for (auto& act : acc) {
    for (__m256& v : act) v = _mm256_setzero_ps();
  }
  for (int64_t ib = 0; ib < nb; ++ib) {
    const BlockQ4_Kx8& b = w[ib];
    const Scales s = decode_scales(b);
    const int8_t* qs[kActs];
    __m256i sumi[kActs], summ[kActs];
    for (int a = 0; a < kActs; ++a) {
      qs[a] = x[a][ib].qs;
      sumi[a] = summ[a] = _mm256_setzero_si256();
    }
    for_sub_blocks(std::make_integer_sequence<int, 8>{}, [&](auto j) WLLM_AVX2 { add_sub_block<j.value, kActs>(b, s, qs, sumi); });
    for_sub_blocks(std::make_integer_sequence<int, 8>{}, [&](auto j) WLLM_AVX2 { add_mins<j.value, kActs>(s, x, ib, summ); });
    const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.d)));
    const __m256 dmin = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.dmin)));
    for (int a = 0; a < kActs; ++a) {
      const __m256 dx = _mm256_set1_ps(x[a][ib].d);
      const __m256 t1 = _mm256_mul_ps(_mm256_mul_ps(dx, d), _mm256_cvtepi32_ps(sumi[a]));
      const __m256 t2 = _mm256_mul_ps(_mm256_mul_ps(dx, dmin), _mm256_cvtepi32_ps(summ[a]));
      acc[a][ib % 8] = _mm256_add_ps(acc[a][ib % 8], _mm256_sub_ps(t1, t2));
    }
  }
  for (int a = 0; a < kActs; ++a) _mm256_storeu_ps(out[a], sum_lanes8_each(acc[a]));
}

// Every group of rows against activations a0 .. a0 + kActs − 1.
template <int kActs>
WLLM_AVX2 void groups_against(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                              int64_t act_stride, int a0, float* out, int64_t out_stride) {
  const BlockQ8_K* x[kActs];
  for (int a = 0; a < kActs; ++a) {
    x[a] = reinterpret_cast<const BlockQ8_K*>(static_cast<const uint8_t*>(acts) + (a0 + a) * act_stride);
  }
  for (int r0 = 0; r0 < n_rows; r0 += 8) {
    float* dst[kActs];
    for (int a = 0; a < kActs; ++a) dst[a] = out + (a0 + a) * out_stride + r0;
    group_tile<kActs>(n / kQK_K, reinterpret_cast<const BlockQ4_Kx8*>(static_cast<const uint8_t*>(rows) + r0 * row_stride),
                      x, dst);
  }
}

WLLM_AVX2 void gemm_q4_Kx8i4(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                             int64_t act_stride, int n_acts, float* out, int64_t out_stride) {
  int a0 = 0;
  for (; a0 + kActTile <= n_acts; a0 += kActTile) {
    groups_against<kActTile>(n, rows, row_stride, n_rows, acts, act_stride, a0, out, out_stride);
  }
  switch (n_acts - a0) {
    case 3: groups_against<3>(n, rows, row_stride, n_rows, acts, act_stride, a0, out, out_stride); break;
    case 2: groups_against<2>(n, rows, row_stride, n_rows, acts, act_stride, a0, out, out_stride); break;
    case 1: groups_against<1>(n, rows, row_stride, n_rows, acts, act_stride, a0, out, out_stride); break;
    default: break;
  }
}

WLLM_AVX2 void matvec_q4_Kx8i4(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out) {
  groups_against<1>(n, rows, row_stride, n_rows, act, 0, 0, out, 0);
}

constexpr RepackedType kAvx2Repacked[] = {
    {"q4_Kx8i4", TensorType::kQ4_K, 8, ref::repack_q4_Kx8i4, ref::unpack_q4_Kx8i4, matvec_q4_Kx8i4, gemm_q4_Kx8i4},
};

}  // namespace
}  // namespace wllm::avx2

namespace wllm {

const RepackedType* avx2_repacked_types(int* count) {
  size_t kernels = 0;
  avx2_dot_kernels(&kernels);  // empty where this CPU has no AVX2
  *count = kernels > 0 ? static_cast<int>(std::size(avx2::kAvx2Repacked)) : 0;
  return *count > 0 ? avx2::kAvx2Repacked : nullptr;
}

}  // namespace wllm

#else  // not x86

namespace wllm {
const RepackedType* avx2_repacked_types(int* count) {
  *count = 0;
  return nullptr;
}
}  // namespace wllm

#endif
