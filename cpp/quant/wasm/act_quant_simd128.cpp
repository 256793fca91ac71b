// SIMD128 activation quantizers (Q8_0, Q8_K): the reference algorithms of
// ref/act_quant.cpp with the per-element work in vectors. Maxima do not
// depend on order, x·id is one rounding either way, and rounding to nearest
// even then clamping equals the reference's round_clamp, so the bytes are
// the reference's (tests/cpp/kernels_test.cpp checks, NaN and inf included).
#include "quant/kernels.h"

#if defined(__wasm_simd128__)

#include "core/half.h"
#include "quant/wasm/simd128.h"

namespace wllm::simd128 {
namespace {

// max(acc, |v|) lane-wise, skipping NaN as the reference's `a > amax` does:
// pmax(acc, a) is `acc < a ? a : acc`, false for NaN.
inline v128_t max_abs(v128_t acc, v128_t v) { return wasm_f32x4_pmax(acc, wasm_f32x4_abs(v)); }

inline float horizontal_max(v128_t v) {
  const v128_t m = wasm_f32x4_pmax(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
  return wasm_f32x4_extract_lane(wasm_f32x4_pmax(m, wasm_i32x4_shuffle(m, m, 1, 0, 3, 2)), 0);
}

// round_clamp (ref.h) of 4 values: nearest, ties to even, clamped, NaN -> 0.
inline v128_t round_clamp(v128_t v, float lo, float hi) {
  v128_t r = wasm_f32x4_nearest(v);
  r = wasm_f32x4_pmin(wasm_f32x4_pmax(wasm_f32x4_splat(lo), r), wasm_f32x4_splat(hi));
  r = wasm_v128_and(r, wasm_f32x4_eq(v, v));  // NaN -> 0
  return wasm_i32x4_trunc_sat_f32x4(r);
}

// 16 int32 in [-128, 127] (4 vectors, element order) as 16 bytes in order.
inline v128_t pack_bytes(const v128_t q[4]) {
  return wasm_i8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(q[0], q[1]), wasm_i16x8_narrow_i32x4(q[2], q[3]));
}

}  // namespace

void from_float_q8_0_simd128(const float* src, void* dst, int64_t n) {
  BlockQ8_0* b = static_cast<BlockQ8_0*>(dst);
  for (int64_t ib = 0; ib < n / kQK; ++ib, src += kQK) {
    v128_t v[8], m = wasm_f32x4_splat(0.0f);
    for (int k = 0; k < 8; ++k) {
      v[k] = wasm_v128_load(src + 4 * k);
      m = max_abs(m, v[k]);
    }
    const float d = horizontal_max(m) / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[ib].d = f32_to_f16(d);
    v128_t q[8];
    for (int k = 0; k < 8; ++k) q[k] = round_clamp(wasm_f32x4_mul(v[k], wasm_f32x4_splat(id)), -127.0f, 127.0f);
    wasm_v128_store(b[ib].qs, pack_bytes(q));
    wasm_v128_store(b[ib].qs + 16, pack_bytes(q + 4));
  }
}

void from_float_q8_K_simd128(const float* src, void* dst, int64_t n) {
  BlockQ8_K* b = static_cast<BlockQ8_K*>(dst);
  for (int64_t ib = 0; ib < n / kQK_K; ++ib, src += kQK_K) {
    v128_t m = wasm_f32x4_splat(0.0f);
    for (int k = 0; k < kQK_K / 4; ++k) m = max_abs(m, wasm_v128_load(src + 4 * k));
    const float amax = horizontal_max(m);
    if (amax == 0.0f) {
      b[ib].d = 0.0f;
      std::memset(b[ib].qs, 0, sizeof(b[ib].qs));
      std::memset(b[ib].bsums, 0, sizeof(b[ib].bsums));
      continue;
    }
    // The first value of that magnitude, sign kept (the reference's max).
    float max = 0.0f;
    for (int k = 0; k < kQK_K / 4; ++k) {
      const int hits = wasm_i32x4_bitmask(wasm_f32x4_eq(wasm_f32x4_abs(wasm_v128_load(src + 4 * k)), wasm_f32x4_splat(amax)));
      if (hits) {
        max = src[4 * k + __builtin_ctz(static_cast<unsigned>(hits))];
        break;
      }
    }
    const float iscale = -127.0f / max;
    for (int c = 0; c < kQK_K / 16; ++c) {
      v128_t q[4];
      for (int k = 0; k < 4; ++k) {
        q[k] = round_clamp(wasm_f32x4_mul(wasm_f32x4_splat(iscale), wasm_v128_load(src + 16 * c + 4 * k)), -128.0f, 127.0f);
      }
      const v128_t bytes = pack_bytes(q);
      wasm_v128_store(b[ib].qs + 16 * c, bytes);
      b[ib].bsums[c] = static_cast<int16_t>(total(wasm_i32x4_extadd_pairwise_i16x8(wasm_i16x8_extadd_pairwise_i8x16(bytes))));
    }
    b[ib].d = 1.0f / iscale;
  }
}

}  // namespace wllm::simd128

#endif
