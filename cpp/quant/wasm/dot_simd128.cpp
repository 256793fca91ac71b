// wasm SIMD128 dot kernels, the same arithmetic as the reference kernels
// (traits.h): float dots keep element i in lane i % 8, here two 4-lane
// registers; quantized dots sum each block's integer products exactly in
// vectors, then add the block's float term into lane (block % 8) exactly as
// the reference does. No FMA exists in SIMD128, so none is used.
#include "quant/kernels.h"

#if defined(__wasm_simd128__)

#include <wasm_simd128.h>

#include <cstring>

#include "core/half.h"
#include "quant/blocks.h"

namespace wllm {
namespace {

// Finishes a lane-structured float dot: lanes 0..3 in lo, 4..7 in hi, then
// the tail elements n8..n in lanes i % 8, then the fixed reduction.
template <typename Load>
float finish_lanes(v128_t lo, v128_t hi, int64_t n8, int64_t n, Load load, const float* x) {
  float acc[8];
  wasm_v128_store(acc, lo);
  wasm_v128_store(acc + 4, hi);
  for (int64_t i = n8; i < n; ++i) {
    const float p = load(i) * x[i];
    acc[i % 8] += p;
  }
  return sum_lanes8(acc);
}

float dot_f32_simd128(int64_t n, const void* row, const void* act) {
  const float* w = static_cast<const float*>(row);
  const float* x = static_cast<const float*>(act);
  const int64_t n8 = n / 8 * 8;
  v128_t lo = wasm_f32x4_splat(0.0f), hi = wasm_f32x4_splat(0.0f);
  for (int64_t i = 0; i < n8; i += 8) {
    lo = wasm_f32x4_add(lo, wasm_f32x4_mul(wasm_v128_load(w + i), wasm_v128_load(x + i)));
    hi = wasm_f32x4_add(hi, wasm_f32x4_mul(wasm_v128_load(w + i + 4), wasm_v128_load(x + i + 4)));
  }
  return finish_lanes(lo, hi, n8, n, [w](int64_t i) { return w[i]; }, x);
}

// Four f16 values (the low 64 bits of h, as u16) to f32, exactly: the
// exponent and mantissa shifted into place and scaled by 2^112 (exact for
// normal and subnormal halves alike); infinities and NaNs get the f32
// exponent back explicitly.
inline v128_t f16x4_to_f32(v128_t h) {
  const v128_t u = wasm_u32x4_extend_low_u16x8(h);
  const v128_t sign = wasm_i32x4_shl(wasm_v128_and(u, wasm_i32x4_splat(0x8000)), 16);
  const v128_t magnitude = wasm_i32x4_shl(wasm_v128_and(u, wasm_i32x4_splat(0x7fff)), 13);
  const v128_t scaled = wasm_f32x4_mul(magnitude, wasm_f32x4_splat(0x1p112f));
  const v128_t is_special = wasm_i32x4_ge(magnitude, wasm_i32x4_splat(0x7c00 << 13));
  const v128_t special = wasm_v128_or(magnitude, wasm_i32x4_splat(0x7f800000));
  return wasm_v128_or(sign, wasm_v128_bitselect(special, scaled, is_special));
}

float dot_f16_simd128(int64_t n, const void* row, const void* act) {
  const uint16_t* w = static_cast<const uint16_t*>(row);
  const float* x = static_cast<const float*>(act);
  const int64_t n8 = n / 8 * 8;
  v128_t lo = wasm_f32x4_splat(0.0f), hi = wasm_f32x4_splat(0.0f);
  for (int64_t i = 0; i < n8; i += 8) {
    const v128_t h = wasm_v128_load(w + i);
    const v128_t w_lo = f16x4_to_f32(h);
    const v128_t w_hi = f16x4_to_f32(wasm_i64x2_shuffle(h, h, 1, 0));
    lo = wasm_f32x4_add(lo, wasm_f32x4_mul(w_lo, wasm_v128_load(x + i)));
    hi = wasm_f32x4_add(hi, wasm_f32x4_mul(w_hi, wasm_v128_load(x + i + 4)));
  }
  return finish_lanes(lo, hi, n8, n, [w](int64_t i) { return f16_to_f32(w[i]); }, x);
}

float dot_bf16_simd128(int64_t n, const void* row, const void* act) {
  const uint16_t* w = static_cast<const uint16_t*>(row);
  const float* x = static_cast<const float*>(act);
  const int64_t n8 = n / 8 * 8;
  v128_t lo = wasm_f32x4_splat(0.0f), hi = wasm_f32x4_splat(0.0f);
  for (int64_t i = 0; i < n8; i += 8) {
    const v128_t h = wasm_v128_load(w + i);
    const v128_t w_lo = wasm_i32x4_shl(wasm_u32x4_extend_low_u16x8(h), 16);  // bf16 is an f32's top half
    const v128_t w_hi = wasm_i32x4_shl(wasm_u32x4_extend_high_u16x8(h), 16);
    lo = wasm_f32x4_add(lo, wasm_f32x4_mul(w_lo, wasm_v128_load(x + i)));
    hi = wasm_f32x4_add(hi, wasm_f32x4_mul(w_hi, wasm_v128_load(x + i + 4)));
  }
  return finish_lanes(lo, hi, n8, n, [w](int64_t i) { return bf16_to_f32(w[i]); }, x);
}

// Σ w_i·x_i over 16 signed bytes as 4 partial int32 sums (exact).
inline v128_t dot_i8x16(v128_t w, v128_t x) {
  const v128_t lo = wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(w), wasm_i16x8_extend_low_i8x16(x));
  const v128_t hi = wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(w), wasm_i16x8_extend_high_i8x16(x));
  return wasm_i32x4_add(lo, hi);
}

inline int32_t total(v128_t v) {
  return wasm_i32x4_extract_lane(v, 0) + wasm_i32x4_extract_lane(v, 1) + wasm_i32x4_extract_lane(v, 2) +
         wasm_i32x4_extract_lane(v, 3);
}

int32_t block_sum_q8_0(const BlockQ8_0& w, const BlockQ8_0& x) {
  return total(wasm_i32x4_add(dot_i8x16(wasm_v128_load(w.qs), wasm_v128_load(x.qs)),
                              dot_i8x16(wasm_v128_load(w.qs + 16), wasm_v128_load(x.qs + 16))));
}

// Q4_0: low nibbles are elements 0..15, high nibbles 16..31, each minus 8.
int32_t block_sum_q4_0(const BlockQ4_0& w, const BlockQ8_0& x) {
  const v128_t packed = wasm_v128_load(w.qs);
  const v128_t eight = wasm_i8x16_splat(8);
  const v128_t lo = wasm_i8x16_sub(wasm_v128_and(packed, wasm_i8x16_splat(15)), eight);
  const v128_t hi = wasm_i8x16_sub(wasm_u8x16_shr(packed, 4), eight);
  return total(wasm_i32x4_add(dot_i8x16(lo, wasm_v128_load(x.qs)), dot_i8x16(hi, wasm_v128_load(x.qs + 16))));
}

// Q5_0: Q4_0's nibbles plus bit i of the 32-bit qh on top, minus 16.
int32_t block_sum_q5_0(const BlockQ5_0& w, const BlockQ8_0& x) {
  uint32_t qh;
  std::memcpy(&qh, w.qh, sizeof qh);
  const v128_t bit = wasm_i64x2_splat(static_cast<int64_t>(0x8040201008040201ull));
  const v128_t sixteen = wasm_i8x16_splat(16);
  const v128_t qh_bytes = wasm_i32x4_splat(static_cast<int32_t>(qh));
  // Byte i/8 of qh into element i, then test bit i % 8.
  const v128_t spread_lo = wasm_i8x16_swizzle(qh_bytes, wasm_i8x16_make(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1));
  const v128_t spread_hi = wasm_i8x16_swizzle(qh_bytes, wasm_i8x16_make(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  const v128_t high_lo = wasm_v128_and(wasm_i8x16_eq(wasm_v128_and(spread_lo, bit), bit), sixteen);
  const v128_t high_hi = wasm_v128_and(wasm_i8x16_eq(wasm_v128_and(spread_hi, bit), bit), sixteen);
  const v128_t packed = wasm_v128_load(w.qs);
  const v128_t lo = wasm_i8x16_sub(wasm_v128_or(wasm_v128_and(packed, wasm_i8x16_splat(15)), high_lo), sixteen);
  const v128_t hi = wasm_i8x16_sub(wasm_v128_or(wasm_u8x16_shr(packed, 4), high_hi), sixteen);
  return total(wasm_i32x4_add(dot_i8x16(lo, wasm_v128_load(x.qs)), dot_i8x16(hi, wasm_v128_load(x.qs + 16))));
}

// The reference's per-block combination for Q8_0 activations.
template <typename Block, int32_t (*block_sum)(const Block&, const BlockQ8_0&)>
float dot_blocks_q8_0(int64_t n, const void* row, const void* act) {
  const Block* w = static_cast<const Block*>(row);
  const BlockQ8_0* x = static_cast<const BlockQ8_0*>(act);
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t ib = 0; ib < n / kQK; ++ib) {
    const float term = (f16_to_f32(w[ib].d) * f16_to_f32(x[ib].d)) * static_cast<float>(block_sum(w[ib], x[ib]));
    acc[ib % 8] += term;
  }
  return sum_lanes8(acc);
}

// Q6_K: Σ_j scales[j]·Σ_{16 elements of j} q·x, q = 6-bit value - 32.
int32_t block_sum_q6_K(const BlockQ6_K& w, const BlockQ8_K& x) {
  const v128_t mask4 = wasm_i8x16_splat(15), mask2 = wasm_i8x16_splat(3), bias = wasm_i8x16_splat(32);
  int32_t sum = 0;
  for (int h = 0; h < 2; ++h) {
    for (int g = 0; g < 4; ++g) {
      for (int half = 0; half < 2; ++half) {  // 16 elements: sub-block 8h + 2g + half
        const int l = 16 * half;
        const v128_t ql = wasm_v128_load(w.ql + 64 * h + 32 * (g & 1) + l);
        const v128_t low = (g >> 1) ? wasm_u8x16_shr(ql, 4) : wasm_v128_and(ql, mask4);
        const v128_t high = wasm_v128_and(wasm_u8x16_shr(wasm_v128_load(w.qh + 32 * h + l), 2 * g), mask2);
        const v128_t q = wasm_i8x16_sub(wasm_v128_or(low, wasm_i8x16_shl(high, 4)), bias);
        const v128_t xv = wasm_v128_load(x.qs + 128 * h + 32 * g + l);
        sum += w.scales[8 * h + 2 * g + half] * total(dot_i8x16(q, xv));
      }
    }
  }
  return sum;
}

float dot_q6_K_simd128(int64_t n, const void* row, const void* act) {
  const BlockQ6_K* w = static_cast<const BlockQ6_K*>(row);
  const BlockQ8_K* x = static_cast<const BlockQ8_K*>(act);
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t ib = 0; ib < n / kQK_K; ++ib) {
    const float term = (x[ib].d * f16_to_f32(w[ib].d)) * static_cast<float>(block_sum_q6_K(w[ib], x[ib]));
    acc[ib % 8] += term;
  }
  return sum_lanes8(acc);
}

float dot_q4_K_simd128(int64_t n, const void* row, const void* act) {
  const BlockQ4_K* w = static_cast<const BlockQ4_K*>(row);
  const BlockQ8_K* x = static_cast<const BlockQ8_K*>(act);
  const v128_t mask4 = wasm_i8x16_splat(15);
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t ib = 0; ib < n / kQK_K; ++ib) {
    int32_t sumi = 0, summ = 0;
    for (int j = 0; j < 8; ++j) {  // sub-block j: nibble j % 2 of qs[32·(j / 2) ..]
      int sc, m;
      k4_scale_min(w[ib].scales, j, &sc, &m);
      const uint8_t* qs = w[ib].qs + 32 * (j / 2);
      v128_t part = wasm_i32x4_splat(0);
      for (int l = 0; l < 32; l += 16) {
        const v128_t packed = wasm_v128_load(qs + l);
        const v128_t q = (j & 1) ? wasm_u8x16_shr(packed, 4) : wasm_v128_and(packed, mask4);
        part = wasm_i32x4_add(part, dot_i8x16(q, wasm_v128_load(x[ib].qs + 32 * j + l)));
      }
      sumi += sc * total(part);
      summ += m * (x[ib].bsums[2 * j] + x[ib].bsums[2 * j + 1]);
    }
    const float dx = x[ib].d;
    const float term = (dx * f16_to_f32(w[ib].d)) * static_cast<float>(sumi) -
                       (dx * f16_to_f32(w[ib].dmin)) * static_cast<float>(summ);
    acc[ib % 8] += term;
  }
  return sum_lanes8(acc);
}

constexpr DotKernel kSimd128Kernels[] = {
    {TensorType::kF32, dot_f32_simd128},
    {TensorType::kF16, dot_f16_simd128},
    {TensorType::kBF16, dot_bf16_simd128},
    {TensorType::kQ8_0, dot_blocks_q8_0<BlockQ8_0, block_sum_q8_0>},
    {TensorType::kQ4_0, dot_blocks_q8_0<BlockQ4_0, block_sum_q4_0>},
    {TensorType::kQ5_0, dot_blocks_q8_0<BlockQ5_0, block_sum_q5_0>},
    {TensorType::kQ4_K, dot_q4_K_simd128},
    {TensorType::kQ6_K, dot_q6_K_simd128},
};

}  // namespace

const DotKernel* simd128_dot_kernels(size_t* count) {
  *count = sizeof(kSimd128Kernels) / sizeof(kSimd128Kernels[0]);
  return kSimd128Kernels;
}

}  // namespace wllm

#else  // built without SIMD128

namespace wllm {
const DotKernel* simd128_dot_kernels(size_t* count) {
  *count = 0;
  return nullptr;
}
}  // namespace wllm

#endif
