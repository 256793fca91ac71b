// Double-precision exp, log, pow, sin, cos in portable IEEE arithmetic.
//
// exp and log are evaluated in double-double up to a last rounding (Taylor /
// atanh series), so they are nearly correctly rounded and pow = e^(y·ln x) can
// take a double-double exponent. The sin/cos kernels follow fdlibm (Sun,
// freely distributable; FreeBSD lib/msun/src/k_sin.c, k_cos.c) and use its
// minimax coefficients. No FMA anywhere: exact products use Veltkamp/Dekker
// splitting, so every build computes the same bits.
#include "core/math.h"

#include <cstring>
#include <limits>

namespace wllm {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

uint64_t f64_bits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}
double f64_from_bits(uint64_t u) {
  double d;
  std::memcpy(&d, &u, 8);
  return d;
}
double abs_f64(double x) { return f64_from_bits(f64_bits(x) & ~(uint64_t{1} << 63)); }
bool is_nan(double x) { return x != x; }

// 2^k for k in [-2044, 2046] as a product of two normal powers: x·2^k with one rounding.
double scale_pow2(double x, int k) {
  const int k1 = k >> 1, k2 = k - k1;
  const double s1 = f64_from_bits(static_cast<uint64_t>(k1 + 1023) << 52);
  const double s2 = f64_from_bits(static_cast<uint64_t>(k2 + 1023) << 52);
  return (x * s1) * s2;
}

// Adding 1.5·2^52 rounds |v| < 2^51 to the nearest integer (ties to even).
double round_nearest(double v) {
  constexpr double kShift = 0x1.8p+52;
  return (v + kShift) - kShift;
}

// ---- double-double helpers: a value hi + lo with |lo| <= ulp(hi)/2 ----
struct Dd {
  double hi, lo;
};

// a + b = s + e exactly (Knuth).
Dd two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}
// Same, valid when |a| >= |b| (or a == 0).
Dd fast_two_sum(double a, double b) {
  const double s = a + b;
  return {s, b - (s - a)};
}
// a·b = p + e exactly (Dekker, with Veltkamp's split into 26-bit halves).
Dd two_prod(double a, double b) {
  constexpr double kSplit = 134217729.0;  // 2^27 + 1
  const double ca = kSplit * a, cb = kSplit * b;
  const double ah = ca - (ca - a), al = a - ah;
  const double bh = cb - (cb - b), bl = b - bh;
  const double p = a * b;
  return {p, ((ah * bh - p) + ah * bl + al * bh) + al * bl};
}
Dd dd_add(Dd a, Dd b) {
  const Dd s = two_sum(a.hi, b.hi);
  return fast_two_sum(s.hi, s.lo + (a.lo + b.lo));
}
Dd dd_mul(Dd a, Dd b) {
  Dd p = two_prod(a.hi, b.hi);
  return fast_two_sum(p.hi, p.lo + (a.hi * b.lo + a.lo * b.hi));
}

// ---- exp ----
// ln2 = ln2_hi + ln2_lo; ln2_hi has 32 significant bits, so k·ln2_hi is exact for |k| < 2^21.
constexpr double kLn2Hi = 0x1.62e42fee00000p-1;
constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;
constexpr double kInvLn2 = 0x1.71547652b82fep+0;
// 1/15!, 1/14!, ..., 1/3!: Taylor coefficients of (e^r − 1 − r − r²/2)/r³; the
// first omitted term is below 2^-63 for |r| <= ln2/2.
constexpr double kInvFact[13] = {
    1.0 / 1307674368000.0, 1.0 / 87178291200.0, 1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0,
    1.0 / 3628800.0,       1.0 / 362880.0,      1.0 / 40320.0,      1.0 / 5040.0,      1.0 / 720.0,
    1.0 / 120.0,           1.0 / 24.0,          1.0 / 6.0,
};

// e^(x + xl) for a double-double argument (xl = 0 for plain exp), nearly
// correctly rounded: everything before the last addition is kept to ~2^-60.
double exp_dd(double x, double xl) {
  if (is_nan(x)) return x + x;
  // Outside [-746, 710] the result is 0 or inf; clamping keeps k in range and
  // lets the final scaling produce the correctly rounded 0 / inf / subnormal.
  if (x > 710.0) {
    x = 710.0;
    xl = 0.0;
  }
  if (x < -746.0) {
    x = -746.0;
    xl = 0.0;
  }
  // x + xl = k·ln2 + r, r = r_hi + r_lo, |r| <= ln2/2 (plus rounding of k).
  const double k = round_nearest(x * kInvLn2);
  const Dd r = fast_two_sum(x - k * kLn2Hi, xl - k * kLn2Lo);  // x − k·ln2_hi is exact
  // e^r = 1 + r + r²/2 + r³·P(r), with r²/2 exact and e^(r_hi + r_lo) ≈ e^r_hi·(1 + r_lo).
  const Dd sq = two_prod(r.hi, r.hi);
  double p = kInvFact[0];
  for (int i = 1; i < 13; ++i) p = kInvFact[i] + r.hi * p;
  const double cubic = sq.hi * r.hi * p;
  const Dd a = two_sum(1.0, r.hi);
  const Dd b = two_sum(a.hi, 0.5 * sq.hi);
  const double tail = (a.lo + b.lo) + ((0.5 * sq.lo + cubic) + (r.lo + r.lo * (r.hi + 0.5 * sq.hi)));
  return scale_pow2(b.hi + tail, static_cast<int>(k));
}

// ---- log ----
// k·ln2 reuses kLn2Hi + kLn2Lo from exp; k·kLn2Hi is exact for |k| <= 1075.
constexpr double kThirdHi = 0x1.5555555555555p-2;  // 1/3 = hi + lo
constexpr double kThirdLo = 0x1.5555555555555p-56;
constexpr double kSqrt2 = 0x1.6a09e667f3bcdp+0;
// 1/27, 1/25, ..., 1/5: Horner coefficients of V (divisions round the same everywhere).
constexpr double kAtanhCoef[12] = {1.0 / 27, 1.0 / 25, 1.0 / 23, 1.0 / 21, 1.0 / 19, 1.0 / 17,
                                   1.0 / 15, 1.0 / 13, 1.0 / 11, 1.0 / 9,  1.0 / 7,  1.0 / 5};

// ln x for finite x > 0 as a double-double, relative error below ~2^-62.
// x = 2^k·m with m in [√2/2, √2); ln m = 2·atanh(s), s = (m−1)/(m+1), |s| <= 0.1716,
// 2·atanh(s) = 2s·(1 + s²/3 + s⁴/5 + ...). The terms that matter at 2^-62 are done in double-double.
Dd log_dd(double x) {
  int k = 0;
  if (x < 0x1p-1022) {  // subnormal: scale into the normal range
    x *= 0x1p54;
    k = -54;
  }
  const uint64_t bits = f64_bits(x);
  k += static_cast<int>(bits >> 52) - 1023;
  double m = f64_from_bits((bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1023} << 52));
  if (m > kSqrt2) {
    m *= 0.5;
    ++k;
  }
  const double f = m - 1.0;  // exact (Sterbenz)
  // s = f / (2 + f) as a double-double.
  const Dd d = fast_two_sum(2.0, f);
  const double s_hi = f / d.hi;
  const Dd p = two_prod(s_hi, d.hi);
  const double s_lo = (((f - p.hi) - p.lo) - s_hi * d.lo) / d.hi;
  // z = s² (double-double); T = z/3 + z·V with V = z/5 + z²/7 + ... + z^12/27 (truncation < 2^-66).
  Dd z = two_prod(s_hi, s_hi);
  z.lo += 2.0 * s_hi * s_lo;
  const double zh = z.hi;
  double v = kAtanhCoef[0];
  for (int j = 1; j < 12; ++j) v = kAtanhCoef[j] + zh * v;
  v *= zh;
  Dd t = dd_mul(z, Dd{kThirdHi, kThirdLo});
  t = fast_two_sum(t.hi, t.lo + zh * v);
  // ln m = 2s + 2s·T.
  const Dd two_s{2.0 * s_hi, 2.0 * s_lo};
  const Dd ln_m = dd_add(two_s, dd_mul(two_s, t));
  const double dk = static_cast<double>(k);
  return dd_add(Dd{dk * kLn2Hi, dk * kLn2Lo}, ln_m);
}

// ---- sin / cos ----
// fdlibm k_sin.c / k_cos.c minimax coefficients on [-π/4, π/4] (error < 2^-58).
constexpr double kS1 = -0x1.5555555555549p-3;
constexpr double kS2 = 0x1.111111110f8a6p-7;
constexpr double kS3 = -0x1.a01a019c161d5p-13;
constexpr double kS4 = 0x1.71de357b1fe7dp-19;
constexpr double kS5 = -0x1.ae5e68a2b9cebp-26;
constexpr double kS6 = 0x1.5d93a5acfd57cp-33;
constexpr double kC1 = 0x1.555555555554cp-5;
constexpr double kC2 = -0x1.6c16c16c15177p-10;
constexpr double kC3 = 0x1.a01a019cb1590p-16;
constexpr double kC4 = -0x1.27e4f809c52adp-22;
constexpr double kC5 = 0x1.1ee9ebdb4b1c4p-29;
constexpr double kC6 = -0x1.8fae9be8838d4p-37;

// sin(y + yy) for |y| <= ~π/4, yy a tail below ulp(y).
double kernel_sin(double y, double yy) {
  const double z = y * y, w = z * z;
  const double r = kS2 + z * (kS3 + z * kS4) + z * w * (kS5 + z * kS6);
  const double v = z * y;
  return y - ((z * (0.5 * yy - v * r) - yy) - v * kS1);
}

// cos(y + yy); 1 − z/2 is split as w + ((1 − w) − z/2) to keep its rounding error.
double kernel_cos(double y, double yy) {
  const double z = y * y, w = z * z;
  const double r = z * (kC1 + z * (kC2 + z * kC3)) + w * w * (kC4 + z * (kC5 + z * kC6));
  const double hz = 0.5 * z;
  const double one_minus = 1.0 - hz;
  return one_minus + (((1.0 - one_minus) - hz) + (z * r - y * yy));
}

// π/2 as 7 parts: the first six have at most 26 significant bits, so n·P is
// exact for n < 2^27, and 222 bits in all leave the reduced argument accurate
// even for the x closest to a multiple of π/2.
constexpr double kPio2Parts[7] = {
    0x1.921fb58000000p+0,  -0x1.dde9740000000p-27, 0x1.1a62630000000p-54, 0x1.8a2e038000000p-81,
    -0x1.f1976b8000000p-110, 0x1.2704450000000p-142, 0x1.9f31d0082efaap-169,
};
constexpr double kTwoOverPi = 0x1.45f306dc9c883p-1;
constexpr double kPiOver4 = 0x1.921fb54442d18p-1;
constexpr double kMaxTrigArg = 0x1p50;

// x − n·π/2 in double-double (Cody–Waite with exact products).
Dd subtract_pio2_multiple(double x, double n) {
  Dd r{x, 0.0};
  for (double part : kPio2Parts) {
    const Dd p = two_prod(n, part);  // exact (lo = 0 while n < 2^27)
    const Dd s = two_sum(r.hi, -p.hi);
    r = fast_two_sum(s.hi, s.lo + (r.lo - p.lo));
  }
  return r;
}

// x = n·π/2 + (y + yy) with |y| <= π/4; returns n mod 4. Needs |x| < 2^50.
int reduce_pio2(double x, double* y, double* yy) {
  double n = round_nearest(x * kTwoOverPi);
  Dd r = subtract_pio2_multiple(x, n);
  // Beyond ~2^27 the rounded x·(2/π) can miss the nearest n by one, leaving
  // |r| outside the kernels' range: step n once.
  if (r.hi > kPiOver4 || r.hi < -kPiOver4) {
    n += r.hi > 0.0 ? 1.0 : -1.0;
    r = subtract_pio2_multiple(x, n);
  }
  *y = r.hi;
  *yy = r.lo;
  return static_cast<int>(static_cast<int64_t>(n) & 3);  // |n| < 2^50: the conversion is exact
}

}  // namespace

double exp_f64(double x) { return exp_dd(x, 0.0); }

double log_f64(double x) {
  if (is_nan(x)) return x + x;
  if (x < 0.0) return kNaN;
  if (x == 0.0) return -kInf;
  if (x == kInf) return x;
  return log_dd(x).hi;  // hi is hi + lo rounded to nearest
}

double sin_f64(double x) {
  const double ax = abs_f64(x);
  if (!(ax < kInf)) return x - x;  // NaN for ±inf and NaN
  if (ax < 0x1p-27) return x;      // sin x rounds to x; keeps −0
  if (ax <= kPiOver4) return kernel_sin(x, 0.0);
  if (ax >= kMaxTrigArg) return kNaN;  // beyond the Cody–Waite range: refuse rather than guess
  double y, yy;
  switch (reduce_pio2(x, &y, &yy)) {
    case 0: return kernel_sin(y, yy);
    case 1: return kernel_cos(y, yy);
    case 2: return -kernel_sin(y, yy);
    default: return -kernel_cos(y, yy);
  }
}

double cos_f64(double x) {
  const double ax = abs_f64(x);
  if (!(ax < kInf)) return x - x;
  if (ax < 0x1p-27) return 1.0;
  if (ax <= kPiOver4) return kernel_cos(x, 0.0);
  if (ax >= kMaxTrigArg) return kNaN;
  double y, yy;
  switch (reduce_pio2(x, &y, &yy)) {
    case 0: return kernel_cos(y, yy);
    case 1: return -kernel_sin(y, yy);
    case 2: return -kernel_cos(y, yy);
    default: return kernel_sin(y, yy);
  }
}

namespace {
// -1: y is not an integer; 0: even integer; 1: odd integer.
int integer_parity(double y) {
  const double ay = abs_f64(y);
  if (ay >= 0x1p53) return 0;  // every double this large is even
  if (round_nearest(ay) != ay) return -1;
  const double half = ay * 0.5;  // exact
  return round_nearest(half) == half ? 0 : 1;
}
}  // namespace

double pow_f64(double x, double y) {
  // Special cases as C99 F.9.4.4.
  if (y == 0.0 || x == 1.0) return 1.0;
  if (is_nan(x) || is_nan(y)) return x + y;
  const double ax = abs_f64(x), ay = abs_f64(y);
  const int parity = integer_parity(y);
  const bool negate = (f64_bits(x) >> 63) != 0 && parity == 1;  // (−x)^odd = −(x^odd), also for −0
  if (ay == kInf) {
    if (ax == 1.0) return 1.0;
    return (ax > 1.0) == (y > 0.0) ? kInf : 0.0;
  }
  if (ax == 0.0 || ax == kInf) {
    // |x|^y is 0 or inf; the sign survives only for odd integer y.
    const bool big = (ax == 0.0) == (y < 0.0);
    const double mag = big ? kInf : 0.0;
    return negate ? -mag : mag;
  }
  if (x < 0.0 && parity < 0) return kNaN;
  if (ax == 1.0) return negate ? -1.0 : 1.0;
  double result;
  if (ay > 0x1p64) {
    result = (ax > 1.0) == (y > 0.0) ? kInf : 0.0;  // |y·ln|x|| > 2^11 whenever |x| != 1
  } else {
    // x^y = e^(y·ln|x|), with y·ln|x| in double-double.
    const Dd l = log_dd(ax);
    Dd t = two_prod(y, l.hi);
    t = fast_two_sum(t.hi, t.lo + y * l.lo);
    result = exp_dd(t.hi, t.lo);
  }
  return negate ? -result : result;
}

}  // namespace wllm
