// AVX2 tiled kernels (gemm): a tile of weight rows against a tile of
// activations, each weight block decoded once for the whole tile. Every
// output is bit for bit the dot kernel's (traits.h):
//  - quantized types put one activation (K-quants) or one weight row (Q8_0
//    family) in each of the 8 lanes: a block's exact integer sums for 8
//    pairs land in one vector, then term = (d_w·d_x)·sum goes, lane by lane,
//    into the accumulator of (pair, block % 8), exactly the float operations
//    of the reference;
//  - float types keep one 8-lane accumulator (element i in lane i % 8) per
//    (row, activation) pair: the dot's lanes, more of them at once.
// Partial tiles repeat their last row or activation (gemm_tile.h).
#include "quant/kernels.h"

#if defined(__x86_64__) || defined(__i386__)

#include "core/half.h"
#include "quant/gemm_tile.h"
#include "quant/x86/avx2.h"

namespace wllm::avx2 {
namespace {

// Stores lane a of `v` (a < n_valid) as the output of activation a0 + a.
WLLM_AVX2 inline void store_lanes(__m256 v, float* out, int64_t out_stride, int a0, int n_valid) {
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, v);
  for (int a = 0; a < n_valid; ++a) out[(a0 + a) * out_stride] = lanes[a];
}

// ---- Quantized weights against Q8_0 (Q4_0, Q5_0, Q8_0) ---------------------
//
// Here the 8 lanes are 8 weight rows instead: a block of the 8 rows is
// decoded once, transposed so that vector k holds elements 4k..4k+3 of every
// row, and then met by each activation's 4-byte groups broadcast to all
// lanes. Lane r then sums row r's products with no horizontal reduction, and
// the transposed tile serves a whole chunk of activations.

constexpr int kRowLanes = 8;   // weight rows per tile (one per 32-bit lane)
constexpr int kActChunk = 32;  // activations sharing one decoded tile

// kSmallCodes: |code| <= 16, so all 16 products a lane collects per block
// fit int16 (Q4_0, Q5_0); Q8_0's codes need int32 after every group.
template <typename Block, bool kSmallCodes>
WLLM_AVX2 void gemm_q8_0_family(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                                int64_t act_stride, int n_acts, float* out, int64_t out_stride) {
  const int64_t nb = n / kQK;
  const __m256i ones = _mm256_set1_epi16(1);
  for (int r0 = 0; r0 < n_rows; r0 += kRowLanes) {
    const Block *w[kRowLanes], *next[kRowLanes];
    tile_pointers(rows, row_stride, r0, n_rows, kRowLanes, w);
    tile_pointers(rows, row_stride, r0 + kRowLanes < n_rows ? r0 + kRowLanes : r0, n_rows, kRowLanes, next);
    const int n_valid_rows = tile_valid(r0, n_rows, kRowLanes);
    for (int a0 = 0; a0 < n_acts; a0 += kActChunk) {
      const int na = tile_valid(a0, n_acts, kActChunk);
      const uint8_t* x0 = static_cast<const uint8_t*>(acts) + a0 * act_stride;
      // [activation][block % 8], lane r: row r0 + r. Each starts at +0 with its
      // first block (no 16 KB of zeroing per tile); slots of blocks that do
      // not exist (nb < 8) are zeroed after the loop.
      __m256 acc[kActChunk][8];
      for (int64_t ib = 0; ib < nb; ++ib) {
        if (a0 == 0) prefetch_rows(next, kRowLanes, ib);
        __m256i codes[8], magnitudes[8];  // [k] lane r: codes 4k..4k+3 of row r
        alignas(16) uint16_t wd[kRowLanes];
#pragma GCC unroll 8
        for (int r = 0; r < kRowLanes; ++r) {
          codes[r] = block_bytes(w[r][ib]);
          wd[r] = w[r][ib].d;
        }
        transpose_8x32(codes);
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) magnitudes[k] = _mm256_sign_epi8(codes[k], codes[k]);
        const __m256 dw = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(wd)));
        for (int a = 0; a < na; ++a) {
          const BlockQ8_0& xb = reinterpret_cast<const BlockQ8_0*>(x0 + a * act_stride)[ib];
          __m256i sum = _mm256_setzero_si256();
#pragma GCC unroll 8
          for (int k = 0; k < 8; ++k) {
            int32_t group;
            std::memcpy(&group, xb.qs + 4 * k, sizeof group);
            const __m256i xk = _mm256_set1_epi32(group);
            const __m256i pairs = _mm256_maddubs_epi16(magnitudes[k], _mm256_sign_epi8(xk, codes[k]));
            sum = kSmallCodes ? _mm256_add_epi16(sum, pairs) : _mm256_add_epi32(sum, _mm256_madd_epi16(pairs, ones));
          }
          if (kSmallCodes) sum = _mm256_madd_epi16(sum, ones);
          const __m256 d = _mm256_mul_ps(dw, splat_f16(xb.d));
          const __m256 prev = ib < 8 ? _mm256_setzero_ps() : acc[a][ib % 8];
          acc[a][ib % 8] = _mm256_add_ps(prev, _mm256_mul_ps(d, _mm256_cvtepi32_ps(sum)));
        }
      }
      for (int a = 0; a < na; ++a) {
        for (int64_t j = nb; j < 8; ++j) acc[a][j] = _mm256_setzero_ps();
      }
      for (int a = 0; a < na; ++a) {
        const __m256 v = sum_lanes8_each(acc[a]);
        float* dst = out + (a0 + a) * out_stride + r0;
        if (n_valid_rows == kRowLanes) {
          _mm256_storeu_ps(dst, v);
        } else {
          alignas(32) float lanes[8];
          _mm256_store_ps(lanes, v);
          for (int r = 0; r < n_valid_rows; ++r) dst[r] = lanes[r];
        }
      }
    }
  }
}

// ---- K-quants against Q8_K ------------------------------------------------------

constexpr int kKRowTile = 2;

// The tiling every K-quant kernel shares: kKRowTile rows x 8 activations,
// the next row tile prefetched, and each block's float term —
// block_term(block, x, ib, dx), one lane per activation — added into
// accumulator ib % 8, as the dot does.
template <typename Block, typename BlockTerm>
WLLM_AVX2 void gemm_k_quant(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                            int64_t act_stride, int n_acts, float* out, int64_t out_stride, BlockTerm block_term) {
  const int64_t nb = n / kQK_K;
  for (int r0 = 0; r0 < n_rows; r0 += kKRowTile) {
    const Block *w[kKRowTile], *next[kKRowTile];
    tile_pointers(rows, row_stride, r0, n_rows, kKRowTile, w);
    tile_pointers(rows, row_stride, r0 + kKRowTile < n_rows ? r0 + kKRowTile : r0, n_rows, kKRowTile, next);
    for (int a0 = 0; a0 < n_acts; a0 += 8) {
      const BlockQ8_K* x[8];
      tile_pointers(acts, act_stride, a0, n_acts, 8, x);
      __m256 acc[kKRowTile][8];
      for (auto& row_acc : acc) {
        for (__m256& a : row_acc) a = _mm256_setzero_ps();
      }
      for (int64_t ib = 0; ib < nb; ++ib) {
        if (a0 == 0) {  // a K-quant block spans several cache lines
          for (int line = 0; line < static_cast<int>(sizeof(Block)); line += 64) {
            for (int r = 0; r < kKRowTile; ++r) _mm_prefetch(reinterpret_cast<const char*>(next[r] + ib) + line, _MM_HINT_T0);
          }
        }
        alignas(32) float xd[8];
        for (int a = 0; a < 8; ++a) xd[a] = x[a][ib].d;
        const __m256 dx = _mm256_load_ps(xd);
        #pragma GCC unroll 8
        for (int r = 0; r < kKRowTile; ++r) {
          acc[r][ib % 8] = _mm256_add_ps(acc[r][ib % 8], block_term(w[r][ib], x, ib, dx));
        }
      }
      const int n_valid = tile_valid(a0, n_acts, 8);
      for (int r = 0; r < kKRowTile && r0 + r < n_rows; ++r) {
        store_lanes(sum_lanes8_each(acc[r]), out + r0 + r, out_stride, a0, n_valid);
      }
    }
  }
}

}  // namespace

// Every K-quant type through the integer scheme of avx2.h, per activation:
// sumi = Σ sc·u·x (less Σ_j m_j·bsums[j] for Q3_K, Q6_K, the codes' offset),
// summ = Σ_j m_j·bsums[j] for the types with mins; then term = (dx·d)·sumi,
// minus (dx·dmin)·summ for those, as the dot computes it.
template <typename Block>
WLLM_AVX2 void gemm_k_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                           int64_t act_stride, int n_acts, float* out, int64_t out_stride) {
  gemm_k_quant<Block>(n, rows, row_stride, n_rows, acts, act_stride, n_acts, out, out_stride,
                      [&](const Block& b, const BlockQ8_K* const* x, int64_t ib, __m256 dx) WLLM_AVX2 {
    const KScales s = k_scales(b);
    __m256i sums[8];
    for (__m256i& v : sums) v = _mm256_setzero_si256();
    #pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {  // group k: elements 32k..32k+31
      const __m256i codes = group_codes(b, k), scale = scale_pair(s.sc, k);
      #pragma GCC unroll 8
      for (int a = 0; a < 8; ++a) sums[a] = _mm256_add_epi32(sums[a], group_sum(codes, x[a][ib].qs + 32 * k, scale));
    }
    __m256i by_bsums[8];  // Σ_j m_j·bsums[j]
    #pragma GCC unroll 8
    for (int a = 0; a < 8; ++a) {
      by_bsums[a] = _mm256_madd_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[a][ib].bsums)), s.m);
    }
    const __m256 d = _mm256_mul_ps(dx, splat_f16(b.d));
    if constexpr (requires { b.dmin; }) {
      const __m256 t1 = _mm256_mul_ps(d, _mm256_cvtepi32_ps(sum_each(sums)));
      const __m256 t2 = _mm256_mul_ps(_mm256_mul_ps(dx, splat_f16(b.dmin)), _mm256_cvtepi32_ps(sum_each(by_bsums)));
      return _mm256_sub_ps(t1, t2);
    } else {
      const __m256i sumi = _mm256_sub_epi32(sum_each(sums), sum_each(by_bsums));
      return _mm256_mul_ps(d, _mm256_cvtepi32_ps(sumi));
    }
  });
}

namespace {

// ---- Float weights against F32 --------------------------------------------------

// How a float row format loads 8 elements as floats; load_tail loads the
// last count < 8 of them with zeros after.
struct F32Row {
  using Element = float;
  WLLM_AVX2 static __m256 load8(const void* row, int64_t i) { return _mm256_loadu_ps(static_cast<const float*>(row) + i); }
};
struct F16Row {
  using Element = uint16_t;
  WLLM_AVX2 static __m256 load8(const void* row, int64_t i) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(row) + i)));
  }
};
struct BF16Row {
  using Element = uint16_t;
  WLLM_AVX2 static __m256 load8(const void* row, int64_t i) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(row) + i));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
};

// Elements i..n (fewer than 8) of a row, zero-padded to 8, as floats.
template <typename Row>
WLLM_AVX2 inline __m256 load_tail(const void* row, int64_t i, int64_t n) {
  typename Row::Element padded[8] = {};
  std::memcpy(padded, static_cast<const typename Row::Element*>(row) + i, static_cast<size_t>(n - i) * sizeof(padded[0]));
  return Row::load8(padded, 0);
}

constexpr int kFloatRowTile = 4;

// acc[a][r] += w[r]·x[a], lane by lane.
template <int kActs>
WLLM_AVX2 inline void accumulate(__m256 (&acc)[kActs][kFloatRowTile], const __m256* wv, const __m256* xv) {
#pragma GCC unroll 8
  for (int a = 0; a < kActs; ++a) {
#pragma GCC unroll 8
    for (int r = 0; r < kFloatRowTile; ++r) acc[a][r] = _mm256_add_ps(acc[a][r], _mm256_mul_ps(wv[r], xv[a]));
  }
}

// A tile of 4 rows x kActs activations (2, or 1 for an odd last one: no
// wasted pairs for odd head groups; 3 would not fit AVX2's 16 registers). The tail elements go through the same
// lane-wise add as a zero-padded vector: the padding adds +0·+0 = +0 to
// lanes that are never -0 (they start at +0), which changes no bits. The 8
// (or 4) sums are reduced together: transposed, then sum_lanes8 lane-wise.
//
// ahead > 0 (decode, one activation): each row's bytes `ahead` further on
// (the next tile's rows) are prefetched as this tile reads its own, a line
// at a time. Four neighbouring rows read side by side are four short streams
// the hardware prefetcher does not follow: out of cache, f16 rows ran slower
// in this tile than one row at a time (docs/performance.md).
template <typename Row, int kActs>
WLLM_AVX2 inline void float_tile(int64_t n, const uint8_t* const* w, const float* const* x, int n_valid_rows,
                                 float* out, int64_t out_stride, int64_t ahead = 0) {
  constexpr int64_t kPerLine = 64 / sizeof(typename Row::Element);  // elements per 64-byte line
  const int64_t n8 = n / 8 * 8;
  __m256 acc[kActs][kFloatRowTile];
#pragma GCC unroll 8
  for (int a = 0; a < kActs; ++a) {
#pragma GCC unroll 8
    for (int r = 0; r < kFloatRowTile; ++r) acc[a][r] = _mm256_setzero_ps();
  }
  for (int64_t i = 0; i < n8; i += 8) {
    if (ahead > 0 && i % kPerLine == 0) {
      for (int r = 0; r < kFloatRowTile; ++r) {
        _mm_prefetch(reinterpret_cast<const char*>(w[r] + ahead) + i * sizeof(typename Row::Element), _MM_HINT_T0);
      }
    }
    __m256 wv[kFloatRowTile], xv[kActs];
#pragma GCC unroll 8
    for (int r = 0; r < kFloatRowTile; ++r) wv[r] = Row::load8(w[r], i);
#pragma GCC unroll 8
    for (int a = 0; a < kActs; ++a) xv[a] = _mm256_loadu_ps(x[a] + i);
    accumulate<kActs>(acc, wv, xv);
  }
  if (n8 < n) {
    __m256 wv[kFloatRowTile], xv[kActs];
    for (int r = 0; r < kFloatRowTile; ++r) wv[r] = load_tail<Row>(w[r], n8, n);
    for (int a = 0; a < kActs; ++a) xv[a] = load_tail<F32Row>(x[a], n8, n);
    accumulate<kActs>(acc, wv, xv);
  }
  // Pairs j = a·4 + r, 8 at a time: lane j of sums[k] <- lane k of pair j.
  alignas(32) float result[8 * ((kActs * kFloatRowTile + 7) / 8)];
  for (int j0 = 0; j0 < kActs * kFloatRowTile; j0 += 8) {
    __m256i sums[8];
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
      const int pair = j0 + j;
      sums[j] = pair < kActs * kFloatRowTile ? _mm256_castps_si256(acc[pair / kFloatRowTile][pair % kFloatRowTile])
                                             : _mm256_setzero_si256();
    }
    transpose_8x32(sums);
    __m256 lanes[8];
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) lanes[k] = _mm256_castsi256_ps(sums[k]);
    _mm256_store_ps(result + j0, sum_lanes8_each(lanes));
  }
  for (int a = 0; a < kActs; ++a) {
    for (int r = 0; r < n_valid_rows; ++r) out[a * out_stride + r] = result[a * kFloatRowTile + r];
  }
}

template <typename Row>
WLLM_AVX2 void gemm_float(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                          int64_t act_stride, int n_acts, float* out, int64_t out_stride) {
  for (int r0 = 0; r0 < n_rows; r0 += kFloatRowTile) {
    const uint8_t* w[kFloatRowTile];
    tile_pointers(rows, row_stride, r0, n_rows, kFloatRowTile, w);
    const int n_valid_rows = tile_valid(r0, n_rows, kFloatRowTile);
    int a0 = 0;
    for (; a0 + 2 <= n_acts; a0 += 2) {
      const float* x[2];
      tile_pointers(acts, act_stride, a0, n_acts, 2, x);
      float_tile<Row, 2>(n, w, x, n_valid_rows, out + a0 * out_stride + r0, out_stride);
    }
    if (a0 < n_acts) {
      const float* x = reinterpret_cast<const float*>(static_cast<const uint8_t*>(acts) + a0 * act_stride);
      const int64_t ahead = n_acts == 1 && r0 + kFloatRowTile < n_rows ? kFloatRowTile * row_stride : 0;
      float_tile<Row, 1>(n, w, &x, n_valid_rows, out + a0 * out_stride + r0, out_stride, ahead);
    }
  }
}

}  // namespace

void gemm_f32_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts, int64_t act_stride,
                   int n_acts, float* out, int64_t out_stride) {
  gemm_float<F32Row>(n, rows, row_stride, n_rows, acts, act_stride, n_acts, out, out_stride);
}
void gemm_f16_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts, int64_t act_stride,
                   int n_acts, float* out, int64_t out_stride) {
  gemm_float<F16Row>(n, rows, row_stride, n_rows, acts, act_stride, n_acts, out, out_stride);
}
void gemm_bf16_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts, int64_t act_stride,
                    int n_acts, float* out, int64_t out_stride) {
  gemm_float<BF16Row>(n, rows, row_stride, n_rows, acts, act_stride, n_acts, out, out_stride);
}
// Decode: the same tiles with one activation, so 4 rows' chains of dependent
// adds run side by side (the dot, one row at a time, waits on each add).
void matvec_f32_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out) {
  gemm_float<F32Row>(n, rows, row_stride, n_rows, act, 0, 1, out, 0);
}
void matvec_f16_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out) {
  gemm_float<F16Row>(n, rows, row_stride, n_rows, act, 0, 1, out, 0);
}
void matvec_bf16_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out) {
  gemm_float<BF16Row>(n, rows, row_stride, n_rows, act, 0, 1, out, 0);
}
void gemm_q4_0_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts, int64_t act_stride,
                    int n_acts, float* out, int64_t out_stride) {
  gemm_q8_0_family<BlockQ4_0, true>(n, rows, row_stride, n_rows, acts, act_stride, n_acts, out, out_stride);
}
void gemm_q5_0_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts, int64_t act_stride,
                    int n_acts, float* out, int64_t out_stride) {
  gemm_q8_0_family<BlockQ5_0, true>(n, rows, row_stride, n_rows, acts, act_stride, n_acts, out, out_stride);
}
void gemm_q8_0_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts, int64_t act_stride,
                    int n_acts, float* out, int64_t out_stride) {
  gemm_q8_0_family<BlockQ8_0, false>(n, rows, row_stride, n_rows, acts, act_stride, n_acts, out, out_stride);
}

// The K-quant instances the kernel table names.
template void gemm_k_avx2<BlockQ2_K>(int64_t, const void*, int64_t, int, const void*, int64_t, int, float*, int64_t);
template void gemm_k_avx2<BlockQ3_K>(int64_t, const void*, int64_t, int, const void*, int64_t, int, float*, int64_t);
template void gemm_k_avx2<BlockQ4_K>(int64_t, const void*, int64_t, int, const void*, int64_t, int, float*, int64_t);
template void gemm_k_avx2<BlockQ5_K>(int64_t, const void*, int64_t, int, const void*, int64_t, int, float*, int64_t);
template void gemm_k_avx2<BlockQ6_K>(int64_t, const void*, int64_t, int, const void*, int64_t, int, float*, int64_t);

}  // namespace wllm::avx2

#endif
