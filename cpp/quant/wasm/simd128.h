// Block decoding and vector helpers shared by the SIMD128 dot
// (dot_simd128.cpp) and tiled (gemm_simd128.cpp) kernels, so each block
// format is unpacked by one piece of code. Include only when building with
// -msimd128.
#pragma once

#include <wasm_simd128.h>

#include <cstdint>
#include <cstring>

#include "quant/blocks.h"
#include "quant/traits.h"

namespace wllm::simd128 {

// Finishes a lane-structured float dot: lanes 0..3 in lo, 4..7 in hi, then
// the tail elements n8..n in lanes i % 8, then the fixed reduction.
template <typename Load>
inline float finish_lanes(v128_t lo, v128_t hi, int64_t n8, int64_t n, Load load, const float* x) {
  float acc[8];
  wasm_v128_store(acc, lo);
  wasm_v128_store(acc + 4, hi);
  for (int64_t i = n8; i < n; ++i) {
    const float p = load(i) * x[i];
    acc[i % 8] += p;
  }
  return sum_lanes8(acc);
}

// sum_lanes8 of the same lane of eight accumulators at once.
inline v128_t sum_lanes8_each(const v128_t a[8]) {
  const v128_t s0 = wasm_f32x4_add(a[0], a[4]), s1 = wasm_f32x4_add(a[1], a[5]);
  const v128_t s2 = wasm_f32x4_add(a[2], a[6]), s3 = wasm_f32x4_add(a[3], a[7]);
  return wasm_f32x4_add(wasm_f32x4_add(s0, s2), wasm_f32x4_add(s1, s3));
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

// Four f16 values as floats.
inline v128_t f16x4_to_f32(uint16_t h0, uint16_t h1, uint16_t h2, uint16_t h3) {
  return f16x4_to_f32(wasm_u16x8_make(h0, h1, h2, h3, 0, 0, 0, 0));
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

// The totals of 4 vectors of int32 partial sums as one vector (lane a: v[a]).
// Integer adds are exact, so the order does not matter.
inline v128_t sum_each(const v128_t v[4]) {
  const v128_t s01 = wasm_i32x4_add(wasm_i32x4_shuffle(v[0], v[1], 0, 2, 4, 6), wasm_i32x4_shuffle(v[0], v[1], 1, 3, 5, 7));
  const v128_t s23 = wasm_i32x4_add(wasm_i32x4_shuffle(v[2], v[3], 0, 2, 4, 6), wasm_i32x4_shuffle(v[2], v[3], 1, 3, 5, 7));
  return wasm_i32x4_add(wasm_i32x4_shuffle(s01, s23, 0, 2, 4, 6), wasm_i32x4_shuffle(s01, s23, 1, 3, 5, 7));
}

// The signed codes of a block against Q8_0 as 32 bytes in element order:
// elements 0..15 in *lo, 16..31 in *hi. Q4_0: nibbles minus 8 (low nibbles
// are elements 0..15); Q5_0: the same nibbles plus bit i of the 32-bit qh on
// top, minus 16; Q8_0: the bytes.
inline void block_codes(const BlockQ4_0& b, v128_t* lo, v128_t* hi) {
  const v128_t packed = wasm_v128_load(b.qs);
  const v128_t eight = wasm_i8x16_splat(8);
  *lo = wasm_i8x16_sub(wasm_v128_and(packed, wasm_i8x16_splat(15)), eight);
  *hi = wasm_i8x16_sub(wasm_u8x16_shr(packed, 4), eight);
}

inline void block_codes(const BlockQ5_0& b, v128_t* lo, v128_t* hi) {
  uint32_t qh;
  std::memcpy(&qh, b.qh, sizeof qh);
  const v128_t bit = wasm_i64x2_splat(static_cast<int64_t>(0x8040201008040201ull));
  const v128_t sixteen = wasm_i8x16_splat(16);
  const v128_t qh_bytes = wasm_i32x4_splat(static_cast<int32_t>(qh));
  // Byte i/8 of qh into element i, then test bit i % 8.
  const v128_t spread_lo = wasm_i8x16_swizzle(qh_bytes, wasm_i8x16_make(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1));
  const v128_t spread_hi = wasm_i8x16_swizzle(qh_bytes, wasm_i8x16_make(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  const v128_t high_lo = wasm_v128_and(wasm_i8x16_eq(wasm_v128_and(spread_lo, bit), bit), sixteen);
  const v128_t high_hi = wasm_v128_and(wasm_i8x16_eq(wasm_v128_and(spread_hi, bit), bit), sixteen);
  const v128_t packed = wasm_v128_load(b.qs);
  *lo = wasm_i8x16_sub(wasm_v128_or(wasm_v128_and(packed, wasm_i8x16_splat(15)), high_lo), sixteen);
  *hi = wasm_i8x16_sub(wasm_v128_or(wasm_u8x16_shr(packed, 4), high_hi), sixteen);
}

inline void block_codes(const BlockQ8_0& b, v128_t* lo, v128_t* hi) {
  *lo = wasm_v128_load(b.qs);
  *hi = wasm_v128_load(b.qs + 16);
}

// The same signed codes as four vectors of 8 int16 (elements 0..7, 8..15,
// 16..23, 24..31), what i32x4.dot_i16x8 takes. Q8_0 and Q4_0 widen while
// loading (load8x8), which costs less than widening the bytes afterwards.
inline void block_codes_i16(const BlockQ8_0& b, v128_t q[4]) {
  for (int k = 0; k < 4; ++k) q[k] = wasm_i16x8_load8x8(b.qs + 8 * k);
}

inline void block_codes_i16(const BlockQ4_0& b, v128_t q[4]) {
  const v128_t first = wasm_u16x8_load8x8(b.qs), second = wasm_u16x8_load8x8(b.qs + 8);
  const v128_t mask = wasm_i16x8_splat(15), eight = wasm_i16x8_splat(8);
  q[0] = wasm_i16x8_sub(wasm_v128_and(first, mask), eight);  // low nibbles: elements 0..15
  q[1] = wasm_i16x8_sub(wasm_v128_and(second, mask), eight);
  q[2] = wasm_i16x8_sub(wasm_u16x8_shr(first, 4), eight);  // high nibbles: elements 16..31
  q[3] = wasm_i16x8_sub(wasm_u16x8_shr(second, 4), eight);
}

inline void block_codes_i16(const BlockQ5_0& b, v128_t q[4]) {
  v128_t lo, hi;
  block_codes(b, &lo, &hi);
  q[0] = wasm_i16x8_extend_low_i8x16(lo);
  q[1] = wasm_i16x8_extend_high_i8x16(lo);
  q[2] = wasm_i16x8_extend_low_i8x16(hi);
  q[3] = wasm_i16x8_extend_high_i8x16(hi);
}

// The activation quantizers (act_quant_simd128.cpp).
void from_float_q8_0_simd128(const float* src, void* dst, int64_t n);
void from_float_q8_K_simd128(const float* src, void* dst, int64_t n);

// The tiled kernels (gemm_simd128.cpp), registered with the dots in dot_simd128.cpp.
void gemm_f32_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                      int64_t act_stride, int n_acts, float* out, int64_t out_stride);
void gemm_f16_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                      int64_t act_stride, int n_acts, float* out, int64_t out_stride);
void gemm_bf16_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                       int64_t act_stride, int n_acts, float* out, int64_t out_stride);
void gemm_q4_0_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                       int64_t act_stride, int n_acts, float* out, int64_t out_stride);
void gemm_q5_0_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                       int64_t act_stride, int n_acts, float* out, int64_t out_stride);
void gemm_q8_0_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                       int64_t act_stride, int n_acts, float* out, int64_t out_stride);
void gemm_q4_K_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                       int64_t act_stride, int n_acts, float* out, int64_t out_stride);
void gemm_q6_K_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                       int64_t act_stride, int n_acts, float* out, int64_t out_stride);

// The row-tiled single-activation kernels (gemm_simd128.cpp).
void matvec_q4_0_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out);
void matvec_q5_0_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out);
void matvec_q8_0_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out);

}  // namespace wllm::simd128
