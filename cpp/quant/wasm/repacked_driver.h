// The loops every repacked SIMD128 layout shares (repacked_simd128.cpp, and
// the relaxed-SIMD kernels in relaxed_repacked.cpp): groups of 8 rows against
// a few activations at a time, each activation's blocks prepared once into a
// stack buffer. A Format says how:
//   Packed, Act, Prepared, kBlock   its 8-row block, the activation's block,
//                                   that block prepared, elements per block
//   kGemmActs                       activations per gemm tile
//   prepare(x, count, out)          prepares count activation blocks
//   add_blocks<kActs>(w, x, c0, c1, acc)
//                                   adds blocks [c0, c1) of a group (w: its
//                                   first block) against kActs prepared
//                                   activations into acc[a][h][block % 8],
//                                   lane k of half h holding row 4h + k
// Also the Q6_Kx8 format, which both ISAs share but for how an activation's
// bytes meet a code vector. Included by one .cpp per ISA; everything here is
// internal to it.
#pragma once

#include <wasm_simd128.h>

#include <algorithm>
#include <cstdint>

#include "quant/gemm_tile.h"
#include "quant/wasm/simd128.h"

namespace wllm::simd128 {
namespace {

// Groups [0, n_groups) of rows against kActs activations (x: their rows;
// out[a]: where activation a's outputs go, 8 per group).
template <typename Format, int kActs>
void run_groups(int64_t nb, const uint8_t* rows, int64_t row_stride, int n_groups, const typename Format::Act* const* x,
                float* const* out) {
  using Prepared = typename Format::Prepared;
  // Blocks prepared at a time (112 KiB of stack): Q8_0 rows of up to 8192
  // elements against 4 activations in one go. (Re-preparing per group of
  // rows, as 56 KiB made 5632-element rows do, slowed their gemm markedly:
  // docs/performance.md.)
  constexpr int64_t kChunk = 112 * 1024 / sizeof(Prepared) / kActs;
  Prepared prepared[kActs][kChunk];
  const Prepared* prepared_rows[kActs];
  for (int a = 0; a < kActs; ++a) prepared_rows[a] = prepared[a];
  const bool prepared_once = nb <= kChunk;  // else re-prepared per chunk of each group
  if (prepared_once) {
    for (int a = 0; a < kActs; ++a) Format::prepare(x[a], nb, prepared[a]);
  }
  for (int g = 0; g < n_groups; ++g) {
    const auto* w = reinterpret_cast<const typename Format::Packed*>(rows + g * 8 * row_stride);
    v128_t acc[kActs][2][8];
    for (auto& act : acc) {
      for (auto& half : act) {
        for (v128_t& v : half) v = wasm_f32x4_splat(0.0f);
      }
    }
    for (int64_t c0 = 0; c0 < nb; c0 += kChunk) {
      const int64_t c1 = std::min(c0 + kChunk, nb);
      if (!prepared_once) {
        for (int a = 0; a < kActs; ++a) Format::prepare(x[a] + c0, c1 - c0, prepared[a]);
      }
      Format::template add_blocks<kActs>(w, prepared_rows, c0, c1, acc);
    }
    for (int a = 0; a < kActs; ++a) {
      wasm_v128_store(out[a] + 8 * g, sum_lanes8_each(acc[a][0]));
      wasm_v128_store(out[a] + 8 * g + 4, sum_lanes8_each(acc[a][1]));
    }
  }
}

// Q6_Kx8 (blocks.h) against Q8_K, for SIMD128 and relaxed SIMD alike:
// Σ_j sc_j·Σ (code − 32)·x over the 16 sub-blocks, each sub-block's sum
// starting at −32·Σx. Step c of part n makes 4 code vectors
// (q6_Kx8_codes): elements 128n + 32g + 4c.. (g = 0..3, sub-block 8n + 2g +
// c / 4), which the ISA's prepared activation adds into the 4 rows' lanes
// (PreparedBlock::add; prepare_bytes lays the activation out for it). So a
// quarter keeps 4 independent sums per activation, then meets the 4
// sub-blocks' scales stored after it.
template <typename PreparedBlock, int kActsPerTile>
struct Q6_Kx8Format {
  using Packed = BlockQ6_Kx8;
  using Act = BlockQ8_K;
  using Prepared = PreparedBlock;
  static constexpr int kBlock = kQK_K;
  static constexpr int kGemmActs = kActsPerTile;

  static void prepare(const BlockQ8_K* x, int64_t count, Prepared* out) {
    for (int64_t ib = 0; ib < count; ++ib) {
      Prepared::prepare_bytes(x[ib], out[ib]);
      for (int j = 0; j < 16; ++j) out[ib].minus_32_sums[j] = -32 * x[ib].bsums[j];
      out[ib].d = x[ib].d;
    }
  }

  template <int kActs>
  static void add_blocks(const Packed* w, const Prepared* const* x, int64_t c0, int64_t c1, v128_t acc[][2][8]) {
    for (int64_t ib = c0; ib < c1; ++ib) {
      const Packed& b = w[ib];
      v128_t dw[2];
      f16x8_to_f32(wasm_v128_load(b.d), &dw[0], &dw[1]);
      for (int h = 0; h < 2; ++h) {
        v128_t sumi[kActs];
        for (v128_t& v : sumi) v = wasm_i32x4_splat(0);
        for (int n = 0; n < 2; ++n) {
          for (int r = 0; r < 2; ++r) {
            const Packed::Quarter& quarter = b.quarters[h][n][r];
            v128_t sum[kActs][4];
            for (int a = 0; a < kActs; ++a) {
              for (int g = 0; g < 4; ++g) sum[a][g] = wasm_i32x4_splat(x[a][ib - c0].minus_32_sums[8 * n + 2 * g + r]);
            }
            for (int i = 0; i < 4; ++i) {
              v128_t codes_of[4];
              q6_Kx8_codes(quarter.steps[i], codes_of);
              for (int a = 0; a < kActs; ++a) {
                const int e = 128 * n + 4 * (4 * r + i);
                for (int g = 0; g < 4; ++g) sum[a][g] = Prepared::add(x[a][ib - c0], e + 32 * g, codes_of[g], sum[a][g]);
              }
            }
            for (int g = 0; g < 4; ++g) {  // the 4 rows' scales of sub-block 8n + 2g + r, as int32 lanes
              const v128_t sc =
                  wasm_i32x4_extend_low_i16x8(wasm_i16x8_extend_low_i8x16(wasm_v128_load32_zero(quarter.scales[g])));
              for (int a = 0; a < kActs; ++a) sumi[a] = wasm_i32x4_add(sumi[a], wasm_i32x4_mul(sum[a][g], sc));
            }
          }
        }
        for (int a = 0; a < kActs; ++a) {
          const v128_t dx = wasm_f32x4_splat(x[a][ib - c0].d);
          const v128_t term = wasm_f32x4_mul(wasm_f32x4_mul(dx, dw[h]), wasm_f32x4_convert_i32x4(sumi[a]));
          acc[a][h][ib % 8] = wasm_f32x4_add(acc[a][h][ib % 8], term);
        }
      }
    }
  }
};

// Decode: the rows against one activation.
template <typename Format>
void matvec_8_rows(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out) {
  const typename Format::Act* x[1] = {static_cast<const typename Format::Act*>(act)};
  float* outs[1] = {out};
  run_groups<Format, 1>(n / Format::kBlock, static_cast<const uint8_t*>(rows), row_stride, n_rows / 8, x, outs);
}

// A batch: 64 rows at a time against the activations kGemmActs at a time, so
// those rows stay in cache while each activation is prepared and run through
// them, and each chunk of weights is loaded once for several activations. A
// last partial tile repeats its last activation and drops those outputs (a
// scratch row).
template <typename Format>
void gemm_8_rows(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts, int64_t act_stride,
                 int n_acts, float* out, int64_t out_stride) {
  constexpr int kRowChunk = 64, kActs = Format::kGemmActs;
  float scratch[kRowChunk];
  for (int r0 = 0; r0 < n_rows; r0 += kRowChunk) {
    const int groups = std::min(kRowChunk, n_rows - r0) / 8;
    for (int a0 = 0; a0 < n_acts; a0 += kActs) {
      const typename Format::Act* x[kActs];
      tile_pointers(acts, act_stride, a0, n_acts, kActs, x);
      float* outs[kActs];
      for (int a = 0; a < kActs; ++a) outs[a] = a0 + a < n_acts ? out + (a0 + a) * out_stride + r0 : scratch;
      const uint8_t* first = static_cast<const uint8_t*>(rows) + r0 * row_stride;
      run_groups<Format, kActs>(n / Format::kBlock, first, row_stride, groups, x, outs);
    }
  }
}

}  // namespace
}  // namespace wllm::simd128
