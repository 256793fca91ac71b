// Tests for core/math.h: accuracy against the platform's libm (long double
// where it helps), special values, and golden checksums that every build
// (x86, ARM, wasm) must reproduce bit for bit.
#include "core/math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace wllm {
namespace {

constexpr float kInfF = std::numeric_limits<float>::infinity();
constexpr double kInf = std::numeric_limits<double>::infinity();

uint64_t f64_bits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}

// Deterministic test inputs: splitmix64.
struct TestRng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform(double lo, double hi) { return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1p-53; }
};

// Size of one float ulp at |v| (the spacing of floats in v's binade).
double ulp_f32(double v) {
  v = std::fabs(v);
  if (v < 0x1p-126) return 0x1p-149;
  int e;
  std::frexp(v, &e);
  return std::ldexp(1.0, e - 24);
}
// Error of a float result in float ulps against a more precise reference.
double ulp_err_f32(float got, long double ref) {
  if (std::isnan(got) && std::isnan(ref)) return 0;
  if (got == ref) return 0;
  return static_cast<double>(std::fabs(static_cast<long double>(got) - ref) / ulp_f32(static_cast<double>(ref)));
}
// Error of a double result in double ulps against a long double reference.
double ulp_err_f64(double got, long double ref) {
  if (std::isnan(got) && std::isnan(ref)) return 0;
  if (got == ref) return 0;
  long double a = std::fabs(ref);
  long double ulp = a < 0x1p-1022L ? 0x1p-1074L : std::ldexp(1.0L, std::ilogb(a) - 52);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - ref) / ulp);
}

// Folds result bits into a hash: equal hashes on two builds mean equal bits.
struct Fnv {
  uint64_t h = 0xcbf29ce484222325ull;
  void add(uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 0x100000001b3ull;
    }
  }
};

// ---------------------------------------------------------------- exp_f32

TEST(ExpF32, StridedOverAllFloatsWithinOneUlp) {
  // An exhaustive run over all 2.24e9 floats in [-105, 105] measured 1.029 ulp
  // at most (at 0x1.4cbf62p+2); this samples every 61st bit pattern.
  double worst = 0;
  float worst_x = 0;
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 61) {
    const float x = f32_from_bits(static_cast<uint32_t>(b));
    if (!(std::fabs(x) <= 105.0f)) continue;
    const double ref = std::exp(static_cast<double>(x));  // glibc exp: < 1 double ulp, exact enough here
    const float got = exp_f32(x);
    if (ref > FLT_MAX) {
      ASSERT_EQ(got, kInfF) << "x=" << x;
      continue;
    }
    const double e = ulp_err_f32(got, ref);
    if (e > worst) worst = e, worst_x = x;
  }
  std::printf("exp_f32 strided max error %.4f ulp at %a\n", worst, worst_x);
  EXPECT_LE(worst, 1.05);
}

TEST(ExpF32, DenseAroundReductionBoundaryAndSubnormals) {
  // Every float in ranges where rounding is most delicate: r near ±ln2/2, and
  // results near overflow or in the subnormal range.
  const float ranges[][2] = {{0.33f, 0.36f}, {-0.36f, -0.33f}, {88.0f, 88.7228f}, {-104.0f, -86.0f}, {-1e-6f, -0.99e-6f}};
  for (const auto& r : ranges) {
    double worst = 0;
    for (float x = r[0]; x <= r[1]; x = std::nextafter(x, kInfF)) {
      worst = std::max(worst, ulp_err_f32(exp_f32(x), std::exp(static_cast<double>(x))));
    }
    EXPECT_LE(worst, 1.05) << "range [" << r[0] << ", " << r[1] << "]";
  }
}

TEST(ExpF32, SpecialValues) {
  EXPECT_EQ(exp_f32(0.0f), 1.0f);
  EXPECT_EQ(exp_f32(-0.0f), 1.0f);
  EXPECT_EQ(exp_f32(kInfF), kInfF);
  EXPECT_EQ(f32_bits(exp_f32(-kInfF)), 0u);  // +0
  EXPECT_TRUE(std::isnan(exp_f32(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isnan(exp_f32(-std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(exp_f32(FLT_MAX), kInfF);
  EXPECT_EQ(exp_f32(-FLT_MAX), 0.0f);
  EXPECT_EQ(exp_f32(1e-30f), 1.0f);
  EXPECT_EQ(exp_f32(FLT_TRUE_MIN), 1.0f);
  // Overflow threshold: ln(FLT_MAX) = 88.7228391...
  EXPECT_LT(exp_f32(88.72283f), kInfF);
  EXPECT_GT(exp_f32(88.72283f), 3.4e38f);
  EXPECT_EQ(exp_f32(88.7229f), kInfF);
  // Underflow: the smallest subnormal 2^-149 is e^-103.28; below e^-103.97 it rounds to 0.
  EXPECT_EQ(exp_f32(-103.28f), FLT_TRUE_MIN);
  EXPECT_EQ(exp_f32(-104.0f), 0.0f);
  EXPECT_GT(exp_f32(-103.9f), 0.0f);
  EXPECT_EQ(exp_f32(1.0f), 2.71828183f);
  EXPECT_EQ(exp_f32(-1.0f), 0.367879441f);
}

TEST(ExpF32, SymmetryAndDeterminism) {
  // e^x · e^−x = 1 within the two results' errors.
  TestRng rng{1};
  for (int i = 0; i < 200000; ++i) {
    const float x = static_cast<float>(rng.uniform(-80, 80));
    const double prod = static_cast<double>(exp_f32(x)) * exp_f32(-x);
    ASSERT_NEAR(prod, 1.0, 3e-7) << "x=" << x;
  }
  // e^(a+b) ≈ e^a·e^b for integers: exp_f32(n) against repeated products.
  EXPECT_NEAR(exp_f32(10.0f) / (exp_f32(5.0f) * exp_f32(5.0f)), 1.0, 4e-7);
  // Same input, same bits (the function has no state; this guards against UB).
  for (int i = 0; i < 1000; ++i) {
    const float x = static_cast<float>(rng.uniform(-110, 110));
    ASSERT_EQ(f32_bits(exp_f32(x)), f32_bits(exp_f32(x)));
  }
}

// ---------------------------------------------------------------- silu_f32

TEST(SiluF32, AccuracyAndSpecialValues) {
  double worst = 0, worst_far = 0;
  float worst_x = 0;
  const auto ref = [](float x) {
    const long double xl = x;
    return xl / (1.0L + std::exp(-xl));
  };
  // Every 97th float with |x| <= 80.
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 97) {
    const float x = f32_from_bits(static_cast<uint32_t>(b));
    if (!(std::fabs(x) <= 80.0f)) continue;
    const double e = ulp_err_f32(silu_f32(x), ref(x));
    if (e > worst) worst = e, worst_x = x;
  }
  // Every float in [-110, -80): x·e^x, down through the subnormals to 0.
  for (float x = -110.0f; x < -80.0f; x = std::nextafter(x, kInfF)) {
    worst_far = std::max(worst_far, ulp_err_f32(silu_f32(x), ref(x)));
  }
  std::printf("silu_f32 max error %.4f ulp at %a; %.4f ulp below -80\n", worst, worst_x, worst_far);
  EXPECT_LE(worst, 2.5);  // see math.h for the exhaustive measurement
  EXPECT_LE(worst_far, 2.0);

  EXPECT_EQ(f32_bits(silu_f32(0.0f)), f32_bits(0.0f));
  EXPECT_EQ(f32_bits(silu_f32(-0.0f)), f32_bits(-0.0f));
  EXPECT_EQ(silu_f32(kInfF), kInfF);
  EXPECT_EQ(f32_bits(silu_f32(-kInfF)), f32_bits(-0.0f));
  EXPECT_EQ(f32_bits(silu_f32(-FLT_MAX)), f32_bits(-0.0f));
  EXPECT_TRUE(std::isnan(silu_f32(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(silu_f32(100.0f), 100.0f);
  EXPECT_EQ(silu_f32(FLT_MAX), FLT_MAX);
  EXPECT_LT(silu_f32(-100.0f), 0.0f);  // -3.7e-42: subnormal, not flushed
}

TEST(TanhF32, AccuracyAndSpecialValues) {
  double worst = 0;
  float worst_x = 0;
  // Every 97th float with |x| <= 20 (tanh is ±1 in float beyond 9.1).
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 97) {
    const float x = f32_from_bits(static_cast<uint32_t>(b));
    if (!(std::fabs(x) <= 20.0f)) continue;
    const double e = ulp_err_f32(tanh_f32(x), std::tanh(static_cast<long double>(x)));
    if (e > worst) worst = e, worst_x = x;
  }
  std::printf("tanh_f32 max error %.4f ulp at %a\n", worst, worst_x);
  EXPECT_LE(worst, 1.5);  // see math.h
  EXPECT_EQ(f32_bits(tanh_f32(0.0f)), f32_bits(0.0f));
  EXPECT_EQ(f32_bits(tanh_f32(-0.0f)), f32_bits(-0.0f));
  EXPECT_EQ(tanh_f32(kInfF), 1.0f);
  EXPECT_EQ(tanh_f32(-kInfF), -1.0f);
  EXPECT_EQ(tanh_f32(FLT_MAX), 1.0f);
  EXPECT_TRUE(std::isnan(tanh_f32(std::numeric_limits<float>::quiet_NaN())));
  for (const float x : {0.1f, 0.25f, 0.7f, 3.0f}) EXPECT_EQ(tanh_f32(-x), -tanh_f32(x));
}

// ---------------------------------------------------------------- f64

TEST(ExpF64, WithinHalfUlpAndSpecialValues) {
  TestRng rng{2};
  double worst = 0, worst_x = 0, worst_subnormal = 0;
  auto check = [&](double x) {
    const long double ref = std::exp(static_cast<long double>(x));
    if (ref > DBL_MAX) {
      ASSERT_EQ(exp_f64(x), kInf) << x;
      return;
    }
    const double e = ulp_err_f64(exp_f64(x), ref);
    if (ref < DBL_MIN) {
      worst_subnormal = std::max(worst_subnormal, e);  // rounded twice: y, then y·2^k
    } else if (e > worst) {
      worst = e, worst_x = x;
    }
  };
  for (int i = 0; i < 1000000; ++i) check(rng.uniform(-745.2, 709.8));
  for (int i = 0; i < 300000; ++i) check(rng.uniform(-1, 1));
  for (int i = 0; i < 100000; ++i) check(rng.uniform(-1e-6, 1e-6));
  for (int i = 0; i < 100000; ++i) check(rng.uniform(-745.2, -708));  // subnormal results
  std::printf("exp_f64 max error %.4f ulp at %a; subnormal results %.4f ulp\n", worst, worst_x, worst_subnormal);
  EXPECT_LT(worst, 0.53);  // double-double inside: nearly correctly rounded
  EXPECT_LT(worst_subnormal, 1.0);

  EXPECT_EQ(exp_f64(0.0), 1.0);
  EXPECT_EQ(exp_f64(-0.0), 1.0);
  EXPECT_EQ(exp_f64(kInf), kInf);
  EXPECT_EQ(f64_bits(exp_f64(-kInf)), 0u);
  EXPECT_TRUE(std::isnan(exp_f64(std::nan(""))));
  EXPECT_EQ(exp_f64(709.79), kInf);
  EXPECT_LT(exp_f64(709.78), kInf);
  EXPECT_EQ(exp_f64(-745.2), 0.0);
  EXPECT_EQ(exp_f64(-745.1), 0x1p-1074);
  EXPECT_EQ(exp_f64(1e-300), 1.0);
  EXPECT_EQ(exp_f64(1.0), 2.718281828459045);
}

TEST(LogF64, WithinHalfUlpAndSpecialValues) {
  TestRng rng{3};
  double worst = 0, worst_x = 0;
  auto check = [&](double x) {
    const double e = ulp_err_f64(log_f64(x), std::log(static_cast<long double>(x)));
    if (e > worst) worst = e, worst_x = x;
  };
  for (int i = 0; i < 1000000; ++i) {  // any positive finite double, subnormals included
    uint64_t b = rng.next() & 0x7fffffffffffffffull;
    double x;
    std::memcpy(&x, &b, 8);
    if (std::isfinite(x) && x > 0) check(x);
  }
  for (int i = 0; i < 300000; ++i) check(1.0 + rng.uniform(-1e-3, 1e-3));  // cancellation near 1
  for (int i = 0; i < 300000; ++i) check(rng.uniform(0.5, 2.0));
  for (int i = 0; i < 300000; ++i) check(rng.uniform(1.0, 1e7));
  std::printf("log_f64 max error %.4f ulp at %a\n", worst, worst_x);
  EXPECT_LT(worst, 0.51);  // double-double inside: nearly correctly rounded

  EXPECT_EQ(f64_bits(log_f64(1.0)), 0u);
  EXPECT_EQ(log_f64(0.0), -kInf);
  EXPECT_EQ(log_f64(-0.0), -kInf);
  EXPECT_TRUE(std::isnan(log_f64(-1.0)));
  EXPECT_TRUE(std::isnan(log_f64(-kInf)));
  EXPECT_TRUE(std::isnan(log_f64(std::nan(""))));
  EXPECT_EQ(log_f64(kInf), kInf);
  EXPECT_EQ(log_f64(2.0), 0.6931471805599453);
  EXPECT_EQ(log_f64(0x1p-1074), -744.4400719213812);
  EXPECT_EQ(log_f64(DBL_MAX), 709.782712893384);
}

TEST(SinCosF64, WithinOneUlpBelow2To50) {
  TestRng rng{4};
  double worst_s = 0, worst_c = 0, ws = 0, wc = 0;
  auto check = [&](double x) {
    const long double xl = x;
    const double es = ulp_err_f64(sin_f64(x), std::sin(xl));
    const double ec = ulp_err_f64(cos_f64(x), std::cos(xl));
    if (es > worst_s) worst_s = es, ws = x;
    if (ec > worst_c) worst_c = ec, wc = x;
  };
  for (int i = 0; i < 500000; ++i) check(rng.uniform(-4, 4));
  for (int i = 0; i < 500000; ++i) check(rng.uniform(-1e7, 1e7));
  for (int i = 0; i < 100000; ++i) check(rng.uniform(-2e8, 2e8));
  // Float angles as RoPE produces them.
  for (int i = 0; i < 300000; ++i) check(static_cast<float>(rng.uniform(0, 1e6)));
  // The doubles closest to multiples of π/2, where the reduction cancels most.
  const long double pio2 = 1.5707963267948966192313216916397514L;
  for (int k = 1; k < 6400000; k += 997) {
    const double x = static_cast<double>(k * pio2);
    check(x);
    check(std::nextafter(x, 0.0));
    check(std::nextafter(x, 1e9));
  }
  for (int i = 0; i < 100000; ++i) check(rng.uniform(-1e-7, 1e-7));
  // Up to 2^50, where x·(2/π) no longer picks the nearest multiple by itself.
  for (int i = 0; i < 100000; ++i) check(std::ldexp(rng.uniform(1, 2), 27 + static_cast<int>(rng.next() % 23)));
  std::printf("sin_f64 max error %.4f ulp at %a; cos_f64 %.4f ulp at %a\n", worst_s, ws, worst_c, wc);
  EXPECT_LT(worst_s, 1.0);
  EXPECT_LT(worst_c, 1.0);
}

TEST(SinCosF64, SpecialValues) {
  EXPECT_EQ(f64_bits(sin_f64(0.0)), f64_bits(0.0));
  EXPECT_EQ(f64_bits(sin_f64(-0.0)), f64_bits(-0.0));
  EXPECT_EQ(cos_f64(0.0), 1.0);
  EXPECT_EQ(cos_f64(-0.0), 1.0);
  EXPECT_EQ(sin_f64(1e-300), 1e-300);
  EXPECT_EQ(sin_f64(-0x1p-1074), -0x1p-1074);
  for (double x : {kInf, -kInf, std::nan("")}) {
    EXPECT_TRUE(std::isnan(sin_f64(x)));
    EXPECT_TRUE(std::isnan(cos_f64(x)));
  }
  // Beyond the reduction's range the functions refuse instead of guessing.
  EXPECT_TRUE(std::isnan(sin_f64(1e300)));
  EXPECT_TRUE(std::isnan(cos_f64(-0x1p50)));
  EXPECT_EQ(sin_f64(0x1.921fb54442d18p+0), 1.0);  // π/2 rounded
  EXPECT_EQ(cos_f64(0x1.921fb54442d18p+1), -1.0);  // π rounded
  // Odd / even symmetry is exact.
  TestRng rng{5};
  for (int i = 0; i < 10000; ++i) {
    const double x = rng.uniform(0, 1e6);
    ASSERT_EQ(sin_f64(-x), -sin_f64(x));
    ASSERT_EQ(cos_f64(-x), cos_f64(x));
  }
}

TEST(PowF64, WithinOneUlpForTableRanges) {
  TestRng rng{6};
  double worst = 0, worst_x = 0, worst_y = 0;
  auto check = [&](double x, double y) {
    const long double ref = std::pow(static_cast<long double>(x), static_cast<long double>(y));
    if (ref < DBL_MIN || ref > DBL_MAX) return;  // covered by exp_f64's tests
    const double e = ulp_err_f64(pow_f64(x, y), ref);
    if (e > worst) worst = e, worst_x = x, worst_y = y;
  };
  // RoPE frequency powers: base in [1, 1e7], exponent in [-2, 2].
  for (int i = 0; i < 500000; ++i) check(std::exp(rng.uniform(0, 16.2)), rng.uniform(-2, 2));
  for (int n : {32, 64, 80, 96, 128, 256}) {
    for (double base : {10000.0, 500000.0, 1000000.0, 10000000.0}) check(base, static_cast<double>(-2.0f / n));
  }
  for (int i = 0; i < 100000; ++i) check(rng.uniform(0, 10), std::round(rng.uniform(-30, 30)));
  std::printf("pow_f64 max error %.4f ulp for |y·ln x| <= 33 at x=%a y=%a\n", worst, worst_x, worst_y);
  EXPECT_LT(worst, 0.53);
  // General: |y·ln x| up to ~700, where ln's ~2^-62 relative error is multiplied by |y·ln x|.
  worst = 0;
  for (int i = 0; i < 500000; ++i) {
    const double x = std::exp(rng.uniform(-40, 40));
    check(x, rng.uniform(-700, 700) / std::fabs(std::log(x)) * rng.uniform(0, 1));
  }
  std::printf("pow_f64 max error %.4f ulp for |y·ln x| <= 700 at x=%a y=%a\n", worst, worst_x, worst_y);
  EXPECT_LT(worst, 1.0);
}

TEST(PowF64, SpecialValues) {
  const double nan = std::nan("");
  EXPECT_EQ(pow_f64(nan, 0.0), 1.0);
  EXPECT_EQ(pow_f64(1.0, nan), 1.0);
  EXPECT_TRUE(std::isnan(pow_f64(nan, 1.0)));
  EXPECT_TRUE(std::isnan(pow_f64(2.0, nan)));
  EXPECT_TRUE(std::isnan(pow_f64(-2.0, 0.5)));
  EXPECT_EQ(pow_f64(-2.0, 3.0), -8.0);
  EXPECT_EQ(pow_f64(-2.0, 2.0), 4.0);
  EXPECT_EQ(pow_f64(2.0, 10.0), 1024.0);
  EXPECT_EQ(pow_f64(2.0, -1074.0), 0x1p-1074);
  EXPECT_EQ(pow_f64(2.0, 1024.0), kInf);
  EXPECT_EQ(pow_f64(4.0, 0.5), 2.0);
  EXPECT_EQ(pow_f64(-1.0, kInf), 1.0);
  EXPECT_EQ(pow_f64(0.5, kInf), 0.0);
  EXPECT_EQ(pow_f64(0.5, -kInf), kInf);
  EXPECT_EQ(pow_f64(2.0, -kInf), 0.0);
  EXPECT_EQ(f64_bits(pow_f64(-0.0, 3.0)), f64_bits(-0.0));
  EXPECT_EQ(f64_bits(pow_f64(-0.0, 2.0)), f64_bits(0.0));
  EXPECT_EQ(pow_f64(-0.0, -3.0), -kInf);
  EXPECT_EQ(pow_f64(0.0, -2.0), kInf);
  EXPECT_EQ(pow_f64(0.0, -0.5), kInf);
  EXPECT_EQ(pow_f64(-kInf, 3.0), -kInf);
  EXPECT_EQ(pow_f64(-kInf, 2.0), kInf);
  EXPECT_EQ(f64_bits(pow_f64(-kInf, -3.0)), f64_bits(-0.0));
  EXPECT_EQ(pow_f64(kInf, -0.5), 0.0);
  EXPECT_EQ(pow_f64(-1.0, 1e300), 1.0);
  EXPECT_EQ(pow_f64(1.0000001, 1e300), kInf);
  EXPECT_EQ(pow_f64(0.9999999, 1e300), 0.0);
}

// The tables are built in double and rounded to float; that float should be
// the correctly rounded one (a double error of ~1 ulp flips a float rounding
// only when the exact value lies within 2^-29 of a float midpoint).
TEST(TableRounding, FloatResultsMatchCorrectlyRounded) {
  int mismatches = 0, total = 0;
  for (double base : {10000.0, 1000000.0}) {
    for (int n_dims : {64, 128}) {
      const float theta_scale = static_cast<float>(pow_f64(base, static_cast<double>(-2.0f / n_dims)));
      const float ref_scale = static_cast<float>(std::pow(static_cast<long double>(base), static_cast<long double>(-2.0f / n_dims)));
      EXPECT_EQ(theta_scale, ref_scale);
      for (int pos = 0; pos < 32768; pos += 7) {
        float theta = static_cast<float>(pos);
        for (int i = 0; i < n_dims / 2; ++i, theta *= theta_scale) {
          const long double t = theta;
          mismatches += static_cast<float>(cos_f64(theta)) != static_cast<float>(std::cos(t));
          mismatches += static_cast<float>(sin_f64(theta)) != static_cast<float>(std::sin(t));
          total += 2;
        }
      }
    }
  }
  std::printf("table rounding: %d of %d float results differ from correctly rounded\n", mismatches, total);
  EXPECT_EQ(mismatches, 0);
}

// Golden hashes of result bits over fixed inputs. These constants were
// produced on x86-64; an ARM or wasm build must reproduce them exactly
// (design-notes §2). A mismatch means the build rounds differently (FMA
// contraction, excess precision, a changed constant) — not a tolerance issue.
TEST(Golden, BitsAreTheSameOnEveryBuild) {
  Fnv h_exp, h_silu, h_f64;
  for (uint32_t i = 0; i < (1u << 20); ++i) {
    const float x = -110.0f + 200.0f * static_cast<float>(i) / static_cast<float>(1u << 20);
    h_exp.add(f32_bits(exp_f32(x)));
    h_silu.add(f32_bits(silu_f32(x)));
  }
  TestRng rng{7};
  for (int i = 0; i < 100000; ++i) {
    const double x = rng.uniform(-1e6, 1e6);
    h_f64.add(f64_bits(sin_f64(x)));
    h_f64.add(f64_bits(cos_f64(x)));
    h_f64.add(f64_bits(exp_f64(x * 7e-4)));
    h_f64.add(f64_bits(log_f64(std::fabs(x))));
    h_f64.add(f64_bits(pow_f64(std::fabs(x) * 1e-2, x * 1e-6)));
  }
  std::printf("golden: exp %016llx silu %016llx f64 %016llx\n", static_cast<unsigned long long>(h_exp.h),
              static_cast<unsigned long long>(h_silu.h), static_cast<unsigned long long>(h_f64.h));
  EXPECT_EQ(h_exp.h, 0xb6a12ded5f25b7a5ull);
  EXPECT_EQ(h_silu.h, 0x86ec7453fb675256ull);
  EXPECT_EQ(h_f64.h, 0xce4e9cee52a77cdaull);
}

}  // namespace
}  // namespace wllm
