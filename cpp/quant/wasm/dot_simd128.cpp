// wasm SIMD128 dot kernels, the same arithmetic as the reference kernels
// (traits.h): float dots keep element i in lane i % 8, here two 4-lane
// registers; quantized dots sum each block's integer products exactly in
// vectors, then add the block's float term into lane (block % 8) exactly as
// the reference does. No FMA exists in SIMD128, so none is used. The table
// at the end also lists the tiled kernels (gemm_simd128.cpp) and the
// activation quantizers (act_quant_simd128.cpp).
#include "quant/kernels.h"

#if defined(__wasm_simd128__)

#include "core/half.h"
#include "quant/wasm/simd128.h"

namespace wllm {
namespace {

using namespace simd128;  // block decoding shared with the tiled kernels

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

int32_t block_sum_q8_0(const BlockQ8_0& w, const BlockQ8_0& x) {
  return total(wasm_i32x4_add(dot_i8x16(wasm_v128_load(w.qs), wasm_v128_load(x.qs)),
                              dot_i8x16(wasm_v128_load(w.qs + 16), wasm_v128_load(x.qs + 16))));
}

// Q4_0, Q5_0: their signed codes (block_codes) against the activation bytes.
template <typename Block>
int32_t block_sum_codes(const Block& w, const BlockQ8_0& x) {
  v128_t lo, hi;
  block_codes(w, &lo, &hi);
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
    {TensorType::kF32, dot_f32_simd128, gemm_f32_simd128},
    {TensorType::kF16, dot_f16_simd128, gemm_f16_simd128},
    {TensorType::kBF16, dot_bf16_simd128, gemm_bf16_simd128},
    {TensorType::kQ8_0, dot_blocks_q8_0<BlockQ8_0, block_sum_q8_0>, gemm_q8_0_simd128, from_float_q8_0_simd128,
     matvec_q8_0_simd128},
    {TensorType::kQ4_0, dot_blocks_q8_0<BlockQ4_0, block_sum_codes<BlockQ4_0>>, gemm_q4_0_simd128, nullptr,
     matvec_q4_0_simd128},
    {TensorType::kQ5_0, dot_blocks_q8_0<BlockQ5_0, block_sum_codes<BlockQ5_0>>, gemm_q5_0_simd128, nullptr,
     matvec_q5_0_simd128},
    {TensorType::kQ4_K, dot_q4_K_simd128, gemm_q4_K_simd128},
    {TensorType::kQ6_K, dot_q6_K_simd128, gemm_q6_K_simd128},
    {TensorType::kQ8_K, nullptr, nullptr, from_float_q8_K_simd128},
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
