// NEON (aarch64) dot kernels, the same arithmetic as the reference kernels
// (traits.h): float dots keep element i in lane i % 8, here two 4-lane
// registers; quantized dots sum each block's integer products exactly, then
// add eight blocks' terms (d_w·d_x)·sum into lanes 0..7 at once. Multiplies
// and adds stay separate (vmulq_f32 + vaddq_f32): vmlaq_f32 may be fused on
// aarch64, and the build's -ffp-contract=off keeps the compiler from fusing.
//
// Baseline armv8-a NEON. With the dot-product extension (__ARM_FEATURE_DOTPROD,
// CMake option WLLM_ARM_DOTPROD) the int8 sums use vdotq_s32 instead; integer
// sums are exact either way, so both builds give the same bits.
#include "quant/kernels.h"

#if defined(__aarch64__) && defined(__ARM_NEON)

#include <arm_neon.h>

#include "core/half.h"
#include "quant/blocks.h"

namespace wllm {
namespace {

// ---- eight float lanes as two registers (lanes 0..3, 4..7) -------------------

struct Lanes8 {
  float32x4_t lo, hi;
};

inline Lanes8 zero8() { return {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)}; }
inline Lanes8 add8(Lanes8 a, Lanes8 b) { return {vaddq_f32(a.lo, b.lo), vaddq_f32(a.hi, b.hi)}; }
inline Lanes8 sub8(Lanes8 a, Lanes8 b) { return {vsubq_f32(a.lo, b.lo), vsubq_f32(a.hi, b.hi)}; }
inline Lanes8 mul8(Lanes8 a, Lanes8 b) { return {vmulq_f32(a.lo, b.lo), vmulq_f32(a.hi, b.hi)}; }
inline Lanes8 load8(const float v[8]) { return {vld1q_f32(v), vld1q_f32(v + 4)}; }

// int32 → f32 rounds to nearest, as the reference's static_cast<float>.
inline Lanes8 to_float8(const int32_t v[8]) { return {vcvtq_f32_s32(vld1q_s32(v)), vcvtq_f32_s32(vld1q_s32(v + 4))}; }

// Eight f16 values to f32. FCVTL is exact for every half; it only quiets a
// signalling NaN, which no scale in a real file is.
inline Lanes8 f16_to_f32_8(const uint16_t h[8]) {
  const float16x8_t v = vreinterpretq_f16_u16(vld1q_u16(h));
  return {vcvt_f32_f16(vget_low_f16(v)), vcvt_high_f32_f16(v)};
}

inline void store8(Lanes8 a, float out[8]) {
  vst1q_f32(out, a.lo);
  vst1q_f32(out + 4, a.hi);
}

// ---- float weights -------------------------------------------------------------

// Finishes a lane-structured float dot: the tail elements n8..n go to lanes
// (i % 8) of the stored accumulator, then the fixed reduction of traits.h.
template <typename Load>
float finish_lanes(Lanes8 acc_v, int64_t n8, int64_t n, Load load, const float* x) {
  float acc[8];
  store8(acc_v, acc);
  for (int64_t i = n8; i < n; ++i) {
    const float p = load(i) * x[i];
    acc[i % 8] += p;
  }
  return sum_lanes8(acc);
}

float dot_f32_neon(int64_t n, const void* row, const void* act) {
  const float* w = static_cast<const float*>(row);
  const float* x = static_cast<const float*>(act);
  const int64_t n8 = n / 8 * 8;
  Lanes8 acc = zero8();
  for (int64_t i = 0; i < n8; i += 8) acc = add8(acc, mul8(load8(w + i), load8(x + i)));
  return finish_lanes(acc, n8, n, [w](int64_t i) { return w[i]; }, x);
}

float dot_f16_neon(int64_t n, const void* row, const void* act) {
  const uint16_t* w = static_cast<const uint16_t*>(row);
  const float* x = static_cast<const float*>(act);
  const int64_t n8 = n / 8 * 8;
  Lanes8 acc = zero8();
  for (int64_t i = 0; i < n8; i += 8) acc = add8(acc, mul8(f16_to_f32_8(w + i), load8(x + i)));
  return finish_lanes(acc, n8, n, [w](int64_t i) { return f16_to_f32(w[i]); }, x);
}

float dot_bf16_neon(int64_t n, const void* row, const void* act) {
  const uint16_t* w = static_cast<const uint16_t*>(row);
  const float* x = static_cast<const float*>(act);
  const int64_t n8 = n / 8 * 8;
  Lanes8 acc = zero8();
  for (int64_t i = 0; i < n8; i += 8) {
    const uint16x8_t h = vld1q_u16(w + i);
    const Lanes8 wf = {vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(h), 16)),  // bf16 is an f32's top half
                       vreinterpretq_f32_u32(vshll_high_n_u16(h, 16))};
    acc = add8(acc, mul8(wf, load8(x + i)));
  }
  return finish_lanes(acc, n8, n, [w](int64_t i) { return bf16_to_f32(w[i]); }, x);
}

// ---- integer block sums ----------------------------------------------------------

// acc + Σ w_i·x_i over 16 signed bytes, as 4 partial int32 sums (exact: a
// byte product fits int16 and pairs of them are added in int32).
inline int32x4_t dot_i8x16(int32x4_t acc, int8x16_t w, int8x16_t x) {
#if defined(__ARM_FEATURE_DOTPROD)
  return vdotq_s32(acc, w, x);
#else
  acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(w), vget_low_s8(x)));
  return vpadalq_s16(acc, vmull_high_s8(w, x));
#endif
}

// Σ w_i·x_i over a 32-element block whose weights are given as two halves
// of 16 signed bytes (elements 0..15 and 16..31).
inline int32_t block_sum32(int8x16_t w_lo, int8x16_t w_hi, const int8_t* x) {
  const int32x4_t s = dot_i8x16(dot_i8x16(vdupq_n_s32(0), w_lo, vld1q_s8(x)), w_hi, vld1q_s8(x + 16));
  return vaddvq_s32(s);
}

inline int32_t block_sum_q8_0(const BlockQ8_0& w, const BlockQ8_0& x) {
  return block_sum32(vld1q_s8(w.qs), vld1q_s8(w.qs + 16), x.qs);
}

// Q4_0: low nibbles are elements 0..15, high nibbles 16..31, each minus 8.
inline int32_t block_sum_q4_0(const BlockQ4_0& w, const BlockQ8_0& x) {
  const uint8x16_t packed = vld1q_u8(w.qs);
  const int8x16_t eight = vdupq_n_s8(8);
  const int8x16_t lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(packed, vdupq_n_u8(15))), eight);
  const int8x16_t hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(packed, 4)), eight);
  return block_sum32(lo, hi, x.qs);
}

// Q5_0: Q4_0's nibbles plus bit i of the little-endian u32 qh on top, minus 16.
inline int32_t block_sum_q5_0(const BlockQ5_0& w, const BlockQ8_0& x) {
  // Byte i/8 of qh into element i, then test bit i % 8.
  const uint8x16_t bit = vreinterpretq_u8_u64(vdupq_n_u64(0x8040201008040201ull));
  const uint8x16_t spread_lo = vcombine_u8(vdup_n_u8(w.qh[0]), vdup_n_u8(w.qh[1]));
  const uint8x16_t spread_hi = vcombine_u8(vdup_n_u8(w.qh[2]), vdup_n_u8(w.qh[3]));
  const uint8x16_t sixteen = vdupq_n_u8(16);
  const uint8x16_t high_lo = vandq_u8(vtstq_u8(spread_lo, bit), sixteen);
  const uint8x16_t high_hi = vandq_u8(vtstq_u8(spread_hi, bit), sixteen);
  const uint8x16_t packed = vld1q_u8(w.qs);
  const uint8x16_t lo = vorrq_u8(vandq_u8(packed, vdupq_n_u8(15)), high_lo);
  const uint8x16_t hi = vorrq_u8(vshrq_n_u8(packed, 4), high_hi);
  return block_sum32(vsubq_s8(vreinterpretq_s8_u8(lo), vreinterpretq_s8_u8(sixteen)),
                     vsubq_s8(vreinterpretq_s8_u8(hi), vreinterpretq_s8_u8(sixteen)), x.qs);
}

// ---- Q8_0-activation types: term = (d_w·d_x)·sum into lane (block % 8) ---------

template <typename Block, int32_t (*block_sum)(const Block&, const BlockQ8_0&)>
float dot_blocks_q8_0(int64_t n, const void* row, const void* act) {
  const Block* w = static_cast<const Block*>(row);
  const BlockQ8_0* x = static_cast<const BlockQ8_0*>(act);
  const int64_t nb = n / kQK, nb8 = nb / 8 * 8;
  Lanes8 acc = zero8();
  for (int64_t ib = 0; ib < nb8; ib += 8) {
    int32_t sums[8];
    uint16_t dw[8], dx[8];
    for (int j = 0; j < 8; ++j) {
      sums[j] = block_sum(w[ib + j], x[ib + j]);
      dw[j] = w[ib + j].d;
      dx[j] = x[ib + j].d;
    }
    const Lanes8 d = mul8(f16_to_f32_8(dw), f16_to_f32_8(dx));
    acc = add8(acc, mul8(d, to_float8(sums)));
  }
  float lanes[8];
  store8(acc, lanes);
  for (int64_t ib = nb8; ib < nb; ++ib) {
    const float term = (f16_to_f32(w[ib].d) * f16_to_f32(x[ib].d)) * static_cast<float>(block_sum(w[ib], x[ib]));
    lanes[ib % 8] += term;
  }
  return sum_lanes8(lanes);
}

// ---- K-quants (Q8_K activations): one term per 256-element super-block -----------

// Q6_K: Σ_j scales[j]·Σ_{16 elements of j} q·x with q = 6-bit code − 32.
// Element 128h + 32g + l: nibble (g >> 1) of ql[64h + 32(g & 1) + l], plus
// bits 2g..2g+1 of qh[32h + l] on top.
inline int32_t block_sum_q6_K(const BlockQ6_K& w, const BlockQ8_K& x) {
  const uint8x16_t mask4 = vdupq_n_u8(15), mask2 = vdupq_n_u8(3);
  const int8x16_t bias = vdupq_n_s8(32);
  int32x4_t sum = vdupq_n_s32(0);
  for (int h = 0; h < 2; ++h) {
    for (int l = 0; l < 32; l += 16) {  // 16 elements of each group g: sub-block 8h + 2g + l/16
      const uint8x16_t ql0 = vld1q_u8(w.ql + 64 * h + l), ql1 = vld1q_u8(w.ql + 64 * h + 32 + l);
      const uint8x16_t qh = vld1q_u8(w.qh + 32 * h + l);
      const uint8x16_t low[4] = {vandq_u8(ql0, mask4), vandq_u8(ql1, mask4), vshrq_n_u8(ql0, 4), vshrq_n_u8(ql1, 4)};
      const uint8x16_t high[4] = {vandq_u8(qh, mask2), vandq_u8(vshrq_n_u8(qh, 2), mask2),
                                  vandq_u8(vshrq_n_u8(qh, 4), mask2), vshrq_n_u8(qh, 6)};
      for (int g = 0; g < 4; ++g) {
        const int8x16_t q = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(low[g], vshlq_n_u8(high[g], 4))), bias);
        const int32x4_t part = dot_i8x16(vdupq_n_s32(0), q, vld1q_s8(x.qs + 128 * h + 32 * g + l));
        sum = vmlaq_n_s32(sum, part, w.scales[8 * h + 2 * g + l / 16]);  // integer: exact
      }
    }
  }
  return vaddvq_s32(sum);
}

float dot_q6_K_neon(int64_t n, const void* row, const void* act) {
  const BlockQ6_K* w = static_cast<const BlockQ6_K*>(row);
  const BlockQ8_K* x = static_cast<const BlockQ8_K*>(act);
  const int64_t nb = n / kQK_K, nb8 = nb / 8 * 8;
  Lanes8 acc = zero8();
  for (int64_t ib = 0; ib < nb8; ib += 8) {
    int32_t sums[8];
    uint16_t dw[8];
    float dx[8];
    for (int j = 0; j < 8; ++j) {
      sums[j] = block_sum_q6_K(w[ib + j], x[ib + j]);
      dw[j] = w[ib + j].d;
      dx[j] = x[ib + j].d;
    }
    const Lanes8 d = mul8(load8(dx), f16_to_f32_8(dw));
    acc = add8(acc, mul8(d, to_float8(sums)));
  }
  float lanes[8];
  store8(acc, lanes);
  for (int64_t ib = nb8; ib < nb; ++ib) {
    const float term = (x[ib].d * f16_to_f32(w[ib].d)) * static_cast<float>(block_sum_q6_K(w[ib], x[ib]));
    lanes[ib % 8] += term;
  }
  return sum_lanes8(lanes);
}

// Q4_K: sumi = Σ_j sc_j·Σ_{32 elements of j} q·x with q in [0, 15] (sub-block
// j is nibble j % 2 of qs[32·(j / 2) ..]), and summ = Σ_j m_j·(bsums[2j] +
// bsums[2j+1]); term = (dx·d)·sumi − (dx·dmin)·summ.
inline void block_sums_q4_K(const BlockQ4_K& w, const BlockQ8_K& x, int32_t* sumi, int32_t* summ) {
  const uint8x16_t mask4 = vdupq_n_u8(15);
  int32x4_t sum = vdupq_n_s32(0);
  int32_t mins = 0;
  for (int c = 0; c < 4; ++c) {
    const uint8x16_t qs0 = vld1q_u8(w.qs + 32 * c), qs1 = vld1q_u8(w.qs + 32 * c + 16);
    for (int half = 0; half < 2; ++half) {
      const int j = 2 * c + half;
      int sc, m;
      k4_scale_min(w.scales, j, &sc, &m);
      const uint8x16_t q0 = half ? vshrq_n_u8(qs0, 4) : vandq_u8(qs0, mask4);
      const uint8x16_t q1 = half ? vshrq_n_u8(qs1, 4) : vandq_u8(qs1, mask4);
      const int8_t* xq = x.qs + 32 * j;
      int32x4_t part = dot_i8x16(vdupq_n_s32(0), vreinterpretq_s8_u8(q0), vld1q_s8(xq));
      part = dot_i8x16(part, vreinterpretq_s8_u8(q1), vld1q_s8(xq + 16));
      sum = vmlaq_n_s32(sum, part, sc);  // integer: exact
      mins += m * (x.bsums[2 * j] + x.bsums[2 * j + 1]);
    }
  }
  *sumi = vaddvq_s32(sum);
  *summ = mins;
}

float dot_q4_K_neon(int64_t n, const void* row, const void* act) {
  const BlockQ4_K* w = static_cast<const BlockQ4_K*>(row);
  const BlockQ8_K* x = static_cast<const BlockQ8_K*>(act);
  const int64_t nb = n / kQK_K, nb8 = nb / 8 * 8;
  Lanes8 acc = zero8();
  for (int64_t ib = 0; ib < nb8; ib += 8) {
    int32_t sumi[8], summ[8];
    uint16_t d[8], dmin[8];
    float dx[8];
    for (int j = 0; j < 8; ++j) {
      block_sums_q4_K(w[ib + j], x[ib + j], &sumi[j], &summ[j]);
      d[j] = w[ib + j].d;
      dmin[j] = w[ib + j].dmin;
      dx[j] = x[ib + j].d;
    }
    const Lanes8 dxv = load8(dx);
    const Lanes8 t1 = mul8(mul8(dxv, f16_to_f32_8(d)), to_float8(sumi));
    const Lanes8 t2 = mul8(mul8(dxv, f16_to_f32_8(dmin)), to_float8(summ));
    acc = add8(acc, sub8(t1, t2));
  }
  float lanes[8];
  store8(acc, lanes);
  for (int64_t ib = nb8; ib < nb; ++ib) {
    int32_t sumi, summ;
    block_sums_q4_K(w[ib], x[ib], &sumi, &summ);
    const float dx = x[ib].d;
    const float term = (dx * f16_to_f32(w[ib].d)) * static_cast<float>(sumi) -
                       (dx * f16_to_f32(w[ib].dmin)) * static_cast<float>(summ);
    lanes[ib % 8] += term;
  }
  return sum_lanes8(lanes);
}

constexpr DotKernel kNeonKernels[] = {
    {TensorType::kF32, dot_f32_neon},
    {TensorType::kF16, dot_f16_neon},
    {TensorType::kBF16, dot_bf16_neon},
    {TensorType::kQ8_0, dot_blocks_q8_0<BlockQ8_0, block_sum_q8_0>},
    {TensorType::kQ4_0, dot_blocks_q8_0<BlockQ4_0, block_sum_q4_0>},
    {TensorType::kQ5_0, dot_blocks_q8_0<BlockQ5_0, block_sum_q5_0>},
    {TensorType::kQ4_K, dot_q4_K_neon},
    {TensorType::kQ6_K, dot_q6_K_neon},
};

}  // namespace

const DotKernel* neon_dot_kernels(size_t* count) {
  *count = sizeof(kNeonKernels) / sizeof(kNeonKernels[0]);
  return kNeonKernels;
}

}  // namespace wllm

#else  // not aarch64 with NEON

namespace wllm {
const DotKernel* neon_dot_kernels(size_t* count) {
  *count = 0;
  return nullptr;
}
}  // namespace wllm

#endif
