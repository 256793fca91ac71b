// Block decoding and vector helpers shared by the SIMD128 dot
// (dot_simd128.cpp), tiled and matvec (gemm_simd128.cpp) and repacked
// (repacked_simd128.cpp) kernels, so each block format is unpacked by one
// piece of code. Include only when building with -msimd128.
#pragma once

#include <wasm_simd128.h>

#include <cstdint>
#include <cstring>

#include "core/half.h"
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

// f16 → f32, exactly, from a half's sign bit at bit 31 and its exponent and
// mantissa at bits 13..27 (magnitude): those bits scaled by 2^112 are exact
// for normal and subnormal halves alike; infinities and NaNs get the f32
// exponent back explicitly.
inline v128_t half_parts_to_f32(v128_t sign, v128_t magnitude) {
  const v128_t scaled = wasm_f32x4_mul(magnitude, wasm_f32x4_splat(0x1p112f));
  // Finite halves are at most 65504; infinities and NaNs scale to 2^16 or more.
  const v128_t is_special = wasm_f32x4_ge(scaled, wasm_f32x4_splat(65536.0f));
  const v128_t special = wasm_v128_or(magnitude, wasm_i32x4_splat(0x7f800000));
  return wasm_v128_or(sign, wasm_v128_bitselect(special, scaled, is_special));
}

// A finite half (not infinity or NaN) in the top 16 bits of each lane as a
// float 2^-112 times its value, exactly: an arithmetic shift puts its
// exponent and mantissa at bits 13..27 and copies of its sign above them; the
// mask keeps the sign at bit 31 only. (Shifts without a mask constant, 5
// steps, ran slower in V8.)
inline v128_t finite_half_top_scaled_down(v128_t top) {
  return wasm_v128_and(wasm_i32x4_shr(top, 3), wasm_i32x4_splat(static_cast<int32_t>(0x8fffffffu)));
}

// The same as the half's value: scaling by 2^112 is exact for normal and
// subnormal halves alike.
inline v128_t finite_half_top_to_f32(v128_t top) {
  return wasm_f32x4_mul(finite_half_top_scaled_down(top), wasm_f32x4_splat(0x1p112f));
}

// How the halves get into 32-bit lanes matters to V8: a zero-extension LLVM
// can see (extend_low) lets it fold the shifts below into byte shuffles,
// which V8 compiles to pshufb with constants rebuilt on every call (slower
// decode). Scalars are inserted as u32 lanes;
// vectors are interleaved with zeros (one punpcklwd), each half landing in
// the top of its lane.

// Four f16 values as floats.
inline v128_t f16x4_to_f32(uint16_t h0, uint16_t h1, uint16_t h2, uint16_t h3) {
  const v128_t u = wasm_u32x4_make(h0, h1, h2, h3);
  return half_parts_to_f32(wasm_i32x4_shl(wasm_v128_and(u, wasm_i32x4_splat(0x8000)), 16),
                           wasm_i32x4_shl(wasm_v128_and(u, wasm_i32x4_splat(0x7fff)), 13));
}

// The 8 halves of h as floats: elements 0..3 in *lo, 4..7 in *hi.
inline void f16x8_to_f32(v128_t h, v128_t* lo, v128_t* hi) {
  const v128_t zero = wasm_i16x8_splat(0);
  const auto convert = [](v128_t top) {  // halves in the top 16 bits of each lane
    return half_parts_to_f32(wasm_v128_and(top, wasm_i32x4_splat(static_cast<int32_t>(0x80000000u))),
                             wasm_u32x4_shr(wasm_v128_and(top, wasm_i32x4_splat(0x7fff0000)), 3));
  };
  *lo = convert(wasm_i16x8_shuffle(zero, h, 0, 8, 1, 9, 2, 10, 3, 11));
  *hi = convert(wasm_i16x8_shuffle(zero, h, 4, 12, 5, 13, 6, 14, 7, 15));
}

// Whether any half was an infinity or NaN, from the running u16 maximum of
// (half << 1) (sign dropped): exponent 31 makes it 0xF800 or more.
inline bool any_special_half(v128_t max_shifted) {
  return wasm_v128_any_true(wasm_u16x8_ge(max_shifted, wasm_i16x8_splat(static_cast<int16_t>(0xF800))));
}

// The f16 dot with the exact conversion, element i in lane i % 8.
inline float dot_f16_exact(const uint16_t* w, const float* x, int64_t n) {
  const int64_t n8 = n / 8 * 8;
  v128_t lo = wasm_f32x4_splat(0.0f), hi = wasm_f32x4_splat(0.0f);
  for (int64_t i = 0; i < n8; i += 8) {
    v128_t w_lo, w_hi;
    f16x8_to_f32(wasm_v128_load(w + i), &w_lo, &w_hi);
    lo = wasm_f32x4_add(lo, wasm_f32x4_mul(w_lo, wasm_v128_load(x + i)));
    hi = wasm_f32x4_add(hi, wasm_f32x4_mul(w_hi, wasm_v128_load(x + i + 4)));
  }
  return finish_lanes(lo, hi, n8, n, [w](int64_t i) { return f16_to_f32(w[i]); }, x);
}

// The f16 dot converting without the steps for infinities and NaNs: each
// half in the top of a lane goes through `convert` and multiplies the same
// element of `xc` (x itself, or x scaled to match what `convert` returns);
// the tail and a row with an infinity or NaN (redone the exact way) use x.
template <typename Convert>
inline float dot_f16_finite(const uint16_t* w, const float* xc, const float* x, int64_t n, Convert convert) {
  const int64_t n8 = n / 8 * 8;
  const v128_t zero = wasm_i16x8_splat(0);
  v128_t lo = wasm_f32x4_splat(0.0f), hi = wasm_f32x4_splat(0.0f);
  v128_t top_bits = zero;  // see any_special_half
  for (int64_t i = 0; i < n8; i += 8) {
    const v128_t h = wasm_v128_load(w + i);
    top_bits = wasm_u16x8_max(top_bits, wasm_i16x8_shl(h, 1));
    lo = wasm_f32x4_add(lo, wasm_f32x4_mul(convert(wasm_i16x8_shuffle(zero, h, 0, 8, 1, 9, 2, 10, 3, 11)),
                                           wasm_v128_load(xc + i)));
    hi = wasm_f32x4_add(hi, wasm_f32x4_mul(convert(wasm_i16x8_shuffle(zero, h, 4, 12, 5, 13, 6, 14, 7, 15)),
                                           wasm_v128_load(xc + i + 4)));
  }
  if (any_special_half(top_bits)) return dot_f16_exact(w, x, n);
  return finish_lanes(lo, hi, n8, n, [w](int64_t i) { return f16_to_f32(w[i]); }, x);
}

inline float dot_f16(const uint16_t* w, const float* x, int64_t n) {
  return dot_f16_finite(w, x, x, n, [](v128_t top) { return finite_half_top_to_f32(top); });
}

// Σ w_i·x_i over 16 signed bytes as 4 partial int32 sums (exact).
inline v128_t dot_i8x16(v128_t w, v128_t x) {
  const v128_t lo = wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(w), wasm_i16x8_extend_low_i8x16(x));
  const v128_t hi = wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(w), wasm_i16x8_extend_high_i8x16(x));
  return wasm_i32x4_add(lo, hi);
}

// Σ w·x over n16 vectors of 8 int16 each, as 4 partial int32 sums.
inline v128_t dot_i16(const v128_t* w, const v128_t* x, int n16) {
  v128_t sum = wasm_i32x4_dot_i16x8(w[0], x[0]);
  for (int k = 1; k < n16; ++k) sum = wasm_i32x4_add(sum, wasm_i32x4_dot_i16x8(w[k], x[k]));
  return sum;
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

// The codes of a 32-element block as 32 bytes in element order: elements
// 0..15 in *lo, 16..31 in *hi. Q4_0/Q4_1: the nibbles (low nibbles are
// elements 0..15), Q4_0's minus 8; Q5_0/Q5_1: the same nibbles plus bit i of
// the 32-bit qh on top, Q5_0's minus 16; Q8_0: the bytes. Q4_1/Q5_1 keep
// their codes unsigned (0..31), which int8 holds as they are.
inline void nibbles(const uint8_t* qs, v128_t* lo, v128_t* hi) {
  const v128_t packed = wasm_v128_load(qs);
  *lo = wasm_v128_and(packed, wasm_i8x16_splat(15));
  *hi = wasm_u8x16_shr(packed, 4);
}

template <typename Block>
inline void q5_codes(const Block& b, v128_t* lo, v128_t* hi) {
  uint32_t qh;
  std::memcpy(&qh, b.qh, sizeof qh);
  const v128_t bit = wasm_i64x2_splat(static_cast<int64_t>(0x8040201008040201ull));
  const v128_t sixteen = wasm_i8x16_splat(16);
  const v128_t qh_bytes = wasm_i32x4_splat(static_cast<int32_t>(qh));
  // Byte i/8 of qh into element i, then test bit i % 8.
  const v128_t spread_lo = wasm_i8x16_swizzle(qh_bytes, wasm_i8x16_make(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1));
  const v128_t spread_hi = wasm_i8x16_swizzle(qh_bytes, wasm_i8x16_make(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  nibbles(b.qs, lo, hi);
  *lo = wasm_v128_or(*lo, wasm_v128_and(wasm_i8x16_eq(wasm_v128_and(spread_lo, bit), bit), sixteen));
  *hi = wasm_v128_or(*hi, wasm_v128_and(wasm_i8x16_eq(wasm_v128_and(spread_hi, bit), bit), sixteen));
}

inline void block_codes(const BlockQ4_0& b, v128_t* lo, v128_t* hi) {
  nibbles(b.qs, lo, hi);
  *lo = wasm_i8x16_sub(*lo, wasm_i8x16_splat(8));
  *hi = wasm_i8x16_sub(*hi, wasm_i8x16_splat(8));
}

inline void block_codes(const BlockQ4_1& b, v128_t* lo, v128_t* hi) { nibbles(b.qs, lo, hi); }

inline void block_codes(const BlockQ5_0& b, v128_t* lo, v128_t* hi) {
  q5_codes(b, lo, hi);
  *lo = wasm_i8x16_sub(*lo, wasm_i8x16_splat(16));
  *hi = wasm_i8x16_sub(*hi, wasm_i8x16_splat(16));
}

inline void block_codes(const BlockQ5_1& b, v128_t* lo, v128_t* hi) { q5_codes(b, lo, hi); }

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

// ---- K-quant blocks against Q8_K -----------------------------------------------
//
// Every K-quant block goes through the same integer scheme in the dot and
// tiled kernels: per 16-element sub-block j, its signed codes q (offset
// removed, k_codes) in int16 dots with the activation bytes, times the
// sub-block's integer scale (k_scales16 in blocks.h): Σ_j sc_j·Σ q·x, exact.
// The dot scales each sub-block's int32 sums; the tiled kernels scale the
// int16 codes once for several activations (|sc·q| <= 128·32, inside int16).
// The types with mins add summ = Σ_j m_j·bsums[j] from the activation's sums
// of 16.

// The signed codes of sub-block j (elements 16j..16j+15), as blocks.h lays
// them out; l = 16·(j % 2) is where they start within their 32-byte rows.
// Q2_K: bits 2g..2g+1 of qs[32h + l] with h = j / 8, g = (j / 2) % 4.
inline v128_t two_bits(const uint8_t qs[64], int j) {
  const int h = j / 8, g = (j / 2) % 4, l = 16 * (j % 2);
  return wasm_v128_and(wasm_u8x16_shr(wasm_v128_load(qs + 32 * h + l), 2 * g), wasm_i8x16_splat(3));
}
inline v128_t k_codes(const BlockQ2_K& b, int j) { return two_bits(b.qs, j); }

// Q3_K: Q2_K's bits, minus 4 where bit j / 2 of hmask[l] is clear.
inline v128_t k_codes(const BlockQ3_K& b, int j) {
  const v128_t high = wasm_v128_and(wasm_u8x16_shr(wasm_v128_load(b.hmask + 16 * (j % 2)), j / 2), wasm_i8x16_splat(1));
  return wasm_i8x16_sub(wasm_v128_or(two_bits(b.qs, j), wasm_i8x16_shl(high, 2)), wasm_i8x16_splat(4));
}

// Q4_K: nibble s % 2 of qs[32(s / 2) + l], s = j / 2 the 32-element sub-block.
inline v128_t k_codes(const BlockQ4_K& b, int j) {
  const int s = j / 2, l = 16 * (j % 2);
  const v128_t packed = wasm_v128_load(b.qs + 32 * (s / 2) + l);
  return s % 2 ? wasm_u8x16_shr(packed, 4) : wasm_v128_and(packed, wasm_i8x16_splat(15));
}

// Q5_K: Q4_K's nibble plus bit s of qh[l] on top.
inline v128_t k_codes(const BlockQ5_K& b, int j) {
  const int s = j / 2, l = 16 * (j % 2);
  const v128_t packed = wasm_v128_load(b.qs + 32 * (s / 2) + l);
  const v128_t low = s % 2 ? wasm_u8x16_shr(packed, 4) : wasm_v128_and(packed, wasm_i8x16_splat(15));
  const v128_t high = wasm_v128_and(wasm_u8x16_shr(wasm_v128_load(b.qh + l), s), wasm_i8x16_splat(1));
  return wasm_v128_or(low, wasm_i8x16_shl(high, 4));
}

// Q6_K (h = j / 8, g = (j / 2) % 4): nibble g / 2 of ql[64h + 32(g % 2) + l],
// plus bits 2g..2g+1 of qh[32h + l] on top, minus 32.
inline v128_t k_codes(const BlockQ6_K& b, int j) {
  const int h = j / 8, g = (j / 2) % 4, l = 16 * (j % 2);
  const v128_t ql = wasm_v128_load(b.ql + 64 * h + 32 * (g % 2) + l);
  const v128_t low = g / 2 ? wasm_u8x16_shr(ql, 4) : wasm_v128_and(ql, wasm_i8x16_splat(15));
  const v128_t high = wasm_v128_and(wasm_u8x16_shr(wasm_v128_load(b.qh + 32 * h + l), 2 * g), wasm_i8x16_splat(3));
  return wasm_i8x16_sub(wasm_v128_or(low, wasm_i8x16_shl(high, 4)), wasm_i8x16_splat(32));
}

// Σ q_i·x_i over 16 signed codes and the 16 activation bytes at x, as 4
// partial int32 sums (exact); the activation bytes widen as they load.
inline v128_t dot_codes16(v128_t q, const int8_t* x) {
  return wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(q), wasm_i16x8_load8x8(x)),
                        wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(q), wasm_i16x8_load8x8(x + 8)));
}

// Sub-block j's codes times its scale, as two vectors of 8 int16 (the tiled
// kernels' form: scaled once, dotted with several activations).
template <typename Block>
inline void scaled_codes(const Block& b, int j, int16_t sc, v128_t wq[2]) {
  const v128_t q = k_codes(b, j), scale = wasm_i16x8_splat(sc);
  wq[0] = wasm_i16x8_mul(wasm_i16x8_extend_low_i8x16(q), scale);
  wq[1] = wasm_i16x8_mul(wasm_i16x8_extend_high_i8x16(q), scale);
}

// Σ_j m_j·bsums[j] as 4 partial int32 sums.
inline v128_t min_sums(const BlockQ8_K& x, const int16_t m[16]) {
  return wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_v128_load(x.bsums), wasm_v128_load(m)),
                        wasm_i32x4_dot_i16x8(wasm_v128_load(x.bsums + 8), wasm_v128_load(m + 8)));
}

// ---- Q8_0 activations prepared for many rows (the matvec kernels) ----------------

// An activation block, ready for the row loop. For Q4_0 the packed bytes b
// (low nibble lo, high nibble hi) are used as they load: Σ lo·x_low + hi·x_high
// = Σ b·x_low + hi·(x_high − 16·x_low), which saves masking the low nibbles;
// the codes' −8 comes off the total as 8·Σx. All integer, all exact.
struct PreparedQ8_0 {
  v128_t q[4];           // the 32 bytes as int16 (elements 0..7, 8..15, 16..23, 24..31)
  v128_t high_minus[2];  // q[2] − 16·q[0], q[3] − 16·q[1]
  float d;
  int32_t sum;  // Σ of the 32 bytes
};

inline void prepare_q8_0(const BlockQ8_0* x, int64_t count, PreparedQ8_0* out) {
  for (int64_t ib = 0; ib < count; ++ib) {
    PreparedQ8_0& p = out[ib];
    block_codes_i16(x[ib], p.q);
    for (int k = 0; k < 2; ++k) p.high_minus[k] = wasm_i16x8_sub(p.q[2 + k], wasm_i16x8_shl(p.q[k], 4));
    const v128_t one = wasm_i16x8_splat(1), ones[4] = {one, one, one, one};
    p.sum = total(dot_i16(p.q, ones, 4));
    p.d = f16_to_f32(x[ib].d);
  }
}

// ---- Q4_Kx8 (blocks.h): scales and mins of a half's 4 rows -----------------------
// The repacked Q4_K kernels of SIMD128 and relaxed SIMD read a half's 12
// scale bytes per row as 3 vectors of words (words[w]: word w of row k in
// lane k) and decode them with shifts alone, at constant counts.

// Sub-block s's 6-bit scales as int32 lanes, from the words w0 (bytes 0..3:
// scales 0..3, top bits of scales 4..7) and w2 (bytes 8..11: low nibbles of
// scales 4..7), as k4_scale_min reads them.
inline v128_t q4_Kx8_scale(const v128_t words[3], int s) {
  if (s < 4) return wasm_u32x4_shr(wasm_i32x4_shl(words[0], 26 - 8 * s), 26);
  const v128_t low = wasm_u32x4_shr(wasm_i32x4_shl(words[2], 28 - 8 * (s - 4)), 28);
  const v128_t top = wasm_i32x4_shl(wasm_u32x4_shr(wasm_i32x4_shl(words[0], 24 - 8 * (s - 4)), 30), 4);
  return wasm_v128_or(low, top);
}

inline void q4_Kx8_scales(const v128_t words[3], v128_t sc[8]) {
#pragma clang loop unroll(full)
  for (int s = 0; s < 8; ++s) sc[s] = q4_Kx8_scale(words, s);
}

// The mins in 16-bit lanes (lanes 2k, 2k + 1: row k's bytes 0..1, 2..3 of
// a word): pairs[0] holds m0 and m2, [1] m1 and m3, [2] m4 and m6, [3] m5
// and m7, from w1 (m0..m3, top bits of m4..m7) and w2 (high nibbles).
inline void q4_Kx8_min_pairs(const v128_t words[3], v128_t pairs[4]) {
  const v128_t w1 = words[1], w2 = words[2];
  pairs[0] = wasm_u16x8_shr(wasm_i16x8_shl(w1, 10), 10);
  pairs[1] = wasm_u16x8_shr(wasm_i16x8_shl(w1, 2), 10);
  pairs[2] = wasm_v128_or(wasm_u16x8_shr(wasm_i16x8_shl(w2, 8), 12),
                          wasm_i16x8_shl(wasm_u16x8_shr(wasm_i16x8_shl(w1, 8), 14), 4));
  pairs[3] = wasm_v128_or(wasm_u16x8_shr(w2, 12), wasm_i16x8_shl(wasm_u16x8_shr(w1, 14), 4));
}

// A Q8_K block's 32-element sub-block sums in the order the min pairs take
// them (0, 2, 1, 3, 4, 6, 5, 7).
inline void q4_Kx8_act_sums(const BlockQ8_K& x, int16_t sums[8]) {
  constexpr int kOrder[8] = {0, 2, 1, 3, 4, 6, 5, 7};
  for (int i = 0; i < 8; ++i) {
    const int s = kOrder[i];
    sums[i] = static_cast<int16_t>(x.bsums[2 * s] + x.bsums[2 * s + 1]);
  }
}

// Σ_s m_s·sums_s for each row (lane), exact in int32.
inline v128_t q4_Kx8_min_total(const v128_t pairs[4], const int16_t sums[8]) {
  v128_t total = wasm_i32x4_splat(0);
  for (int k = 0; k < 4; ++k) {
    total = wasm_i32x4_add(total, wasm_i32x4_dot_i16x8(pairs[k], wasm_v128_load32_splat(sums + 2 * k)));
  }
  return total;
}

// ---- Q6_Kx8 (blocks.h): a step's codes ------------------------------------------
// Step i's 4 code vectors (vector g: bytes 4k..4k+3 hold row k's codes of
// elements 128n + 32g + 4c..), each code the ql nibble and the 2 qh bits
// moved to bits 4..5 (the 16-bit shifts carry bits across bytes only where
// the masks drop them). The repacked Q6_K kernels of SIMD128 and relaxed
// SIMD both read them.
inline void q6_Kx8_codes(const BlockQ6_Kx8::Step& step, v128_t out[4]) {
  const v128_t low = wasm_v128_load(step.ql[0]), high = wasm_v128_load(step.ql[1]);
  const v128_t top = wasm_v128_load(step.qh);
  const v128_t nibble = wasm_i8x16_splat(15), bits = wasm_i8x16_splat(0x30);
  out[0] = wasm_v128_or(wasm_v128_and(low, nibble), wasm_v128_and(wasm_i16x8_shl(top, 4), bits));
  out[1] = wasm_v128_or(wasm_v128_and(high, nibble), wasm_v128_and(wasm_i16x8_shl(top, 2), bits));
  out[2] = wasm_v128_or(wasm_v128_and(wasm_u16x8_shr(low, 4), nibble), wasm_v128_and(top, bits));
  out[3] = wasm_v128_or(wasm_v128_and(wasm_u16x8_shr(high, 4), nibble), wasm_v128_and(wasm_u16x8_shr(top, 2), bits));
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
// Every K-quant, for BlockQ2_K .. BlockQ6_K.
template <typename Block>
void gemm_k_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                    int64_t act_stride, int n_acts, float* out, int64_t out_stride);

// The row-tiled single-activation kernels (gemm_simd128.cpp).
void matvec_q4_0_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out);
void matvec_q5_0_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out);
void matvec_q8_0_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out);
void matvec_f16_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out);

}  // namespace wllm::simd128
