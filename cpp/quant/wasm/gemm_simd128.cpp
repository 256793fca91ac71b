// wasm SIMD128 tiled kernels (gemm): a tile of weight rows against a tile of
// activations, each weight block decoded (and widened to int16) once for the
// whole tile, each activation block widened once for all the tile's rows.
// Every output is bit for bit the dot kernel's (traits.h):
//  - quantized types put one activation in each of the 4 lanes: a block's
//    exact integer sums for 4 activations are reduced into one vector, then
//    term = (d_w·d_x)·sum goes, lane by lane, into the accumulator of
//    (row, block % 8), exactly the float operations of the reference;
//  - float types keep the dot's two 4-lane accumulators (element i in lane
//    i % 8) per (row, activation) pair, several pairs at once.
// Partial tiles repeat their last row or activation (gemm_tile.h).
#include "quant/kernels.h"

#if defined(__wasm_simd128__)

#include <algorithm>

#include "core/half.h"
#include "quant/gemm_tile.h"
#include "quant/wasm/simd128.h"

namespace wllm::simd128 {
namespace {

constexpr int kActLanes = 4;  // activations per tile, one per lane

// Stores lane a of `v` (a < n_valid) as the output of activation a0 + a.
inline void store_lanes(v128_t v, float* out, int64_t out_stride, int a0, int n_valid) {
  float lanes[4];
  wasm_v128_store(lanes, v);
  for (int a = 0; a < n_valid; ++a) out[(a0 + a) * out_stride] = lanes[a];
}

// 16 signed bytes as two vectors of 8 int16.
inline void widen(v128_t bytes, v128_t* out) {
  out[0] = wasm_i16x8_extend_low_i8x16(bytes);
  out[1] = wasm_i16x8_extend_high_i8x16(bytes);
}

// ---- Quantized weights against Q8_0 (Q4_0, Q5_0, Q8_0) ---------------------

constexpr int kQ8RowTile = 4;

template <typename Block>
void gemm_q8_0_family(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                      int64_t act_stride, int n_acts, float* out, int64_t out_stride) {
  const int64_t nb = n / kQK;
  for (int r0 = 0; r0 < n_rows; r0 += kQ8RowTile) {
    const Block* w[kQ8RowTile];
    tile_pointers(rows, row_stride, r0, n_rows, kQ8RowTile, w);
    for (int a0 = 0; a0 < n_acts; a0 += kActLanes) {
      const BlockQ8_0* x[kActLanes];
      tile_pointers(acts, act_stride, a0, n_acts, kActLanes, x);
      v128_t acc[kQ8RowTile][8];  // [row][block % 8], lane a: activation a0 + a
      for (auto& row_acc : acc) {
        for (v128_t& a : row_acc) a = wasm_f32x4_splat(0.0f);
      }
      for (int64_t ib = 0; ib < nb; ++ib) {
        v128_t xq[kActLanes][4];  // each activation's 32 bytes as int16
        for (int a = 0; a < kActLanes; ++a) block_codes_i16(x[a][ib], xq[a]);
        const v128_t dx = f16x4_to_f32(x[0][ib].d, x[1][ib].d, x[2][ib].d, x[3][ib].d);
        float dw[4];
        wasm_v128_store(dw, f16x4_to_f32(w[0][ib].d, w[1][ib].d, w[2][ib].d, w[3][ib].d));
        for (int r = 0; r < kQ8RowTile; ++r) {
          v128_t wq[4];
          block_codes_i16(w[r][ib], wq);
          v128_t partial[kActLanes];
          for (int a = 0; a < kActLanes; ++a) partial[a] = dot_i16(wq, xq[a], 4);
          const v128_t d = wasm_f32x4_mul(wasm_f32x4_splat(dw[r]), dx);
          const v128_t term = wasm_f32x4_mul(d, wasm_f32x4_convert_i32x4(sum_each(partial)));
          acc[r][ib % 8] = wasm_f32x4_add(acc[r][ib % 8], term);
        }
      }
      const int n_valid = tile_valid(a0, n_acts, kActLanes);
      for (int r = 0; r < kQ8RowTile && r0 + r < n_rows; ++r) {
        store_lanes(sum_lanes8_each(acc[r]), out + r0 + r, out_stride, a0, n_valid);
      }
    }
  }
}

// ---- One activation (decode) against Q4_0, Q5_0, Q8_0 rows -------------------
//
// The tile above would fill 3 of its 4 lanes with copies, so here the lanes
// hold 4 weight rows instead, and each row's term goes into its lane of
// accumulator block % 8 — still exactly the reference's operations per row.
// The activation is prepared once per call (widened to int16, its scale
// converted), so the inner loop only decodes weights and multiplies.

// Σ code·x of one weight block (row lanes are reduced by the caller).
inline v128_t block_dot(const BlockQ4_0& w, const PreparedQ8_0& x) {
  const v128_t first = wasm_u16x8_load8x8(w.qs), second = wasm_u16x8_load8x8(w.qs + 8);
  const v128_t sum = wasm_i32x4_add(
      wasm_i32x4_add(wasm_i32x4_dot_i16x8(first, x.q[0]), wasm_i32x4_dot_i16x8(second, x.q[1])),
      wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_u16x8_shr(first, 4), x.high_minus[0]),
                     wasm_i32x4_dot_i16x8(wasm_u16x8_shr(second, 4), x.high_minus[1])));
  // −8·Σx, in lane 0 only: the caller sums the lanes.
  return wasm_i32x4_sub(sum, wasm_i32x4_make(8 * x.sum, 0, 0, 0));
}

template <typename Block>
inline v128_t block_dot(const Block& w, const PreparedQ8_0& x) {
  v128_t q[4];
  block_codes_i16(w, q);
  return dot_i16(q, x.q, 4);
}

template <typename Block>
void matvec_q8_0_family(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out) {
  constexpr int kRowLanes = 4;
  constexpr int64_t kChunk = 256;  // blocks prepared at a time (8192 elements, 28 KiB of stack)
  const int64_t nb = n / kQK;
  const BlockQ8_0* x = static_cast<const BlockQ8_0*>(act);
  PreparedQ8_0 prepared[kChunk];
  const bool prepared_once = nb <= kChunk;  // else re-prepared per chunk of each row tile
  if (prepared_once) prepare_q8_0(x, nb, prepared);
  // Lane k walks the k-th quarter of the rows, one row after another: 4 long
  // sequential streams the hardware prefetcher follows (4 neighbouring rows
  // per tile would start 4 short streams every tile, and wasm has no
  // prefetch instruction). A quarter that runs out repeats its last row.
  const int quarter = (n_rows + kRowLanes - 1) / kRowLanes;
  for (int i = 0; i < quarter; ++i) {
    const Block* w[kRowLanes];
    int row[kRowLanes];
    for (int k = 0; k < kRowLanes; ++k) {
      const int last = std::min((k + 1) * quarter, n_rows) - 1;
      row[k] = std::min(k * quarter + i, last);
      w[k] = reinterpret_cast<const Block*>(static_cast<const uint8_t*>(rows) + row[k] * row_stride);
    }
    v128_t acc[8];  // [block % 8], lane k: row row[k]
    for (v128_t& a : acc) a = wasm_f32x4_splat(0.0f);
    for (int64_t c0 = 0; c0 < nb; c0 += kChunk) {
      const int64_t c1 = c0 + kChunk < nb ? c0 + kChunk : nb;
      if (!prepared_once) prepare_q8_0(x + c0, c1 - c0, prepared);
      for (int64_t ib = c0; ib < c1; ++ib) {
        const PreparedQ8_0& xb = prepared[ib - c0];
        v128_t partial[kRowLanes];
        for (int r = 0; r < kRowLanes; ++r) partial[r] = block_dot(w[r][ib], xb);
        const v128_t dw = f16x4_to_f32(w[0][ib].d, w[1][ib].d, w[2][ib].d, w[3][ib].d);
        const v128_t d = wasm_f32x4_mul(dw, wasm_f32x4_splat(xb.d));
        acc[ib % 8] = wasm_f32x4_add(acc[ib % 8], wasm_f32x4_mul(d, wasm_f32x4_convert_i32x4(sum_each(partial))));
      }
    }
    float lanes[kRowLanes];
    wasm_v128_store(lanes, sum_lanes8_each(acc));
    for (int k = 0; k < kRowLanes; ++k) {
      if (row[k] == k * quarter + i) out[row[k]] = lanes[k];  // not a repeat
    }
  }
}

// ---- K-quants against Q8_K ------------------------------------------------------
//
// The weights' integer sub-block scales are multiplied into their widened
// codes (|code·scale| < 2^15), so each activation needs only int16 dots and
// adds: Σ_j sc_j·Σ q·x = Σ (sc_j·q)·x, the same exact integer.

// A tile is one row against 8 activations (two groups of 4, one activation
// per lane), so each sub-block's scaled codes serve 8 activations. The
// activations are widened to int16 once for a chunk of 64 rows, a few
// blocks at a time. (Widening once per tile of 2 rows x 4 activations cost as
// much as the dots; 2 rows per tile, or 4 activations, were slower:
// docs/performance.md.)
constexpr int kKActGroups = 2;
constexpr int kKActs = kKActGroups * kActLanes;
constexpr int kKRowChunk = 64;
constexpr int64_t kWideBlocks = 12;  // blocks widened at a time: 48 KiB of stack

// A Q8_K block of the tile's 8 activations: the 256 bytes of each as int16,
// and the scales, lane a of d[g] that of activation 4g + a.
struct WideQ8K {
  v128_t q[kKActs][32];
  v128_t d[kKActGroups];
};

inline void widen_q8_K(const BlockQ8_K* const* x, int64_t ib, WideQ8K* wide) {
  for (int a = 0; a < kKActs; ++a) {
    for (int k = 0; k < 16; ++k) widen(wasm_v128_load(x[a][ib].qs + 16 * k), wide->q[a] + 2 * k);
  }
  for (int g = 0; g < kKActGroups; ++g) {
    const BlockQ8_K* const* xg = x + kActLanes * g;
    wide->d[g] = wasm_f32x4_make(xg[0][ib].d, xg[1][ib].d, xg[2][ib].d, xg[3][ib].d);
  }
}

// The tiling every K-quant kernel shares: each block's float terms —
// block_term(block, wide, x, ib, terms), terms[g] holding group g's 4
// activations in its lanes — added into accumulator ib % 8, as the dot does.
template <typename Block, typename BlockTerm>
void gemm_k_quant(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts, int64_t act_stride,
                  int n_acts, float* out, int64_t out_stride, BlockTerm block_term) {
  const int64_t nb = n / kQK_K;
  WideQ8K wide[kWideBlocks];
  v128_t acc[kKRowChunk][kKActGroups][8];  // [row in chunk][group][block % 8]
  for (int r0 = 0; r0 < n_rows; r0 += kKRowChunk) {
    const int chunk_rows = std::min(kKRowChunk, n_rows - r0);
    for (int a0 = 0; a0 < n_acts; a0 += kKActs) {
      const BlockQ8_K* x[kKActs];
      tile_pointers(acts, act_stride, a0, n_acts, kKActs, x);
      for (int r = 0; r < chunk_rows; ++r) {
        for (auto& group : acc[r]) {
          for (v128_t& v : group) v = wasm_f32x4_splat(0.0f);
        }
      }
      for (int64_t c0 = 0; c0 < nb; c0 += kWideBlocks) {
        const int64_t c1 = std::min(c0 + kWideBlocks, nb);
        for (int64_t ib = c0; ib < c1; ++ib) widen_q8_K(x, ib, &wide[ib - c0]);
        for (int r = 0; r < chunk_rows; ++r) {
          const Block* w = reinterpret_cast<const Block*>(static_cast<const uint8_t*>(rows) + (r0 + r) * row_stride);
          for (int64_t ib = c0; ib < c1; ++ib) {
            v128_t terms[kKActGroups];
            block_term(w[ib], wide[ib - c0], x, ib, terms);
            for (int g = 0; g < kKActGroups; ++g) acc[r][g][ib % 8] = wasm_f32x4_add(acc[r][g][ib % 8], terms[g]);
          }
        }
      }
      for (int g = 0; g < kKActGroups && a0 + kActLanes * g < n_acts; ++g) {
        const int first = a0 + kActLanes * g, n_valid = tile_valid(first, n_acts, kActLanes);
        for (int r = 0; r < chunk_rows; ++r) {
          store_lanes(sum_lanes8_each(acc[r][g]), out + r0 + r, out_stride, first, n_valid);
        }
      }
    }
  }
}

}  // namespace

// Every K-quant type through the scheme of simd128.h, per activation: sumi =
// Σ_j sc_j·Σ_{16 elements of j} q·x and, for the types with mins, summ =
// Σ_j m_j·bsums[j]; then term = (dx·d)·sumi, minus (dx·dmin)·summ for those.
template <typename Block>
void gemm_k_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts, int64_t act_stride,
                    int n_acts, float* out, int64_t out_stride) {
  gemm_k_quant<Block>(n, rows, row_stride, n_rows, acts, act_stride, n_acts, out, out_stride,
                      [](const Block& b, const WideQ8K& wide, const BlockQ8_K* const* x, int64_t ib, v128_t* terms) {
    int16_t sc[16], m[16];
    k_scales16(b, sc, m);
    v128_t sums[kKActs];
    for (v128_t& s : sums) s = wasm_i32x4_splat(0);
    for (int j = 0; j < 16; ++j) {
      v128_t wq[2];
      scaled_codes(b, j, sc[j], wq);
      for (int a = 0; a < kKActs; ++a) sums[a] = wasm_i32x4_add(sums[a], dot_i16(wq, wide.q[a] + 2 * j, 2));
    }
    for (int g = 0; g < kKActGroups; ++g) {
      const v128_t dx = wide.d[g];
      const v128_t t1 = wasm_f32x4_mul(wasm_f32x4_mul(dx, wasm_f32x4_splat(f16_to_f32(b.d))),
                                       wasm_f32x4_convert_i32x4(sum_each(sums + kActLanes * g)));
      if constexpr (requires { b.dmin; }) {
        v128_t mins[kActLanes];
        for (int a = 0; a < kActLanes; ++a) mins[a] = min_sums(x[kActLanes * g + a][ib], m);
        const v128_t t2 = wasm_f32x4_mul(wasm_f32x4_mul(dx, wasm_f32x4_splat(f16_to_f32(b.dmin))),
                                         wasm_f32x4_convert_i32x4(sum_each(mins)));
        terms[g] = wasm_f32x4_sub(t1, t2);
      } else {
        terms[g] = t1;
      }
    }
  });
}

namespace {

// ---- Float weights (F32, F16, BF16) against F32 ---------------------------------
//
// Each output keeps the dot's two 4-lane accumulators (element i in lane
// i % 8), summed in element order. Rows x activations per tile, as measured
// (docs/performance.md): the V8s that load the relaxed build (Chromium, Node
// 24) run 2 x 2 fastest, Node 20's V8 (the SIMD128 build) 3 x 1.
#if defined(WLLM_WASM_RELAXED)
constexpr int kFloatRows = 2, kFloatActs = 2;
#else
constexpr int kFloatRows = 3, kFloatActs = 1;
#endif

// One tile's sums over columns [c0, c0 + len) (len a multiple of 8): rows w as
// floats, activations x, accumulators lo/hi[row][act] carried in and out.
inline void float_tile(const float* const* w, const float* const* x, int64_t c0, int64_t len,
                       v128_t (&lo)[kFloatRows][kFloatActs], v128_t (&hi)[kFloatRows][kFloatActs]) {
  for (int64_t i = 0; i < len; i += 8) {
    for (int r = 0; r < kFloatRows; ++r) {
      const v128_t w_lo = wasm_v128_load(w[r] + i), w_hi = wasm_v128_load(w[r] + i + 4);
      for (int a = 0; a < kFloatActs; ++a) {
        lo[r][a] = wasm_f32x4_add(lo[r][a], wasm_f32x4_mul(w_lo, wasm_v128_load(x[a] + c0 + i)));
        hi[r][a] = wasm_f32x4_add(hi[r][a], wasm_f32x4_mul(w_hi, wasm_v128_load(x[a] + c0 + i + 4)));
      }
    }
  }
}

// F32 rows are read where they are, the accumulators kept in registers.
void gemm_f32(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts, int64_t act_stride,
              int n_acts, float* out, int64_t out_stride) {
  const int64_t n8 = n / 8 * 8;
  for (int r0 = 0; r0 < n_rows; r0 += kFloatRows) {
    const float* w[kFloatRows];
    tile_pointers(rows, row_stride, r0, n_rows, kFloatRows, w);
    for (int a0 = 0; a0 < n_acts; a0 += kFloatActs) {
      const float* x[kFloatActs];
      tile_pointers(acts, act_stride, a0, n_acts, kFloatActs, x);
      v128_t lo[kFloatRows][kFloatActs], hi[kFloatRows][kFloatActs];
      for (int r = 0; r < kFloatRows; ++r) {
        for (int a = 0; a < kFloatActs; ++a) lo[r][a] = hi[r][a] = wasm_f32x4_splat(0.0f);
      }
      float_tile(w, x, 0, n8, lo, hi);
      for (int r = 0; r < tile_valid(r0, n_rows, kFloatRows); ++r) {
        const float* row = w[r];
        for (int a = 0; a < tile_valid(a0, n_acts, kFloatActs); ++a) {
          out[(a0 + a) * out_stride + r0 + r] =
              finish_lanes(lo[r][a], hi[r][a], n8, n, [row](int64_t i) { return row[i]; }, x[a]);
        }
      }
    }
  }
}

// Half-precision rows: a tile's rows are converted to floats a chunk of
// columns at a time into a buffer, and the buffer is multiplied with a whole
// group of activations. Converting halves costs more than multiplying them
// (wasm has no conversion instruction), and this way each is converted once
// per group, not once per tile. The accumulators of every (row, activation)
// pair of the group stay in memory between chunks.
constexpr int64_t kHalfChunk = 1024;  // columns converted at once (4 KiB of floats per row)
constexpr int kHalfGroup = 64;        // activations that share one conversion
static_assert(kHalfGroup % kFloatActs == 0 && kHalfChunk % 8 == 0);

// How a half-precision row format becomes floats: len elements (a multiple
// of 8) from element i0 into out, and one element.
struct F16Row {
  // The cheap conversion, redone the exact way if a half is an infinity or NaN.
  static void to_f32(const void* row, int64_t i0, int64_t len, float* out) {
    const uint16_t* w = static_cast<const uint16_t*>(row) + i0;
    const v128_t zero = wasm_i16x8_splat(0);
    v128_t top_bits = zero;  // see any_special_half
    for (int64_t i = 0; i < len; i += 8) {
      const v128_t h = wasm_v128_load(w + i);
      top_bits = wasm_u16x8_max(top_bits, wasm_i16x8_shl(h, 1));
      wasm_v128_store(out + i, finite_half_top_to_f32(wasm_i16x8_shuffle(zero, h, 0, 8, 1, 9, 2, 10, 3, 11)));
      wasm_v128_store(out + i + 4, finite_half_top_to_f32(wasm_i16x8_shuffle(zero, h, 4, 12, 5, 13, 6, 14, 7, 15)));
    }
    if (!any_special_half(top_bits)) return;
    for (int64_t i = 0; i < len; i += 8) {
      v128_t lo, hi;
      f16x8_to_f32(wasm_v128_load(w + i), &lo, &hi);
      wasm_v128_store(out + i, lo);
      wasm_v128_store(out + i + 4, hi);
    }
  }
  static float load1(const void* row, int64_t i) { return f16_to_f32(static_cast<const uint16_t*>(row)[i]); }
};
struct BF16Row {
  static void to_f32(const void* row, int64_t i0, int64_t len, float* out) {
    const uint16_t* w = static_cast<const uint16_t*>(row) + i0;
    const v128_t zero = wasm_i16x8_splat(0);
    for (int64_t i = 0; i < len; i += 8) {  // bf16 is an f32's top half
      const v128_t h = wasm_v128_load(w + i);
      wasm_v128_store(out + i, wasm_i16x8_shuffle(zero, h, 0, 8, 1, 9, 2, 10, 3, 11));
      wasm_v128_store(out + i + 4, wasm_i16x8_shuffle(zero, h, 4, 12, 5, 13, 6, 14, 7, 15));
    }
  }
  static float load1(const void* row, int64_t i) { return bf16_to_f32(static_cast<const uint16_t*>(row)[i]); }
};

template <typename Row>
void gemm_half(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts, int64_t act_stride,
               int n_acts, float* out, int64_t out_stride) {
  const int64_t n8 = n / 8 * 8;
  alignas(16) float converted[kFloatRows][kHalfChunk];
  const float* w_f32[kFloatRows];
  for (int r = 0; r < kFloatRows; ++r) w_f32[r] = converted[r];
  v128_t acc[kHalfGroup][kFloatRows][2];  // lanes 0..3 and 4..7 of each pair's dot
  for (int r0 = 0; r0 < n_rows; r0 += kFloatRows) {
    const uint8_t* w[kFloatRows];
    tile_pointers(rows, row_stride, r0, n_rows, kFloatRows, w);
    for (int g0 = 0; g0 < n_acts; g0 += kHalfGroup) {
      const int group = std::min(kHalfGroup, n_acts - g0);
      for (int a = 0; a < group; ++a) {
        for (int r = 0; r < kFloatRows; ++r) acc[a][r][0] = acc[a][r][1] = wasm_f32x4_splat(0.0f);
      }
      for (int64_t c0 = 0; c0 < n8; c0 += kHalfChunk) {
        const int64_t len = std::min(kHalfChunk, n8 - c0);
        for (int r = 0; r < kFloatRows; ++r) Row::to_f32(w[r], c0, len, converted[r]);
        // A tile past the group's end repeats its last activation into spare
        // accumulators (the array has room: kHalfGroup is a multiple of kFloatActs).
        for (int a0 = 0; a0 < group; a0 += kFloatActs) {
          const float* x[kFloatActs];
          tile_pointers(acts, act_stride, g0 + a0, n_acts, kFloatActs, x);
          v128_t lo[kFloatRows][kFloatActs], hi[kFloatRows][kFloatActs];
          for (int r = 0; r < kFloatRows; ++r) {
            for (int a = 0; a < kFloatActs; ++a) lo[r][a] = acc[a0 + a][r][0], hi[r][a] = acc[a0 + a][r][1];
          }
          float_tile(w_f32, x, c0, len, lo, hi);
          for (int r = 0; r < kFloatRows; ++r) {
            for (int a = 0; a < kFloatActs; ++a) acc[a0 + a][r][0] = lo[r][a], acc[a0 + a][r][1] = hi[r][a];
          }
        }
      }
      for (int r = 0; r < tile_valid(r0, n_rows, kFloatRows); ++r) {
        const void* row = w[r];
        for (int a = 0; a < group; ++a) {
          const float* x = reinterpret_cast<const float*>(static_cast<const uint8_t*>(acts) + (g0 + a) * act_stride);
          out[(g0 + a) * out_stride + r0 + r] =
              finish_lanes(acc[a][r][0], acc[a][r][1], n8, n, [row](int64_t i) { return Row::load1(row, i); }, x);
        }
      }
    }
  }
}

}  // namespace

void gemm_f32_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                      int64_t act_stride, int n_acts, float* out, int64_t out_stride) {
  gemm_f32(n, rows, row_stride, n_rows, acts, act_stride, n_acts, out, out_stride);
}
void gemm_f16_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                      int64_t act_stride, int n_acts, float* out, int64_t out_stride) {
  if (n_acts == 1) return matvec_f16_simd128(n, rows, row_stride, n_rows, acts, out);  // attention of one head
  gemm_half<F16Row>(n, rows, row_stride, n_rows, acts, act_stride, n_acts, out, out_stride);
}
void gemm_bf16_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                       int64_t act_stride, int n_acts, float* out, int64_t out_stride) {
  gemm_half<BF16Row>(n, rows, row_stride, n_rows, acts, act_stride, n_acts, out, out_stride);
}
void gemm_q4_0_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                       int64_t act_stride, int n_acts, float* out, int64_t out_stride) {
  gemm_q8_0_family<BlockQ4_0>(n, rows, row_stride, n_rows, acts, act_stride, n_acts, out, out_stride);
}
void gemm_q5_0_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                       int64_t act_stride, int n_acts, float* out, int64_t out_stride) {
  gemm_q8_0_family<BlockQ5_0>(n, rows, row_stride, n_rows, acts, act_stride, n_acts, out, out_stride);
}
void gemm_q8_0_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                       int64_t act_stride, int n_acts, float* out, int64_t out_stride) {
  gemm_q8_0_family<BlockQ8_0>(n, rows, row_stride, n_rows, acts, act_stride, n_acts, out, out_stride);
}

void matvec_q4_0_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out) {
  matvec_q8_0_family<BlockQ4_0>(n, rows, row_stride, n_rows, act, out);
}
void matvec_q5_0_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out) {
  matvec_q8_0_family<BlockQ5_0>(n, rows, row_stride, n_rows, act, out);
}
void matvec_q8_0_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out) {
  matvec_q8_0_family<BlockQ8_0>(n, rows, row_stride, n_rows, act, out);
}

// The K-quant instances the kernel table names.
template void gemm_k_simd128<BlockQ2_K>(int64_t, const void*, int64_t, int, const void*, int64_t, int, float*, int64_t);
template void gemm_k_simd128<BlockQ3_K>(int64_t, const void*, int64_t, int, const void*, int64_t, int, float*, int64_t);
template void gemm_k_simd128<BlockQ4_K>(int64_t, const void*, int64_t, int, const void*, int64_t, int, float*, int64_t);
template void gemm_k_simd128<BlockQ5_K>(int64_t, const void*, int64_t, int, const void*, int64_t, int, float*, int64_t);
template void gemm_k_simd128<BlockQ6_K>(int64_t, const void*, int64_t, int, const void*, int64_t, int, float*, int64_t);

}  // namespace wllm::simd128

#endif
