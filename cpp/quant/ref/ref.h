// Scalar reference kernels: the definition of every type's numerics. SIMD
// kernels (wasm128::, avx2::, neon::) have the same names and signatures and
// must return the same bits (design-notes §2).
//
// Signatures match traits.h: to_float_<t>(src, dst, n), from_float_<t>(src,
// dst, n) and dot_<weight>_<act>(n, row, act); n is a multiple of the block
// size (the tail of a shorter block is ignored). Any input is safe: NaN or inf
// give unspecified numbers but never UB, and zeros never divide by zero.
//
// Dot products. Each block b contributes one float term that is added into
// acc[b % 8] (acc starts at +0); the result is sum_lanes8(acc). Integer parts
// are exact int32 sums; the float formulas below are evaluated exactly as
// written, left to right, no FMA. Names: dw, mw = weight block scale and min
// (f16 → f32), dx = activation scale, sx = Q8_1's f16 s, qw/qx the codes with
// their offset removed (q - 8 for Q4_0, q - 16 for Q5_0, raw for Q4_1/Q5_1).
//   Q8_0 x Q8_0, Q4_0 x Q8_0, Q5_0 x Q8_0:
//     sumi = Σ_i qw_i·qx_i;                 term = (dw*dx)*(float)sumi
//   Q4_1 x Q8_1, Q5_1 x Q8_1:
//     sumi = Σ_i q_i·qx_i;                  term = (dw*dx)*(float)sumi + mw*sx
// K-quants against Q8_K (one term per 256-element super-block; d, dmin from
// the weight block, dx = Q8_K's f32 d; sub-block scales are integers folded
// into the integer sums):
//   Q2_K: sumi = Σ_{j<16} sc_j·Σ_{i∈j} q_i·qx_i,  summ = Σ_{j<16} m_j·bsum_j
//         term = (dx*d)*(float)sumi - (dx*dmin)*(float)summ
//   Q3_K: sumi = Σ_{j<16} (sc_j-32)·Σ_{i∈j} (q_i - 4·!h_i)·qx_i
//         term = (dx*d)*(float)sumi
//   Q4_K, Q5_K: sumi = Σ_{j<8} sc_j·Σ_{i∈j} q_i·qx_i,
//         summ = Σ_{j<8} m_j·(bsum_{2j} + bsum_{2j+1})
//         term = (dx*d)*(float)sumi - (dx*dmin)*(float)summ
//   Q6_K: sumi = Σ_{j<16} sc_j·Σ_{i∈j} (q_i-32)·qx_i;  term = (dx*d)*(float)sumi
// (These are ggml's ggml_vec_dot_*_generic formulas; only the float
// accumulation order differs.) Every int32 sum is far below 2^31 for any
// input bytes. Float weights against F32: acc[i % 8] += w_i * x_i.
//
// Tiled products (`gemm`): the reference simply loops the reference dot, which
// is what "bit for bit as dot" means.
//
// Activation quantizers (Q8_0, Q8_1, Q8_K) round to nearest with ties to even
// (round_clamp below), so f32x4.nearest / _mm256_round_ps / vrndnq match:
//   Q8_0, Q8_1: amax = max|x|, d = amax/127, id = d ? 1/d : 0,
//               q = round(x*id), stored d = f16(d); Q8_1: s = f16(d * Σq).
//   Q8_K:       max = the x of largest |x| (first one), zero block → all 0;
//               else iscale = -127/max, q = min(127, round(iscale*x)),
//               d = 1/iscale (f32), bsums = sums of 16.
// Weight quantizers port ggml's quantize_row_*_ref (no importance matrix).
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

#include "quant/traits.h"

namespace wllm::ref {

// Non-finite inputs rely on IEEE arithmetic (1/0 = inf, inf*0 = NaN), not UB.
static_assert(std::numeric_limits<float>::is_iec559, "kernels assume IEEE-754 floats");

// Rounds v to the nearest integer, ties to even, clamped to [lo, hi]; NaN
// gives 0. Clamping first keeps |v| < 2^22, where adding 1.5·2^23 leaves the
// rounded integer in the low mantissa bits (ggml's nearest_int), so the
// result never depends on libm or on float→int conversion of large values.
inline int round_clamp(float v, int lo, int hi) {
  if (v != v) return 0;
  if (v <= static_cast<float>(lo)) return lo;
  if (v >= static_cast<float>(hi)) return hi;
  const float t = v + 12582912.0f;
  uint32_t bits;
  std::memcpy(&bits, &t, 4);
  return static_cast<int>(bits & 0x007fffffu) - 0x00400000;
}

// Truncates v toward zero, clamped to [lo, hi]; NaN gives lo. For ggml's
// `(int)(x + 0.5f)` roundings in the Q4_0..Q5_1 weight quantizers.
inline int trunc_clamp(float v, int lo, int hi) {
  if (!(v > static_cast<float>(lo))) return lo;
  if (v >= static_cast<float>(hi)) return hi;
  return static_cast<int>(v);
}

// out[a * out_stride + r] = kDot(row r, act a): the reference `gemm` of every type.
template <DotFn kDot>
void gemm_by_dot(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts, int64_t act_stride,
                 int n_acts, float* out, int64_t out_stride) {
  const uint8_t* w = static_cast<const uint8_t*>(rows);
  const uint8_t* x = static_cast<const uint8_t*>(acts);
  for (int r = 0; r < n_rows; ++r) {
    for (int a = 0; a < n_acts; ++a) out[a * out_stride + r] = kDot(n, w + r * row_stride, x + a * act_stride);
  }
}

// F32, F16, BF16 (float_types.cpp).
void to_float_f32(const void* src, float* dst, int64_t n);
void from_float_f32(const float* src, void* dst, int64_t n);
float dot_f32_f32(int64_t n, const void* row, const void* act);
void to_float_f16(const void* src, float* dst, int64_t n);
void from_float_f16(const float* src, void* dst, int64_t n);
float dot_f16_f32(int64_t n, const void* row, const void* act);
void to_float_bf16(const void* src, float* dst, int64_t n);
void from_float_bf16(const float* src, void* dst, int64_t n);
float dot_bf16_f32(int64_t n, const void* row, const void* act);

// 32-element block weights (quants_32.cpp).
void to_float_q4_0(const void* src, float* dst, int64_t n);
void from_float_q4_0(const float* src, void* dst, int64_t n);
float dot_q4_0_q8_0(int64_t n, const void* row, const void* act);
void to_float_q4_1(const void* src, float* dst, int64_t n);
void from_float_q4_1(const float* src, void* dst, int64_t n);
float dot_q4_1_q8_1(int64_t n, const void* row, const void* act);
void to_float_q5_0(const void* src, float* dst, int64_t n);
void from_float_q5_0(const float* src, void* dst, int64_t n);
float dot_q5_0_q8_0(int64_t n, const void* row, const void* act);
void to_float_q5_1(const void* src, float* dst, int64_t n);
void from_float_q5_1(const float* src, void* dst, int64_t n);
float dot_q5_1_q8_1(int64_t n, const void* row, const void* act);
void to_float_q8_0(const void* src, float* dst, int64_t n);
float dot_q8_0_q8_0(int64_t n, const void* row, const void* act);

// Activation formats (act_quant.cpp). Q8_0 is also a weight type and its
// weights are quantized with this same function.
void from_float_q8_0(const float* src, void* dst, int64_t n);
void to_float_q8_1(const void* src, float* dst, int64_t n);
void from_float_q8_1(const float* src, void* dst, int64_t n);
void to_float_q8_K(const void* src, float* dst, int64_t n);
void from_float_q8_K(const float* src, void* dst, int64_t n);

// Elementwise math of the forward pass (math.cpp; see MathKernels in kernels.h).
void swiglu(float* gate, const float* up, int64_t n);
void softmax(float* x, int64_t n, float scale);

// K-quants (quants_k.cpp).
void to_float_q2_K(const void* src, float* dst, int64_t n);
void from_float_q2_K(const float* src, void* dst, int64_t n);
float dot_q2_K_q8_K(int64_t n, const void* row, const void* act);
void to_float_q3_K(const void* src, float* dst, int64_t n);
void from_float_q3_K(const float* src, void* dst, int64_t n);
float dot_q3_K_q8_K(int64_t n, const void* row, const void* act);
void to_float_q4_K(const void* src, float* dst, int64_t n);
void from_float_q4_K(const float* src, void* dst, int64_t n);
float dot_q4_K_q8_K(int64_t n, const void* row, const void* act);
void to_float_q5_K(const void* src, float* dst, int64_t n);
void from_float_q5_K(const float* src, void* dst, int64_t n);
float dot_q5_K_q8_K(int64_t n, const void* row, const void* act);
void to_float_q6_K(const void* src, float* dst, int64_t n);
void from_float_q6_K(const float* src, void* dst, int64_t n);
float dot_q6_K_q8_K(int64_t n, const void* row, const void* act);

}  // namespace wllm::ref
