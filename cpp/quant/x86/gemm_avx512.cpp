// AVX-512 tiled kernels (AVX512F/BW/VL + VNNI, chosen at run time like the
// AVX2 ones): the schemes of gemm_avx2.cpp with 16 lanes, for the types
// where that pays. Every output is bit for bit the dot kernel's.
//  - Q4_0, Q5_0, Q8_0: the 16 lanes are 16 weight rows; a block of the 16
//    rows is decoded once and transposed so that vector k holds elements
//    4k..4k+3 of every row, and each activation's 4-byte groups are
//    broadcast to all lanes. vpdpbusd (4 byte products summed into each
//    int32 lane) wants one unsigned side: the activations go in plus 128
//    (x ^ 0x80, an xor with the broadcast load folded in), the codes signed,
//    and 128·Σ codes per row is taken off: Σ (x + 128)·q − 128·Σ q = Σ x·q,
//    exact in int32. Then term = (d_w·d_x)·sum goes into the accumulator of
//    (activation, block % 8) lane by lane: the reference's float operations.
//  - Q4_K, Q6_K: the same per 256-element super-block (see below).
//  - F32, F16, BF16: two 8-lane (row, activation) accumulators per vector.
// Every other type keeps its AVX2 kernels: avx512_dot_kernels() is the AVX2
// list with these gemms in place, and the matvecs and Q4_K dot of
// matvec_avx512.cpp.
#include "quant/kernels.h"

#if defined(__x86_64__) || defined(__i386__)

#include <vector>

// GCC 12's AVX-512 headers start masked intrinsics from deliberately
// undefined registers, which -Wmaybe-uninitialized reports (a known false
// positive of that header, not of this code).
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include "quant/gemm_tile.h"
#include "quant/x86/avx2.h"

#define WLLM_AVX512 __attribute__((target("avx2,f16c,avx512f,avx512bw,avx512vl,avx512vnni")))

namespace wllm::avx512 {
namespace {

using namespace avx2;  // block decoding and transposes shared with the AVX2 kernels

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


// ---- K-quants against Q8_K ------------------------------------------------------
//
// The same 16-rows-in-lanes scheme per 256-element super-block: each row's
// codes (unsigned: Q4_K's nibbles, Q6_K's 6-bit values) are transposed into
// 64 vectors, vector k of a 32-element group holding elements 4k..4k+3 of
// every row, and met by the activation's bytes broadcast (the signed side of
// vpdpbusd). Each sub-block's exact sum is then scaled by its row's integer
// scale (vpmulld); the per-row min (Q4_K) or offset (Q6_K: codes are stored
// plus 32) terms come from the activation's bsums with vpdpwssd. The float
// combination is the reference's, lane by lane.

// The 16 rows' 32 codes of one group (8 dwords each, two 8-row halves) as
// 8 vectors: [k] lane r = dword k of row r.
WLLM_AVX512 inline void transpose_16_rows(__m256i low[8], __m256i high[8], __m512i* out) {
  transpose_8x32(low);
  transpose_8x32(high);
#pragma GCC unroll 8
  for (int k = 0; k < 8; ++k) out[k] = _mm512_inserti64x4(_mm512_castsi256_si512(low[k]), high[k], 1);
}

// Σ over 8 dword groups of codes[k]·(the activation's bytes at x + 4k), per
// lane: one 32-element group of every row against one activation.
WLLM_AVX512 inline __m512i group_dot(const __m512i* codes, const int8_t* x, int first, int count) {
  __m512i sums[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};  // two chains: half the latency
#pragma GCC unroll 8
  for (int k = first; k < first + count; ++k) {
    int32_t group;
    std::memcpy(&group, x + 4 * k, sizeof group);
    sums[k % 2] = _mm512_dpbusd_epi32(sums[k % 2], codes[k], _mm512_set1_epi32(group));
  }
  return _mm512_add_epi32(sums[0], sums[1]);
}

// A tile's decoded super-block: codes, integer scales, float scales.
struct KTile {
  __m512i codes[8][8];  // [32-element group][dword k], lane r: row r
  __m512i scale[16];    // int32 sub-block scales (Q4_K: 8 used)
  __m512i pairs[8];     // int16 pairs against bsums[2i], bsums[2i+1] (Q4_K: m_i twice; Q6_K: sc_2i, sc_2i+1)
  __m512 d, dmin;       // per row (dmin: Q4_K only)
};

// Q4_K: group c holds sub-block c (elements 32c..32c+31): nibble c % 2 of
// qs[32·(c / 2) ..]; sumi = Σ_j sc_j·Σ q·x, summ = Σ_j m_j·(bsums[2j] +
// bsums[2j+1]); term = (dx·d)·sumi − (dx·dmin)·summ.
WLLM_AVX512 inline void decode_q4_K(const BlockQ4_K* const* w, int64_t ib, KTile* t) {
  alignas(64) int32_t scale[8][16], pairs[8][16];
  alignas(32) uint16_t d[16], dmin[16];
  for (int r = 0; r < 16; ++r) {
    const BlockQ4_K& b = w[r][ib];
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {  // unrolled: k4_scale_min's branch on j folds away
      int sc, m;
      k4_scale_min(b.scales, j, &sc, &m);
      scale[j][r] = sc;
      pairs[j][r] = m | (m << 16);
    }
    d[r] = b.d;
    dmin[r] = b.dmin;
  }
  const __m256i mask4 = _mm256_set1_epi8(15);
  for (int c = 0; c < 4; ++c) {
    __m256i lo[2][8], hi[2][8];  // [half of the rows][row]: sub-blocks 2c, 2c + 1
    for (int r = 0; r < 16; ++r) {
      const __m256i qs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[r][ib].qs + 32 * c));
      lo[r / 8][r % 8] = _mm256_and_si256(qs, mask4);
      hi[r / 8][r % 8] = _mm256_and_si256(_mm256_srli_epi16(qs, 4), mask4);
    }
    transpose_16_rows(lo[0], lo[1], t->codes[2 * c]);
    transpose_16_rows(hi[0], hi[1], t->codes[2 * c + 1]);
  }
  for (int j = 0; j < 8; ++j) {
    t->scale[j] = _mm512_load_si512(scale[j]);
    t->pairs[j] = _mm512_load_si512(pairs[j]);
  }
  t->d = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(d)));
  t->dmin = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(dmin)));
}

WLLM_AVX512 inline __m512 term_q4_K(const KTile& t, const BlockQ8_K& xb) {
  __m512i sumi = _mm512_setzero_si512(), summ = _mm512_setzero_si512();
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) {
    sumi = _mm512_add_epi32(sumi, _mm512_mullo_epi32(group_dot(t.codes[j], xb.qs + 32 * j, 0, 8), t.scale[j]));
    int32_t bsum_pair;
    std::memcpy(&bsum_pair, xb.bsums + 2 * j, sizeof bsum_pair);
    summ = _mm512_dpwssd_epi32(summ, t.pairs[j], _mm512_set1_epi32(bsum_pair));
  }
  const __m512 dx = _mm512_set1_ps(xb.d);
  const __m512 t1 = _mm512_mul_ps(_mm512_mul_ps(dx, t.d), _mm512_cvtepi32_ps(sumi));
  const __m512 t2 = _mm512_mul_ps(_mm512_mul_ps(dx, t.dmin), _mm512_cvtepi32_ps(summ));
  return _mm512_sub_ps(t1, t2);
}

// Q6_K: group (h, g) holds elements 128h + 32g .. +32 (layout in blocks.h),
// sub-blocks j = 8h + 2g (dwords 0..3) and j + 1 (dwords 4..7); codes are
// stored plus 32, so sumi = Σ_j sc_j·Σ q·x − 32·Σ_j sc_j·bsums[j];
// term = (dx·d)·sumi.
WLLM_AVX512 inline void decode_q6_K(const BlockQ6_K* const* w, int64_t ib, KTile* t) {
  alignas(64) int32_t scale[16][16], pairs[8][16];
  alignas(32) uint16_t d[16];
  for (int r = 0; r < 16; ++r) {
    const BlockQ6_K& b = w[r][ib];
    for (int j = 0; j < 16; ++j) scale[j][r] = b.scales[j];
    for (int i = 0; i < 8; ++i) {
      pairs[i][r] = static_cast<int32_t>(static_cast<uint16_t>(b.scales[2 * i]) |
                                         (static_cast<uint32_t>(static_cast<uint16_t>(b.scales[2 * i + 1])) << 16));
    }
    d[r] = b.d;
  }
  const __m256i mask4 = _mm256_set1_epi8(15), mask2 = _mm256_set1_epi8(3);
  for (int h = 0; h < 2; ++h) {
    for (int g = 0; g < 4; ++g) {
      __m256i q[2][8];
      for (int r = 0; r < 16; ++r) {
        const BlockQ6_K& b = w[r][ib];
        const __m256i ql = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.ql + 64 * h + 32 * (g & 1)));
        const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qh + 32 * h));
        const __m256i low = (g >> 1) ? _mm256_and_si256(_mm256_srli_epi16(ql, 4), mask4) : _mm256_and_si256(ql, mask4);
        const __m256i high = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * g), mask2);
        q[r / 8][r % 8] = _mm256_or_si256(low, _mm256_slli_epi16(high, 4));
      }
      transpose_16_rows(q[0], q[1], t->codes[4 * h + g]);
    }
  }
  for (int j = 0; j < 16; ++j) t->scale[j] = _mm512_load_si512(scale[j]);
  for (int i = 0; i < 8; ++i) t->pairs[i] = _mm512_load_si512(pairs[i]);
  t->d = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(d)));
}

WLLM_AVX512 inline __m512 term_q6_K(const KTile& t, const BlockQ8_K& xb) {
  __m512i sumi = _mm512_setzero_si512(), offset = _mm512_setzero_si512();
#pragma GCC unroll 8
  for (int hg = 0; hg < 8; ++hg) {
    const int j = 2 * hg;  // = 8h + 2g
    const int8_t* x = xb.qs + 32 * hg;
    sumi = _mm512_add_epi32(sumi, _mm512_mullo_epi32(group_dot(t.codes[hg], x, 0, 4), t.scale[j]));
    sumi = _mm512_add_epi32(sumi, _mm512_mullo_epi32(group_dot(t.codes[hg], x, 4, 4), t.scale[j + 1]));
    int32_t bsum_pair;
    std::memcpy(&bsum_pair, xb.bsums + 2 * hg, sizeof bsum_pair);
    offset = _mm512_dpwssd_epi32(offset, t.pairs[hg], _mm512_set1_epi32(bsum_pair));
  }
  sumi = _mm512_sub_epi32(sumi, _mm512_slli_epi32(offset, 5));
  const __m512 d = _mm512_mul_ps(_mm512_set1_ps(xb.d), t.d);
  return _mm512_mul_ps(d, _mm512_cvtepi32_ps(sumi));
}

// Decoding a K-quant tile costs about as much as a third of its use by 32
// activations: a whole batch (64) shares each one.
constexpr int kKActChunk = 64;

template <typename Block, void (*decode)(const Block* const*, int64_t, KTile*),
          __m512 (*term)(const KTile&, const BlockQ8_K&)>
WLLM_AVX512 void gemm_k_512(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                            int64_t act_stride, int n_acts, float* out, int64_t out_stride) {
  const int64_t nb = n / kQK_K;
  KTile tile;
  for (int r0 = 0; r0 < n_rows; r0 += kRowLanes) {
    const Block *w[kRowLanes], *next[kRowLanes];
    tile_pointers(rows, row_stride, r0, n_rows, kRowLanes, w);
    tile_pointers(rows, row_stride, r0 + kRowLanes < n_rows ? r0 + kRowLanes : r0, n_rows, kRowLanes, next);
    const __mmask16 valid_rows = static_cast<__mmask16>((1u << tile_valid(r0, n_rows, kRowLanes)) - 1);
    for (int a0 = 0; a0 < n_acts; a0 += kKActChunk) {
      const int na = tile_valid(a0, n_acts, kKActChunk);
      const uint8_t* x0 = static_cast<const uint8_t*>(acts) + a0 * act_stride;
      __m512 acc[kKActChunk][8];  // as in gemm_q8_0_family_512
      for (int64_t ib = 0; ib < nb; ++ib) {
        if (a0 == 0) {
          for (int line = 0; line < static_cast<int>(sizeof(Block)); line += 64) {
            for (int r = 0; r < kRowLanes; ++r) _mm_prefetch(reinterpret_cast<const char*>(next[r] + ib) + line, _MM_HINT_T0);
          }
        }
        decode(w, ib, &tile);
        for (int a = 0; a < na; ++a) {
          const BlockQ8_K& xb = reinterpret_cast<const BlockQ8_K*>(x0 + a * act_stride)[ib];
          const __m512 prev = ib < 8 ? _mm512_setzero_ps() : acc[a][ib % 8];
          acc[a][ib % 8] = _mm512_add_ps(prev, term(tile, xb));
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


// ---- Float weights against F32 --------------------------------------------------
//
// The reference's 8 lanes per (row, activation) pair (element i in lane
// i % 8), two pairs per 512-bit vector: the low half for row 2p, the high
// half for row 2p + 1, against the same activation broadcast to both
// halves. A tile of 8 rows x kActs activations keeps 4·kActs vectors, more
// than AVX2's 16 registers allow, so each converted row serves 4 activations.

// [lo | hi], and 8 floats in both halves (AVX512F's 64-bit-lane moves: the
// 32-bit-lane forms need AVX512DQ).
WLLM_AVX512 inline __m512 join_halves(__m256 lo, __m256 hi) {
  return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(lo)), _mm256_castps_pd(hi), 1));
}
WLLM_AVX512 inline __m512 both_halves(const float* x) {
  return _mm512_castpd_ps(_mm512_broadcast_f64x4(_mm256_castps_pd(_mm256_loadu_ps(x))));
}
WLLM_AVX512 inline __m256 high_half(__m512 v) { return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)); }

struct F32Rows {
  using Element = float;
  // Elements i..i+7 of rows a (low half) and b (high half) as floats.
  WLLM_AVX512 static __m512 load2(const void* a, const void* b, int64_t i) {
    return join_halves(_mm256_loadu_ps(static_cast<const float*>(a) + i), _mm256_loadu_ps(static_cast<const float*>(b) + i));
  }
  // The same with only the elements in `mask` loaded, the others +0.
  WLLM_AVX512 static __m512 load2(const void* a, const void* b, int64_t i, __mmask8 mask) {
    return join_halves(_mm256_maskz_loadu_ps(mask, static_cast<const float*>(a) + i),
                       _mm256_maskz_loadu_ps(mask, static_cast<const float*>(b) + i));
  }
};
// Elements i..i+7 of two rows of 16-bit values, a's in the low half; with a
// mask, only the elements in it (the others 0).
WLLM_AVX512 inline __m256i load_16bit_pair(const void* a, const void* b, int64_t i) {
  const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(a) + i));
  const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(b) + i));
  return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}
WLLM_AVX512 inline __m256i load_16bit_pair(const void* a, const void* b, int64_t i, __mmask8 mask) {
  const __m128i lo = _mm_maskz_loadu_epi16(mask, static_cast<const uint16_t*>(a) + i);
  const __m128i hi = _mm_maskz_loadu_epi16(mask, static_cast<const uint16_t*>(b) + i);
  return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

struct F16Rows {
  using Element = uint16_t;
  template <typename... Mask>
  WLLM_AVX512 static __m512 load2(const void* a, const void* b, int64_t i, Mask... mask) {
    return _mm512_cvtph_ps(load_16bit_pair(a, b, i, mask...));  // exact
  }
};
struct BF16Rows {
  using Element = uint16_t;
  template <typename... Mask>
  WLLM_AVX512 static __m512 load2(const void* a, const void* b, int64_t i, Mask... mask) {
    const __m512i wide = _mm512_cvtepu16_epi32(load_16bit_pair(a, b, i, mask...));
    return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));  // bf16 is the top half of an f32
  }
};

constexpr int kFloatRows = 8;

// One tile of kRows rows (an even count up to 8); the tail goes through the
// same lane-wise add as a zero-padded vector (masked loads; +0·+0 into lanes
// that are never -0: no bits change), and each activation's row sums are
// reduced together (transpose, sum_lanes8). ahead > 0 (decode): each row's
// bytes `ahead` further on are prefetched, a line at a time.
template <typename Rows, int kActs, int kRows = kFloatRows>
WLLM_AVX512 void float_tile_512(int64_t n, const uint8_t* const* w, const float* const* x, __mmask8 valid_rows,
                                float* out, int64_t out_stride, int64_t ahead = 0) {
  constexpr int64_t kPerLine = 64 / sizeof(typename Rows::Element);
  const int64_t n8 = n / 8 * 8;
  __m512 acc[kRows / 2][kActs];
#pragma GCC unroll 4
  for (int p = 0; p < kRows / 2; ++p) {
#pragma GCC unroll 4
    for (int a = 0; a < kActs; ++a) acc[p][a] = _mm512_setzero_ps();
  }
  for (int64_t i = 0; i < n8; i += 8) {
    if (ahead > 0 && i % kPerLine == 0) {
      for (int r = 0; r < kRows; ++r) {
        _mm_prefetch(reinterpret_cast<const char*>(w[r] + ahead) + i * sizeof(typename Rows::Element), _MM_HINT_T0);
      }
    }
    __m512 xv[kActs];
#pragma GCC unroll 4
    for (int a = 0; a < kActs; ++a) xv[a] = both_halves(x[a] + i);
#pragma GCC unroll 4
    for (int p = 0; p < kRows / 2; ++p) {
      const __m512 wv = Rows::load2(w[2 * p], w[2 * p + 1], i);
#pragma GCC unroll 4
      for (int a = 0; a < kActs; ++a) acc[p][a] = _mm512_add_ps(acc[p][a], _mm512_mul_ps(wv, xv[a]));
    }
  }
  if (n8 < n) {
    const __mmask8 tail = static_cast<__mmask8>((1u << (n - n8)) - 1);
    __m512 xv[kActs];
    for (int a = 0; a < kActs; ++a) {
      const __m256 x8 = _mm256_maskz_loadu_ps(tail, x[a] + n8);
      xv[a] = join_halves(x8, x8);
    }
    for (int p = 0; p < kRows / 2; ++p) {
      const __m512 wv = Rows::load2(w[2 * p], w[2 * p + 1], n8, tail);
      for (int a = 0; a < kActs; ++a) acc[p][a] = _mm512_add_ps(acc[p][a], _mm512_mul_ps(wv, xv[a]));
    }
  }
#pragma GCC unroll 4
  for (int a = 0; a < kActs; ++a) {
    __m256i sums[8];  // row r's 8 lanes, then transposed: lane r of sums[k] <- lane k of row r
    for (int r = kRows; r < 8; ++r) sums[r] = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int p = 0; p < kRows / 2; ++p) {
      sums[2 * p] = _mm256_castps_si256(_mm512_castps512_ps256(acc[p][a]));
      sums[2 * p + 1] = _mm256_castps_si256(high_half(acc[p][a]));
    }
    transpose_8x32(sums);
    __m256 lanes[8];
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) lanes[k] = _mm256_castsi256_ps(sums[k]);
    _mm256_mask_storeu_ps(out + a * out_stride, valid_rows, sum_lanes8_each(lanes));
  }
}

template <typename Rows>
WLLM_AVX512 void gemm_float_512(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                                int64_t act_stride, int n_acts, float* out, int64_t out_stride) {
  for (int r0 = 0; r0 < n_rows; r0 += kFloatRows) {
    const uint8_t* w[kFloatRows];
    tile_pointers(rows, row_stride, r0, n_rows, kFloatRows, w);
    const __mmask8 valid_rows = static_cast<__mmask8>((1u << tile_valid(r0, n_rows, kFloatRows)) - 1);
    float* tile_out = out + r0;
    int a0 = 0;
    for (; a0 + 4 <= n_acts; a0 += 4) {
      const float* x[4];
      tile_pointers(acts, act_stride, a0, n_acts, 4, x);
      float_tile_512<Rows, 4>(n, w, x, valid_rows, tile_out + a0 * out_stride, out_stride);
    }
    const float* x[3];
    tile_pointers(acts, act_stride, a0, n_acts, 3, x);
    switch (n_acts - a0) {  // the last 1..3 activations: no wasted pairs
      case 3: float_tile_512<Rows, 3>(n, w, x, valid_rows, tile_out + a0 * out_stride, out_stride); break;
      case 2: float_tile_512<Rows, 2>(n, w, x, valid_rows, tile_out + a0 * out_stride, out_stride); break;
      case 1: float_tile_512<Rows, 1>(n, w, x, valid_rows, tile_out + a0 * out_stride, out_stride); break;
      default: break;
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
void gemm_f32_avx512(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                     int64_t act_stride, int n_acts, float* out, int64_t out_stride) {
  gemm_float_512<F32Rows>(n, rows, row_stride, n_rows, acts, act_stride, n_acts, out, out_stride);
}
void gemm_f16_avx512(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                     int64_t act_stride, int n_acts, float* out, int64_t out_stride) {
  gemm_float_512<F16Rows>(n, rows, row_stride, n_rows, acts, act_stride, n_acts, out, out_stride);
}
void gemm_bf16_avx512(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                      int64_t act_stride, int n_acts, float* out, int64_t out_stride) {
  gemm_float_512<BF16Rows>(n, rows, row_stride, n_rows, acts, act_stride, n_acts, out, out_stride);
}
// Decode of f16 weights: tiles of neighbouring rows (two per vector, the
// 8-lane order of each kept), the next tile's rows prefetched a line at a
// time. Long rows stream from memory, and 2 rows side by side are nearly one
// sequential stream (8 rows, or no prefetch, ran slower). Short rows
// (smollm2's 576) take 8 rows, four chains of adds. Figures against the AVX2
// tile: docs/performance.md, "Measurements behind the code".
constexpr int64_t kLongRow = 1024;
template <int kRows>
WLLM_AVX512 void matvec_f16_tiles(int64_t n, const void* rows, int64_t row_stride, int n_rows, const float* x,
                                  float* out) {
  for (int r0 = 0; r0 < n_rows; r0 += kRows) {
    const uint8_t* w[kRows];
    tile_pointers(rows, row_stride, r0, n_rows, kRows, w);
    const __mmask8 valid_rows = static_cast<__mmask8>((1u << tile_valid(r0, n_rows, kRows)) - 1);
    const int64_t ahead = r0 + kRows < n_rows ? kRows * row_stride : 0;
    float_tile_512<F16Rows, 1, kRows>(n, w, &x, valid_rows, out + r0, 0, ahead);
  }
}
void matvec_f16_avx512(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out) {
  const float* x = static_cast<const float*>(act);
  if (n < kLongRow) {
    matvec_f16_tiles<8>(n, rows, row_stride, n_rows, x, out);
  } else {
    matvec_f16_tiles<2>(n, rows, row_stride, n_rows, x, out);
  }
}
void gemm_q4_K_avx512(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                      int64_t act_stride, int n_acts, float* out, int64_t out_stride) {
  gemm_k_512<BlockQ4_K, decode_q4_K, term_q4_K>(n, rows, row_stride, n_rows, acts, act_stride, n_acts, out,
                                                out_stride);
}
void gemm_q6_K_avx512(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                      int64_t act_stride, int n_acts, float* out, int64_t out_stride) {
  gemm_k_512<BlockQ6_K, decode_q6_K, term_q6_K>(n, rows, row_stride, n_rows, acts, act_stride, n_acts, out,
                                                out_stride);
}

}  // namespace
}  // namespace wllm::avx512

namespace wllm {

namespace avx512 {  // matvec_avx512.cpp
void matvec_q4_0_avx512(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out);
void matvec_q5_0_avx512(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out);
void matvec_q8_0_avx512(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out);
float dot_q4_K_avx512(int64_t n, const void* row, const void* act);
}  // namespace avx512

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
      if (k.type == TensorType::kQ4_0) k.gemm = avx512::gemm_q4_0_avx512;
      if (k.type == TensorType::kQ5_0) k.gemm = avx512::gemm_q5_0_avx512;
      if (k.type == TensorType::kQ8_0) k.gemm = avx512::gemm_q8_0_avx512;
      if (k.type == TensorType::kQ4_K) k.gemm = avx512::gemm_q4_K_avx512;
      if (k.type == TensorType::kF32) k.gemm = avx512::gemm_f32_avx512;
      if (k.type == TensorType::kF16) k.gemm = avx512::gemm_f16_avx512;
      if (k.type == TensorType::kBF16) k.gemm = avx512::gemm_bf16_avx512;
      if (k.type == TensorType::kQ6_K) k.gemm = avx512::gemm_q6_K_avx512;
      if (k.type == TensorType::kQ4_0) k.matvec = avx512::matvec_q4_0_avx512;
      if (k.type == TensorType::kQ5_0) k.matvec = avx512::matvec_q5_0_avx512;
      if (k.type == TensorType::kQ8_0) k.matvec = avx512::matvec_q8_0_avx512;
      if (k.type == TensorType::kF16) k.matvec = avx512::matvec_f16_avx512;
      if (k.type == TensorType::kQ4_K) k.dot = avx512::dot_q4_K_avx512;
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
