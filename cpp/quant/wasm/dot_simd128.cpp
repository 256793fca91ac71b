// wasm SIMD128 dot kernels, the same arithmetic as the reference kernels
// (traits.h): float dots keep element i in lane i % 8, here two 4-lane
// registers; quantized dots sum each block's integer products exactly in
// vectors, then add the block's float term into lane (block % 8) exactly as
// the reference does. No FMA exists in SIMD128, so none is used. The table
// at the end also lists the tiled kernels (gemm_simd128.cpp) and the
// activation quantizers (act_quant_simd128.cpp).
#include "quant/kernels.h"

#if defined(__wasm_simd128__)

#include <type_traits>

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
  return dot_f16(static_cast<const uint16_t*>(row), static_cast<const float*>(act), n);
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

// Q4_0, Q5_0 (against Q8_0), Q4_1, Q5_1 (against Q8_1): their codes
// (block_codes) against the activation bytes, as 4 partial int32 sums.
template <typename Block, typename Act>
v128_t block_sums_codes(const Block& w, const Act& x) {
  v128_t lo, hi;
  block_codes(w, &lo, &hi);
  return wasm_i32x4_add(dot_i8x16(lo, wasm_v128_load(x.qs)), dot_i8x16(hi, wasm_v128_load(x.qs + 16)));
}

template <typename Block, typename Act>
int32_t block_sum_codes(const Block& w, const Act& x) {
  return total(block_sums_codes(w, x));
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

// Q8_1 activations (Q4_1, Q5_1, whose codes carry no offset: the min comes
// back through s = d_x·Σ x): term = (d_w·d_x)·sum + m_w·s_x into lane
// (block % 8), four blocks per step (lanes 0..3, then 4..7), so their four
// f16 pairs convert as vectors.
template <typename Block>
float dot_blocks_q8_1(int64_t n, const void* row, const void* act) {
  const Block* w = static_cast<const Block*>(row);
  const BlockQ8_1* x = static_cast<const BlockQ8_1*>(act);
  const int64_t nb = n / kQK, nb8 = nb / 8 * 8;
  v128_t acc[2] = {wasm_f32x4_splat(0.0f), wasm_f32x4_splat(0.0f)};  // lanes 0..3, 4..7
  for (int64_t ib = 0; ib < nb8; ib += 4) {
    const Block* wb = w + ib;
    const BlockQ8_1* xb = x + ib;
    v128_t partial[4];
    for (int a = 0; a < 4; ++a) partial[a] = block_sums_codes(wb[a], xb[a]);
    const v128_t d = wasm_f32x4_mul(f16x4_to_f32(wb[0].d, wb[1].d, wb[2].d, wb[3].d),
                                    f16x4_to_f32(xb[0].d, xb[1].d, xb[2].d, xb[3].d));
    const v128_t scaled = wasm_f32x4_mul(d, wasm_f32x4_convert_i32x4(sum_each(partial)));
    const v128_t mins = wasm_f32x4_mul(f16x4_to_f32(wb[0].m, wb[1].m, wb[2].m, wb[3].m),
                                       f16x4_to_f32(xb[0].s, xb[1].s, xb[2].s, xb[3].s));
    v128_t& lanes = acc[(ib / 4) % 2];
    lanes = wasm_f32x4_add(lanes, wasm_f32x4_add(scaled, mins));
  }
  float lanes[8];
  wasm_v128_store(lanes, acc[0]);
  wasm_v128_store(lanes + 4, acc[1]);
  for (int64_t ib = nb8; ib < nb; ++ib) {
    const float sum = static_cast<float>(block_sum_codes(w[ib], x[ib]));
    const float term = (f16_to_f32(w[ib].d) * f16_to_f32(x[ib].d)) * sum + f16_to_f32(w[ib].m) * f16_to_f32(x[ib].s);
    lanes[ib % 8] += term;
  }
  return sum_lanes8(lanes);
}

// K-quants through the scheme of simd128.h: sumi = Σ_j sc_j·Σ_{16 elements
// of j} q·x, summ = Σ_j m_j·bsums[j] for the types with mins; then the
// reference's term = (dx·d)·sumi, minus (dx·dmin)·summ for those.
template <typename Block>
float dot_k_quant(int64_t n, const void* row, const void* act) {
  const Block* w = static_cast<const Block*>(row);
  const BlockQ8_K* x = static_cast<const BlockQ8_K*>(act);
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t ib = 0; ib < n / kQK_K; ++ib) {
    int16_t sc[16], m[16];
    k_scales16(w[ib], sc, m);
    v128_t sum = wasm_i32x4_splat(0);
    const auto add_sub_blocks = [&](int j) {  // the sub-blocks that share scale sc[j]
      v128_t part = dot_codes16(k_codes(w[ib], j), x[ib].qs + 16 * j);
      if constexpr (kScaleRun<Block> == 32) {
        part = wasm_i32x4_add(part, dot_codes16(k_codes(w[ib], j + 1), x[ib].qs + 16 * j + 16));
      }
      sum = wasm_i32x4_add(sum, wasm_i32x4_mul(part, wasm_i32x4_splat(sc[j])));
    };
    // k_codes wants j known at compile time (fixed shifts, no branches; V8
    // widens a variable byte shift into 6 instructions): unrolled, faster in
    // Node, except Q4_K, whose codes need no shift and whose unrolled loop
    // spills (figures: docs/performance.md).
    if constexpr (std::is_same_v<Block, BlockQ4_K>) {
      for (int j = 0; j < 16; j += 2) add_sub_blocks(j);
    } else {
#pragma clang loop unroll(full)
      for (int j = 0; j < 16; j += kScaleRun<Block> / 16) add_sub_blocks(j);
    }
    const float dx = x[ib].d;
    float term = (dx * f16_to_f32(w[ib].d)) * static_cast<float>(total(sum));
    if constexpr (requires { w[ib].dmin; }) {
      term = term - (dx * f16_to_f32(w[ib].dmin)) * static_cast<float>(total(min_sums(x[ib], m)));
    }
    acc[ib % 8] += term;
  }
  return sum_lanes8(acc);
}

constexpr DotKernel kSimd128Kernels[] = {
    {TensorType::kF32, dot_f32_simd128, gemm_f32_simd128},
    {TensorType::kF16, dot_f16_simd128, gemm_f16_simd128, nullptr, matvec_f16_simd128},
    {TensorType::kBF16, dot_bf16_simd128, gemm_bf16_simd128},
    {TensorType::kQ8_0, dot_blocks_q8_0<BlockQ8_0, block_sum_q8_0>, gemm_q8_0_simd128, from_float_q8_0_simd128,
     matvec_q8_0_simd128},
    {TensorType::kQ4_0, dot_blocks_q8_0<BlockQ4_0, block_sum_codes<BlockQ4_0, BlockQ8_0>>, gemm_q4_0_simd128, nullptr,
     matvec_q4_0_simd128},
    {TensorType::kQ5_0, dot_blocks_q8_0<BlockQ5_0, block_sum_codes<BlockQ5_0, BlockQ8_0>>, gemm_q5_0_simd128, nullptr,
     matvec_q5_0_simd128},
    {TensorType::kQ4_1, dot_blocks_q8_1<BlockQ4_1>},
    {TensorType::kQ5_1, dot_blocks_q8_1<BlockQ5_1>},
    {TensorType::kQ2_K, dot_k_quant<BlockQ2_K>, gemm_k_simd128<BlockQ2_K>},
    {TensorType::kQ3_K, dot_k_quant<BlockQ3_K>, gemm_k_simd128<BlockQ3_K>},
    {TensorType::kQ4_K, dot_k_quant<BlockQ4_K>, gemm_k_simd128<BlockQ4_K>},
    {TensorType::kQ5_K, dot_k_quant<BlockQ5_K>, gemm_k_simd128<BlockQ5_K>},
    {TensorType::kQ6_K, dot_k_quant<BlockQ6_K>, gemm_k_simd128<BlockQ6_K>},
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
