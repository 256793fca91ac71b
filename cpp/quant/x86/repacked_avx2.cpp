// AVX2 kernels for rows repacked at load (repack.h, blocks.h): Q4_K as
// Q4_Kx8i4 and Q5_0 as Q5_0x8i4, the 8 rows of a group in the 8 lanes of
// every vector. A vector of codes holds 4 elements of each row; it meets the
// activation's matching 4 bytes (broadcast) in maddubs, and the products add
// up in int16 before a madd widens them. For Q4_K that madd applies the 8
// rows' scales of one sub-block after all 8 of its maddubs (each lane's 16
// products are at most 16·15·128 < 2^15), so a block costs 9 multiplies per
// 32·8 products instead of the file layout's 16 (maddubs and madd per 32
// products, gemm_avx2.cpp). Every block's 8 row sums come out in one vector
// with no horizontal reduction, and Q5_0's fifth bits cost a shift and a
// mask per 32 codes, where the file's layout spreads each row's 32 bits
// across a vector of its own. Q6_K stays in the file's layout: read from
// memory (every decode step), its Q6_Kx8 kernel ran slower than the file's
// (docs/performance.md).
//
// The arithmetic per (row, activation) is the dot's (traits.h, ref
// dot_k4_like, dot_q5_0_q8_0): exact integer sums per block, then its float
// term added into accumulator block % 8, and the reference's reduction of
// the 8.
#include "quant/kernels.h"

#if defined(__x86_64__) || defined(__i386__)

#include <iterator>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/half.h"
#include "quant/x86/avx2.h"

namespace wllm::avx2 {
namespace {

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

// f(j) for j = 0 .. N − 1, each a compile-time constant (so shifts and
// shuffle masks that depend on it are immediates).
template <int... j, typename F>
WLLM_AVX2 inline void for_each_constant(std::integer_sequence<int, j...>, F f) {
  (f(std::integral_constant<int, j>{}), ...);
}
template <int N, typename F>
WLLM_AVX2 inline void for_each_constant(F f) {
  for_each_constant(std::make_integer_sequence<int, N>{}, f);
}

// Prefetches the block about 2 KiB ahead of block ib of a group (two of
// Q4_K's, 12 of Q5_0's; into the next group's rows at the end: groups lie
// one after another), a line at a time. A prefetch never faults, so the one
// past the last group is harmless.
template <typename Packed>
WLLM_AVX2 inline void prefetch_block_ahead(const Packed* w, int64_t ib) {
  constexpr int64_t kAhead = (2048 + sizeof(Packed) - 1) / sizeof(Packed);
  const uintptr_t ahead = reinterpret_cast<uintptr_t>(w) + (ib + kAhead) * sizeof(Packed);
  for (size_t line = 0; line < sizeof(Packed); line += 64) _mm_prefetch(reinterpret_cast<const char*>(ahead + line), _MM_HINT_T0);
}

// Each format adds block ib of a group of 8 rows against kActs activations:
// its float term, lane r = row r, into acc[8a + ib % 8] (the dot's
// accumulators of activation a).
struct Q4_K {
  using Packed = BlockQ4_Kx8;
  static constexpr int kGemmActs = 4;  // 8 code vectors + 4 sums + temporaries fill the 16 registers
  template <int kActs>
  WLLM_AVX2 static void add_block(const BlockQ4_Kx8& b, const BlockQ8_K* const* x, int64_t ib, __m256* acc);
};

template <int kActs>
WLLM_AVX2 void Q4_K::add_block(const BlockQ4_Kx8& b, const BlockQ8_K* const* x, int64_t ib, __m256* acc) {
  const Scales s = decode_scales(b);
  const int8_t* qs[kActs];
  __m256i sumi[kActs], summ[kActs];
  for (int a = 0; a < kActs; ++a) {
    qs[a] = x[a][ib].qs;
    sumi[a] = summ[a] = _mm256_setzero_si256();
  }
  for_each_constant<8>([&](auto j) WLLM_AVX2 { add_sub_block<j.value, kActs>(b, s, qs, sumi); });
  for_each_constant<8>([&](auto j) WLLM_AVX2 { add_mins<j.value, kActs>(s, x, ib, summ); });
  const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.d)));
  const __m256 dmin = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.dmin)));
  for (int a = 0; a < kActs; ++a) {
    const __m256 dx = _mm256_set1_ps(x[a][ib].d);
    const __m256 t1 = _mm256_mul_ps(_mm256_mul_ps(dx, d), _mm256_cvtepi32_ps(sumi[a]));
    const __m256 t2 = _mm256_mul_ps(_mm256_mul_ps(dx, dmin), _mm256_cvtepi32_ps(summ[a]));
    acc[8 * a + ib % 8] = _mm256_add_ps(acc[8 * a + ib % 8], _mm256_sub_ps(t1, t2));
  }
}

// ---- The K-quants' loops -----------------------------------------------------

// Groups 0 .. n_groups − 1 of 8 rows (rows: the first; nb blocks each)
// against kActs activations (x[a]; out[a]: where its outputs go, 8 per group).
template <typename Format, int kActs>
WLLM_AVX2 void run_groups(int64_t nb, const uint8_t* rows, int64_t row_stride, int n_groups, const BlockQ8_K* const* x,
                          float* const* out) {
  for (int g = 0; g < n_groups; ++g) {
    const auto* w = reinterpret_cast<const typename Format::Packed*>(rows + g * 8 * row_stride);
    __m256 acc[kActs * 8];  // [a][block % 8]
    for (__m256& v : acc) v = _mm256_setzero_ps();
    for (int64_t ib = 0; ib < nb; ++ib) {
      prefetch_block_ahead(w, ib);
      Format::template add_block<kActs>(w[ib], x, ib, acc);
    }
    for (int a = 0; a < kActs; ++a) _mm256_storeu_ps(out[a] + 8 * g, sum_lanes8_each(acc + 8 * a));
  }
}

// Rows [r0, r0 + 8·n_groups) against activations a0 .. a0 + kActs − 1.
template <typename Format, int kActs>
WLLM_AVX2 void tile(int64_t n, const void* rows, int64_t row_stride, int r0, int n_groups, const void* acts,
                    int64_t act_stride, int a0, float* out, int64_t out_stride) {
  const BlockQ8_K* x[kActs];
  float* dst[kActs];
  for (int a = 0; a < kActs; ++a) {
    x[a] = reinterpret_cast<const BlockQ8_K*>(static_cast<const uint8_t*>(acts) + (a0 + a) * act_stride);
    dst[a] = out + (a0 + a) * out_stride + r0;
  }
  run_groups<Format, kActs>(n / kQK_K, static_cast<const uint8_t*>(rows) + r0 * row_stride, row_stride, n_groups, x,
                            dst);
}

// A batch: 64 rows at a time against the activations kGemmActs at a time, so
// those rows stay in cache while every activation runs through them.
template <typename Format>
WLLM_AVX2 void gemm_repacked(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                             int64_t act_stride, int n_acts, float* out, int64_t out_stride) {
  constexpr int kRowChunk = 64, kTile = Format::kGemmActs;
  for (int r0 = 0; r0 < n_rows; r0 += kRowChunk) {
    const int groups = (n_rows - r0 < kRowChunk ? n_rows - r0 : kRowChunk) / 8;
    int a0 = 0;
    for (; a0 + kTile <= n_acts; a0 += kTile) {
      tile<Format, kTile>(n, rows, row_stride, r0, groups, acts, act_stride, a0, out, out_stride);
    }
    switch (n_acts - a0) {
      case 3: tile<Format, 3>(n, rows, row_stride, r0, groups, acts, act_stride, a0, out, out_stride); break;
      case 2: tile<Format, 2>(n, rows, row_stride, r0, groups, acts, act_stride, a0, out, out_stride); break;
      case 1: tile<Format, 1>(n, rows, row_stride, r0, groups, acts, act_stride, a0, out, out_stride); break;
      default: break;
    }
  }
}

// Decode: every group of rows against one activation.
template <typename Format>
WLLM_AVX2 void matvec_repacked(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out) {
  tile<Format, 1>(n, rows, row_stride, 0, n_rows / 8, act, 0, 0, out, 0);
}

// ---- Q5_0 as Q5_0x8i4 -------------------------------------------------------
//
// Chunk c of half h: bytes 4c..4c+3 of each of rows 4h..4h+3, elements
// 4c + j in the low nibbles and 16 + 4c + j in the high ones; the half's 16
// bytes of fifth bits hold chunk c's in bits c and 4 + c (blocks.h), so a
// 16-bit shift and a mask move them to bit 4 of each code. A block's 8
// code vectors are decoded once for up to 32 activations (as the file
// layout's gemm decodes and transposes 8 rows' blocks, gemm_avx2.cpp),
// leaving each activation 8 broadcasts and maddubs. Codes go in unsigned
// (u = q + kOffset): sumi = Σ u·x − kOffset·Σx, with each activation block's
// Σx (and its scale as a float) prepared once per call. (Q4_0 keeps the
// file's layout: read as Q4_0x8i4 by these loops its decode was no faster,
// its file-layout matvec already reading at about the memory's bandwidth.)

// An activation block as these kernels take it.
struct PreparedQ8_0 {
  float d;
  int32_t sum;  // Σx
};

WLLM_AVX2 inline void prepare(const BlockQ8_0* x, int64_t count, PreparedQ8_0* out) {
  for (int64_t ib = 0; ib < count; ++ib) {
    const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[ib].qs));
    out[ib] = {f16_to_f32(x[ib].d), total(dot_u8x32(_mm256_set1_epi8(1), bytes))};
  }
}

// The layout as these loops read it: codes(b, codes), a block's codes with kOffset
// added, [c] elements 4c..4c+3 of each row and [4 + c] elements 16 + 4c...
struct Q5_0x8i4 {
  using Packed = BlockQ5_0x8i4;
  static constexpr int32_t kOffset = 16;
  WLLM_AVX2 static void codes(const BlockQ5_0x8i4& b, __m256i* codes) {
    const __m256i fifth = load_halves(b.qh[0], b.qh[1]);
    const __m256i nibble = _mm256_set1_epi8(15), bit4 = _mm256_set1_epi8(16);
    for_each_constant<4>([&](auto c) WLLM_AVX2 {
      const __m256i packed = load_halves(b.qs[0] + 16 * c.value, b.qs[1] + 16 * c.value);
      codes[c.value] = _mm256_or_si256(_mm256_and_si256(packed, nibble),
                                       _mm256_and_si256(_mm256_slli_epi16(fifth, 4 - c.value), bit4));
      codes[4 + c.value] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(packed, 4), nibble),
                                           _mm256_and_si256(_mm256_srli_epi16(fifth, c.value), bit4));
    });
  }
};

// Σ u·x of each row against the activation block's bytes q: four maddubs add
// up in int16 (each lane's 8 products at most 8·31·128 < 2^15) before a madd.
WLLM_AVX2 inline __m256i code_sums(const __m256i* codes, const int8_t* q) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i sums = _mm256_setzero_si256();
  for (int c = 0; c < 4; c += 2) {
    __m256i pairs = _mm256_add_epi16(_mm256_maddubs_epi16(codes[c], broadcast4(q + 4 * c)),
                                     _mm256_maddubs_epi16(codes[c + 1], broadcast4(q + 4 * c + 4)));
    pairs = _mm256_add_epi16(pairs, _mm256_maddubs_epi16(codes[4 + c], broadcast4(q + 16 + 4 * c)));
    pairs = _mm256_add_epi16(pairs, _mm256_maddubs_epi16(codes[5 + c], broadcast4(q + 20 + 4 * c)));
    sums = _mm256_add_epi32(sums, _mm256_madd_epi16(pairs, ones));
  }
  return sums;
}

template <typename Layout>
WLLM_AVX2 void gemm_32_blocks(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                              int64_t act_stride, int n_acts, float* out, int64_t out_stride) {
  constexpr int kActChunk = 32;
  const int64_t nb = n / kQK;
  const auto act = [&](int a) {
    return reinterpret_cast<const BlockQ8_0*>(static_cast<const uint8_t*>(acts) + a * act_stride);
  };
  std::vector<PreparedQ8_0> prepared(static_cast<size_t>(n_acts * nb));
  for (int a = 0; a < n_acts; ++a) prepare(act(a), nb, prepared.data() + a * nb);
  for (int r0 = 0; r0 < n_rows; r0 += 8) {
    const auto* w = reinterpret_cast<const typename Layout::Packed*>(static_cast<const uint8_t*>(rows) + r0 * row_stride);
    for (int a0 = 0; a0 < n_acts; a0 += kActChunk) {
      const int na = n_acts - a0 < kActChunk ? n_acts - a0 : kActChunk;
      __m256 acc[kActChunk][8];  // [a][block % 8], lane r: row r0 + r
      for (int a = 0; a < na; ++a) {
        for (__m256& v : acc[a]) v = _mm256_setzero_ps();
      }
      for (int64_t ib = 0; ib < nb; ++ib) {
        if (a0 == 0) prefetch_block_ahead(w, ib);
        __m256i codes[8];
        Layout::codes(w[ib], codes);
        const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w[ib].d)));
        for (int a = 0; a < na; ++a) {
          const PreparedQ8_0& x = prepared[static_cast<size_t>((a0 + a) * nb + ib)];
          const __m256i sums = _mm256_sub_epi32(code_sums(codes, act(a0 + a)[ib].qs),
                                                _mm256_set1_epi32(Layout::kOffset * x.sum));
          const __m256 term = _mm256_mul_ps(_mm256_mul_ps(dw, _mm256_set1_ps(x.d)), _mm256_cvtepi32_ps(sums));
          acc[a][ib % 8] = _mm256_add_ps(acc[a][ib % 8], term);
        }
      }
      for (int a = 0; a < na; ++a) _mm256_storeu_ps(out + (a0 + a) * out_stride + r0, sum_lanes8_each(acc[a]));
    }
  }
}

template <typename Layout>
WLLM_AVX2 void matvec_32_blocks(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out) {
  gemm_32_blocks<Layout>(n, rows, row_stride, n_rows, act, 0, 1, out, 0);
}

constexpr RepackedType kAvx2Repacked[] = {
    {"q5_0x8i4", TensorType::kQ5_0, 8, ref::repack_q5_0x8i4, ref::unpack_q5_0x8i4, matvec_32_blocks<Q5_0x8i4>,
     gemm_32_blocks<Q5_0x8i4>},
    {"q4_Kx8i4", TensorType::kQ4_K, 8, ref::repack_q4_Kx8i4, ref::unpack_q4_Kx8i4, matvec_repacked<Q4_K>,
     gemm_repacked<Q4_K>},
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
