// SIMD128 kernels for weights repacked at load (repack.h): Q4_0 rows as
// Q4_0x8 (blocks.h). Each vector holds 4 rows, one per lane: a chunk of a
// block (2 bytes of each of the 4 rows) widens to 8 int16 as it loads, and
// i32x4.dot_i16x8 against the activation's matching 2 elements (splatted)
// adds each row's products into that row's own lane. So a block's 4 row sums
// come out in one vector with no horizontal reduction, and the 8 rows' scales
// are one 16-byte load. The arithmetic per row is the dot's (traits.h): exact
// int32 block sums, term (d_w·d_x)·sum into lane block % 8, the reference's
// final reduction.
#include "quant/kernels.h"

#if defined(__wasm_simd128__)

#include <algorithm>

#include "quant/wasm/simd128.h"

namespace wllm::simd128 {
namespace {

constexpr int64_t kChunk = 256;  // activation blocks prepared at a time (8192 elements, 28 KiB of stack)

// Adds blocks [c0, c1) of one group of 8 rows (w: its first block) into
// acc[h][block % 8] (lane k: row 4h + k). x holds those blocks prepared.
// The packed bytes b are used as they load (PreparedQ8_0 says why):
// Σ b·x_low + (b >> 4)·(x_high − 16·x_low) − 8·Σx.
void add_group_blocks(const BlockQ4_0x8* w, const PreparedQ8_0* x, int64_t c0, int64_t c1, v128_t acc[2][8]) {
  for (int64_t ib = c0; ib < c1; ++ib) {
    const PreparedQ8_0& p = x[ib - c0];
    const uint8_t* low_pairs = reinterpret_cast<const uint8_t*>(p.q);  // elements 2c, 2c+1 as int16 at 4c
    const uint8_t* high_pairs = reinterpret_cast<const uint8_t*>(p.high_minus);
    v128_t sum[2] = {wasm_i32x4_splat(0), wasm_i32x4_splat(0)};
    for (int c = 0; c < 8; ++c) {
      const v128_t x_low = wasm_v128_load32_splat(low_pairs + 4 * c);
      const v128_t x_high = wasm_v128_load32_splat(high_pairs + 4 * c);
      for (int h = 0; h < 2; ++h) {
        const v128_t b = wasm_u16x8_load8x8(w[ib].qs[h] + 8 * c);
        sum[h] = wasm_i32x4_add(sum[h], wasm_i32x4_add(wasm_i32x4_dot_i16x8(b, x_low),
                                                       wasm_i32x4_dot_i16x8(wasm_u16x8_shr(b, 4), x_high)));
      }
    }
    v128_t dw[2];
    f16x8_to_f32(wasm_v128_load(w[ib].d), &dw[0], &dw[1]);
    const v128_t dx = wasm_f32x4_splat(p.d), offset = wasm_i32x4_splat(8 * p.sum);
    for (int h = 0; h < 2; ++h) {
      const v128_t term = wasm_f32x4_mul(wasm_f32x4_mul(dw[h], dx), wasm_f32x4_convert_i32x4(wasm_i32x4_sub(sum[h], offset)));
      acc[h][ib % 8] = wasm_f32x4_add(acc[h][ib % 8], term);
    }
  }
}

}  // namespace

void matvec_q4_0x8_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out) {
  const int64_t nb = n / kQK;
  const BlockQ8_0* x = static_cast<const BlockQ8_0*>(act);
  PreparedQ8_0 prepared[kChunk];
  const bool prepared_once = nb <= kChunk;  // else re-prepared per chunk of each group
  if (prepared_once) prepare_q8_0(x, nb, prepared);
  for (int g = 0; g < n_rows / 8; ++g) {
    const auto* w = reinterpret_cast<const BlockQ4_0x8*>(static_cast<const uint8_t*>(rows) + g * 8 * row_stride);
    v128_t acc[2][8];
    for (auto& half : acc) {
      for (v128_t& a : half) a = wasm_f32x4_splat(0.0f);
    }
    for (int64_t c0 = 0; c0 < nb; c0 += kChunk) {
      const int64_t c1 = std::min(c0 + kChunk, nb);
      if (!prepared_once) prepare_q8_0(x + c0, c1 - c0, prepared);
      add_group_blocks(w, prepared, c0, c1, acc);
    }
    wasm_v128_store(out + 8 * g, sum_lanes8_each(acc[0]));
    wasm_v128_store(out + 8 * g + 4, sum_lanes8_each(acc[1]));
  }
}

// A batch: 64 rows at a time against every activation, so those rows stay in
// cache while each activation is prepared and run through them.
void gemm_q4_0x8_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                         int64_t act_stride, int n_acts, float* out, int64_t out_stride) {
  constexpr int kRowChunk = 64;
  for (int r0 = 0; r0 < n_rows; r0 += kRowChunk) {
    const int count = std::min(kRowChunk, n_rows - r0);
    const uint8_t* w = static_cast<const uint8_t*>(rows) + r0 * row_stride;
    for (int a = 0; a < n_acts; ++a) {
      matvec_q4_0x8_simd128(n, w, row_stride, count, static_cast<const uint8_t*>(acts) + a * act_stride,
                            out + a * out_stride + r0);
    }
  }
}

namespace {
constexpr RepackedType kSimd128Repacked[] = {
    {"q4_0x8", TensorType::kQ4_0, 8, ref::repack_q4_0x8, ref::unpack_q4_0x8, matvec_q4_0x8_simd128,
     gemm_q4_0x8_simd128},
};
}  // namespace

}  // namespace wllm::simd128

namespace wllm {
const RepackedType* simd128_repacked_types(int* count) {
  *count = static_cast<int>(sizeof(simd128::kSimd128Repacked) / sizeof(simd128::kSimd128Repacked[0]));
  return simd128::kSimd128Repacked;
}
}  // namespace wllm

#else  // built without SIMD128

namespace wllm {
const RepackedType* simd128_repacked_types(int* count) {
  *count = 0;
  return nullptr;
}
}  // namespace wllm

#endif
