// SIMD128 elementwise math (MathKernels): core/math.h's exp_f32 and silu_f32
// step by step on 4 lanes, so every lane gets the scalar function's bits.
// Clamps use pmin/pmax (a comparison and a select, as the scalar code), so a
// NaN lane passes through as it does there.
#include "quant/kernels.h"

#if defined(__wasm_simd128__)

#include <algorithm>

#include "core/math.h"
#include "quant/wasm/simd128.h"

namespace wllm::simd128 {
namespace {

// math_detail::exp_scaled on 4 lanes: m·e^x, rounded once at the end.
inline v128_t exp_scaled(v128_t x, v128_t m) {
  using namespace math_detail;
  // x > max ? max : x, then x < min ? min : x (pmin(a, b) is b < a ? b : a).
  x = wasm_f32x4_pmin(x, wasm_f32x4_splat(kExpMax));
  x = wasm_f32x4_pmax(x, wasm_f32x4_splat(kExpMin));
  const v128_t shifted = wasm_f32x4_add(wasm_f32x4_mul(x, wasm_f32x4_splat(kInvLn2)), wasm_f32x4_splat(kRoundShift));
  const v128_t n = wasm_f32x4_sub(shifted, wasm_f32x4_splat(kRoundShift));
  const v128_t ni = wasm_i32x4_sub(shifted, wasm_f32x4_splat(kRoundShift));  // the integer in the low bits
  const v128_t r = wasm_f32x4_sub(wasm_f32x4_sub(x, wasm_f32x4_mul(n, wasm_f32x4_splat(kLn2Hi))),
                                  wasm_f32x4_mul(n, wasm_f32x4_splat(kLn2Lo)));
  v128_t q = wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_splat(kExpC6), r), wasm_f32x4_splat(kExpC5));
  q = wasm_f32x4_add(wasm_f32x4_mul(q, r), wasm_f32x4_splat(kExpC4));
  q = wasm_f32x4_add(wasm_f32x4_mul(q, r), wasm_f32x4_splat(kExpC3));
  q = wasm_f32x4_add(wasm_f32x4_mul(q, r), wasm_f32x4_splat(kExpC2));
  const v128_t p =
      wasm_f32x4_add(wasm_f32x4_splat(1.0f), wasm_f32x4_add(r, wasm_f32x4_mul(wasm_f32x4_mul(r, r), q)));
  const v128_t n1 = wasm_i32x4_shr(ni, 1);
  const v128_t n2 = wasm_i32x4_sub(ni, n1);
  const v128_t s1 = wasm_i32x4_shl(wasm_i32x4_add(n1, wasm_i32x4_splat(127)), 23);
  const v128_t s2 = wasm_i32x4_shl(wasm_i32x4_add(n2, wasm_i32x4_splat(127)), 23);
  return wasm_f32x4_mul(wasm_f32x4_mul(wasm_f32x4_mul(p, m), s1), s2);
}

// silu_f32 on 4 lanes: both of its branches, then the scalar's choices.
inline v128_t silu(v128_t x) {
  const v128_t far_negative = wasm_f32x4_lt(x, wasm_f32x4_splat(-80.0f));
  const v128_t arg = wasm_v128_bitselect(x, wasm_f32x4_neg(x), far_negative);
  const v128_t scale = wasm_v128_bitselect(x, wasm_f32x4_splat(1.0f), far_negative);
  const v128_t e = exp_scaled(arg, scale);
  const v128_t near = wasm_f32x4_div(x, wasm_f32x4_add(wasm_f32x4_splat(1.0f), e));
  const v128_t r = wasm_v128_bitselect(e, near, far_negative);
  return wasm_v128_bitselect(wasm_f32x4_splat(-0.0f), r, wasm_f32x4_lt(x, wasm_f32x4_splat(-150.0f)));
}

void swiglu(float* gate, const float* up, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    wasm_v128_store(gate + i, wasm_f32x4_mul(silu(wasm_v128_load(gate + i)), wasm_v128_load(up + i)));
  }
  for (; i < n; ++i) gate[i] = silu_f32(gate[i]) * up[i];
}

// ref::softmax on 4 lanes (the sum's 8 lanes in two vectors). The maximum:
// every lane starts from x[0] and takes pmax(m, v) = m < v ? v : m, so a NaN
// is skipped unless it is x[0], as std::max does; only the sign of a zero
// maximum may differ, which changes no x − max.
void softmax(float* x, int64_t n, float scale) {
  const int64_t n8 = n / 8 * 8;
  const v128_t s = wasm_f32x4_splat(scale);
  for (int64_t i = 0; i < n8; i += 4) wasm_v128_store(x + i, wasm_f32x4_mul(wasm_v128_load(x + i), s));
  for (int64_t i = n8; i < n; ++i) x[i] *= scale;
  v128_t m = wasm_f32x4_splat(x[0]);
  for (int64_t i = 0; i < n8; i += 4) m = wasm_f32x4_pmax(m, wasm_v128_load(x + i));
  float lanes[8];
  wasm_v128_store(lanes, m);
  float max = x[0];
  for (int j = 0; j < 4; ++j) max = std::max(max, lanes[j]);
  for (int64_t i = n8; i < n; ++i) max = std::max(max, x[i]);

  v128_t lo = wasm_f32x4_splat(0.0f), hi = wasm_f32x4_splat(0.0f);  // lanes 0..3, 4..7 of i % 8
  const v128_t one = wasm_f32x4_splat(1.0f), shift = wasm_f32x4_splat(max);
  for (int64_t i = 0; i < n8; i += 8) {
    const v128_t e_lo = exp_scaled(wasm_f32x4_sub(wasm_v128_load(x + i), shift), one);
    const v128_t e_hi = exp_scaled(wasm_f32x4_sub(wasm_v128_load(x + i + 4), shift), one);
    wasm_v128_store(x + i, e_lo);
    wasm_v128_store(x + i + 4, e_hi);
    lo = wasm_f32x4_add(lo, e_lo);
    hi = wasm_f32x4_add(hi, e_hi);
  }
  wasm_v128_store(lanes, lo);
  wasm_v128_store(lanes + 4, hi);
  for (int64_t i = n8; i < n; ++i) {
    x[i] = exp_f32(x[i] - max);
    lanes[i % 8] += x[i];
  }
  const float inv = 1.0f / sum_lanes8(lanes);
  const v128_t inv_v = wasm_f32x4_splat(inv);
  for (int64_t i = 0; i < n8; i += 4) wasm_v128_store(x + i, wasm_f32x4_mul(wasm_v128_load(x + i), inv_v));
  for (int64_t i = n8; i < n; ++i) x[i] *= inv;
}

constexpr MathKernels kSimd128Math = {swiglu, softmax};

}  // namespace
}  // namespace wllm::simd128

namespace wllm {
const MathKernels* simd128_math_kernels() { return &simd128::kSimd128Math; }
}  // namespace wllm

#else  // built without SIMD128

namespace wllm {
const MathKernels* simd128_math_kernels() { return nullptr; }
}  // namespace wllm

#endif
