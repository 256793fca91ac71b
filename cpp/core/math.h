// Deterministic transcendental functions (design-notes §2).
//
// libm differs between glibc, musl (Emscripten) and the rest, so the engine
// never calls std::exp/sin/cos/log/pow on a path that affects results. These
// use only IEEE +, -, *, / and integer bit operations, which round
// identically on every build compiled with -ffp-contract=off
// (no fused multiply-add) and FLT_EVAL_METHOD == 0 (no x87 excess precision).
//
// Accuracy, measured by tests/cpp/math_test.cpp against glibc's long double
// functions (and exhaustively over all floats for exp_f32 and silu_f32):
//   exp_f32    <= 1.029 ulp (99.19% correctly rounded); 0 below -103.97, inf above 88.72
//   silu_f32   <= 2.41 ulp (<= 1.73 below x = -80, where it is x·e^x)
//   tanh_f32   <= 1.43 ulp (every 97th float up to 20)
//   exp_f64, log_f64   <= 0.52 ulp (double-double inside; subnormal exp results <= 0.75)
//   pow_f64    <= 0.52 ulp while |y·ln x| <= 33 (table use), <= 0.81 up to 700
//   sin_f64, cos_f64   <= 0.78 ulp for |x| < 2^50 (exact Cody–Waite reduction, fdlibm
//                      kernels); NaN for |x| >= 2^50, where no Payne–Hanek is done
// Rounded to float, the double results are the correctly rounded floats except
// when the exact value is within ~2^-29 float ulp of a rounding boundary.
#pragma once

#include <cfloat>
#include <cstdint>

#include "core/half.h"  // f32_bits, f32_from_bits

static_assert(FLT_EVAL_METHOD == 0, "float/double must round to their own precision (no x87 excess precision)");

namespace wllm {

namespace math_detail {
// x = n·ln2 + r: ln2_hi has 15 significant bits, so n·ln2_hi is exact for |n| <= 2^9.
constexpr float kLn2Hi = 0x1.62e400p-1f;
constexpr float kLn2Lo = 0x1.7f7d1cp-20f;
constexpr float kInvLn2 = 0x1.715476p+0f;
// Adding 1.5·2^23 rounds a float with |v| < 2^22 to an integer held in the low mantissa bits.
constexpr float kRoundShift = 0x1.8p+23f;
// e^r ≈ 1 + r + r²·(c2 + c3·r + c4·r² + c5·r³ + c6·r⁴) on |r| <= ln2/2 (Chebyshev fit of
// (e^r − 1 − r)/r², coefficients rounded to float; approximation error 8e-9 relative).
constexpr float kExpC2 = 0x1.000000p-1f;
constexpr float kExpC3 = 0x1.5554d8p-3f;
constexpr float kExpC4 = 0x1.555516p-5f;
constexpr float kExpC5 = 0x1.12106cp-7f;
constexpr float kExpC6 = 0x1.6d1606p-10f;
// Beyond these e^x is 0 or inf in float; clamping keeps n in [-217, 128], so
// both halves of the 2^n split below stay normal.
constexpr float kExpMin = -150.0f;
constexpr float kExpMax = 89.0f;

// m·e^x, rounded once at the end: (p·m)·2^n1·2^n2 with p ≈ e^r.
inline float exp_scaled(float x, float m) {
  // Clamp; NaN fails both comparisons and propagates through the arithmetic.
  x = x > kExpMax ? kExpMax : x;
  x = x < kExpMin ? kExpMin : x;
  // n = nearest(x / ln2), both as a float and as an integer read from the bits.
  const float shifted = x * kInvLn2 + kRoundShift;
  const float n = shifted - kRoundShift;
  const int32_t ni = static_cast<int32_t>(f32_bits(shifted) - f32_bits(kRoundShift));
  // r = x − n·ln2 with a two-part ln2; x − n·ln2_hi is exact.
  const float r = (x - n * kLn2Hi) - n * kLn2Lo;
  const float q = (((kExpC6 * r + kExpC5) * r + kExpC4) * r + kExpC3) * r + kExpC2;
  const float p = 1.0f + (r + (r * r) * q);  // adding the small part to 1 last loses least
  // 2^n as two normal powers of two (n does not fit one float's exponent):
  // ·2^n1 is exact and ·2^n2 rounds at most once, into a subnormal, 0 or inf.
  const int32_t n1 = ni >> 1;
  const int32_t n2 = ni - n1;
  const float s1 = f32_from_bits((static_cast<uint32_t>(n1) + 127u) << 23);
  const float s2 = f32_from_bits((static_cast<uint32_t>(n2) + 127u) << 23);
  return ((p * m) * s1) * s2;
}
}  // namespace math_detail

// e^x in float. Every step is a lane-wise mul/add/compare/select or integer
// op, so a SIMD version written in the same order gives the same bits.
// Returns 0 for x < -103.97, inf for x > 88.72, NaN for NaN.
inline float exp_f32(float x) { return math_detail::exp_scaled(x, 1.0f); }

// silu(x) = x·σ(x) = x / (1 + e^−x). Below x = −80, 1 + e^x rounds to 1 and
// e^−x could overflow, so it is x·e^x there, rounded once so that results
// down to the subnormals keep their precision.
inline float silu_f32(float x) {
  if (x < -150.0f) return -0.0f;  // |x·e^x| < 2^-200 (also silu(−inf) = −0)
  const bool far_negative = x < -80.0f;
  const float e = math_detail::exp_scaled(far_negative ? x : -x, far_negative ? x : 1.0f);
  return far_negative ? e : x / (1.0f + e);
}

// tanh(x): x·(1 + x²·P(x²)), its Taylor series to x¹⁵, below |x| = 0.55
// (where 1 − 2/(e^{2x} + 1) would cancel), else 1 − 2/(e^{2x} + 1) with the
// sign of x. ±1 beyond |x| = 9.1, NaN for NaN.
inline float tanh_f32(float x) {
  const float a = x < 0.0f ? -x : x;
  if (a < 0.55f) {
    const float x2 = x * x;
    const float p = -1.0f / 3.0f +
                    x2 * (2.0f / 15.0f +
                          x2 * (-17.0f / 315.0f +
                                x2 * (62.0f / 2835.0f +
                                      x2 * (-1382.0f / 155925.0f +
                                            x2 * (21844.0f / 6081075.0f +
                                                  x2 * (-929569.0f / 638512875.0f + x2 * (6404582.0f / 10854718875.0f)))))));
    return x * (1.0f + x2 * p);
  }
  const float t = 1.0f - 2.0f / (exp_f32(2.0f * a) + 1.0f);
  return x < 0.0f ? -t : t;
}

// Double-precision functions for building tables (RoPE angles, frequency
// powers). Not for hot loops. Special values follow C99 Annex F.
double exp_f64(double x);
double log_f64(double x);
double sin_f64(double x);
double cos_f64(double x);
double pow_f64(double x, double y);

}  // namespace wllm
