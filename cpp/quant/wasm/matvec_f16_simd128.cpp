// The wasm SIMD128 f16 decode kernel: f16 rows x one activation.
// Compiled at -O2 (CMakeLists.txt): clang's -O3 code for it runs slower in V8,
// with or without its loop unrolled (docs/performance.md).
#include "quant/kernels.h"

#if defined(__wasm_simd128__)

#include "core/half.h"
#include "quant/wasm/simd128.h"

namespace wllm::simd128 {
namespace {

// finite_half_top_to_f32 scales a half's bits by 2^112; here the activation
// is scaled by 2^112 instead, once for all rows, so a weight costs a shift and
// a mask. Each product is then the same real number as w·x and rounds the
// same, as long as no scaled element overflows (every |x| < 2^16); otherwise,
// or for a row with an infinity or NaN, the row takes the dot.

constexpr int64_t kMaxScaledAct = 16384;  // 64 KiB of stack

bool scale_act_by_2p112(const float* x, int64_t n, float* scaled) {
  if (n > kMaxScaledAct) return false;
  v128_t ok = wasm_i32x4_splat(-1);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const v128_t v = wasm_v128_load(x + i);
    ok = wasm_v128_and(ok, wasm_f32x4_lt(wasm_f32x4_abs(v), wasm_f32x4_splat(65536.0f)));  // false for NaN
    wasm_v128_store(scaled + i, wasm_f32x4_mul(v, wasm_f32x4_splat(0x1p112f)));
  }
  for (; i < n; ++i) {
    if (!(x[i] < 65536.0f && x[i] > -65536.0f)) return false;
    scaled[i] = x[i] * 0x1p112f;
  }
  return wasm_i32x4_all_true(ok);
}

}  // namespace

void matvec_f16_simd128(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out) {
  const float* x = static_cast<const float*>(act);
  alignas(16) float xs[kMaxScaledAct];
  const bool scaled = scale_act_by_2p112(x, n, xs);
  for (int r = 0; r < n_rows; ++r) {
    const uint16_t* w = reinterpret_cast<const uint16_t*>(static_cast<const uint8_t*>(rows) + r * row_stride);
    out[r] = scaled ? dot_f16_finite(w, xs, x, n, [](v128_t top) { return finite_half_top_scaled_down(top); })
                    : dot_f16(w, x, n);
  }
}

}  // namespace wllm::simd128

#endif  // __wasm_simd128__
