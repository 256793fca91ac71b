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

// Q4_0/Q4_1 nibbles: low nibbles are elements 0..15, high nibbles 16..31.
inline void nibbles(const uint8_t* qs, uint8x16_t* lo, uint8x16_t* hi) {
  const uint8x16_t packed = vld1q_u8(qs);
  *lo = vandq_u8(packed, vdupq_n_u8(15));
  *hi = vshrq_n_u8(packed, 4);
}

// Q5_0/Q5_1 codes 0..31: the nibbles plus bit i of the little-endian u32 qh on top.
template <typename Block>
inline void q5_codes(const Block& w, uint8x16_t* lo, uint8x16_t* hi) {
  // Byte i/8 of qh into element i, then test bit i % 8.
  const uint8x16_t bit = vreinterpretq_u8_u64(vdupq_n_u64(0x8040201008040201ull));
  const uint8x16_t spread_lo = vcombine_u8(vdup_n_u8(w.qh[0]), vdup_n_u8(w.qh[1]));
  const uint8x16_t spread_hi = vcombine_u8(vdup_n_u8(w.qh[2]), vdup_n_u8(w.qh[3]));
  const uint8x16_t sixteen = vdupq_n_u8(16);
  nibbles(w.qs, lo, hi);
  *lo = vorrq_u8(*lo, vandq_u8(vtstq_u8(spread_lo, bit), sixteen));
  *hi = vorrq_u8(*hi, vandq_u8(vtstq_u8(spread_hi, bit), sixteen));
}

// Q4_0: the nibbles minus 8.
inline int32_t block_sum_q4_0(const BlockQ4_0& w, const BlockQ8_0& x) {
  uint8x16_t lo, hi;
  nibbles(w.qs, &lo, &hi);
  const int8x16_t eight = vdupq_n_s8(8);
  return block_sum32(vsubq_s8(vreinterpretq_s8_u8(lo), eight), vsubq_s8(vreinterpretq_s8_u8(hi), eight), x.qs);
}

// Q5_0: the codes minus 16.
inline int32_t block_sum_q5_0(const BlockQ5_0& w, const BlockQ8_0& x) {
  uint8x16_t lo, hi;
  q5_codes(w, &lo, &hi);
  const int8x16_t sixteen = vdupq_n_s8(16);
  return block_sum32(vsubq_s8(vreinterpretq_s8_u8(lo), sixteen), vsubq_s8(vreinterpretq_s8_u8(hi), sixteen), x.qs);
}

// Q4_1, Q5_1: codes as they are (0..31 fit int8), against Q8_1.
inline int32_t block_sum_q4_1(const BlockQ4_1& w, const BlockQ8_1& x) {
  uint8x16_t lo, hi;
  nibbles(w.qs, &lo, &hi);
  return block_sum32(vreinterpretq_s8_u8(lo), vreinterpretq_s8_u8(hi), x.qs);
}

inline int32_t block_sum_q5_1(const BlockQ5_1& w, const BlockQ8_1& x) {
  uint8x16_t lo, hi;
  q5_codes(w, &lo, &hi);
  return block_sum32(vreinterpretq_s8_u8(lo), vreinterpretq_s8_u8(hi), x.qs);
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

// ---- Q8_1-activation types: term = (d_w·d_x)·sum + m_w·s_x into lane (block % 8) --

// Their codes carry no offset: the min comes back through the activation's
// s = d_x·Σ x.
template <typename Block, int32_t (*block_sum)(const Block&, const BlockQ8_1&)>
float dot_blocks_q8_1(int64_t n, const void* row, const void* act) {
  const Block* w = static_cast<const Block*>(row);
  const BlockQ8_1* x = static_cast<const BlockQ8_1*>(act);
  const int64_t nb = n / kQK, nb8 = nb / 8 * 8;
  Lanes8 acc = zero8();
  for (int64_t ib = 0; ib < nb8; ib += 8) {
    int32_t sums[8];
    uint16_t dw[8], dx[8], mw[8], sx[8];
    for (int j = 0; j < 8; ++j) {
      sums[j] = block_sum(w[ib + j], x[ib + j]);
      dw[j] = w[ib + j].d;
      dx[j] = x[ib + j].d;
      mw[j] = w[ib + j].m;
      sx[j] = x[ib + j].s;
    }
    const Lanes8 scaled = mul8(mul8(f16_to_f32_8(dw), f16_to_f32_8(dx)), to_float8(sums));
    acc = add8(acc, add8(scaled, mul8(f16_to_f32_8(mw), f16_to_f32_8(sx))));
  }
  float lanes[8];
  store8(acc, lanes);
  for (int64_t ib = nb8; ib < nb; ++ib) {
    const float scaled = (f16_to_f32(w[ib].d) * f16_to_f32(x[ib].d)) * static_cast<float>(block_sum(w[ib], x[ib]));
    const float term = scaled + f16_to_f32(w[ib].m) * f16_to_f32(x[ib].s);
    lanes[ib % 8] += term;
  }
  return sum_lanes8(lanes);
}

// ---- K-quants (Q8_K activations): one term per 256-element super-block -----------
//
// Every K-quant type goes through one integer scheme: per 16-element
// sub-block j, its signed codes q (offset removed, k_codes) dotted with the
// activation bytes, times the sub-block's integer scale (k_scales16 in
// blocks.h): sumi = Σ_j sc_j·Σ q·x; the types with mins add summ =
// Σ_j m_j·bsums[j].

// Bytes of v shifted right by `bits` (a run-time count: USHL by a negative amount).
inline uint8x16_t shift_right(uint8x16_t v, int bits) { return vshlq_u8(v, vdupq_n_s8(static_cast<int8_t>(-bits))); }

// The signed codes of sub-block j (elements 16j..16j+15), as blocks.h lays
// them out; l = 16·(j % 2) is where they start within their 32-byte rows.
// Q2_K: bits 2g..2g+1 of qs[32h + l] with h = j / 8, g = (j / 2) % 4.
inline uint8x16_t two_bits(const uint8_t qs[64], int j) {
  const int h = j / 8, g = (j / 2) % 4, l = 16 * (j % 2);
  return vandq_u8(shift_right(vld1q_u8(qs + 32 * h + l), 2 * g), vdupq_n_u8(3));
}
inline int8x16_t k_codes(const BlockQ2_K& b, int j) { return vreinterpretq_s8_u8(two_bits(b.qs, j)); }

// Q3_K: Q2_K's bits, minus 4 where bit j / 2 of hmask[l] is clear.
inline int8x16_t k_codes(const BlockQ3_K& b, int j) {
  const uint8x16_t high = vandq_u8(shift_right(vld1q_u8(b.hmask + 16 * (j % 2)), j / 2), vdupq_n_u8(1));
  const uint8x16_t u = vorrq_u8(two_bits(b.qs, j), vshlq_n_u8(high, 2));
  return vsubq_s8(vreinterpretq_s8_u8(u), vdupq_n_s8(4));
}

// Q4_K: nibble s % 2 of qs[32(s / 2) + l], s = j / 2 the 32-element sub-block.
inline uint8x16_t k4_nibbles(const uint8_t qs[128], int j) {
  const int s = j / 2, l = 16 * (j % 2);
  const uint8x16_t packed = vld1q_u8(qs + 32 * (s / 2) + l);
  return s % 2 ? vshrq_n_u8(packed, 4) : vandq_u8(packed, vdupq_n_u8(15));
}
inline int8x16_t k_codes(const BlockQ4_K& b, int j) { return vreinterpretq_s8_u8(k4_nibbles(b.qs, j)); }

// Q5_K: Q4_K's nibble plus bit s of qh[l] on top.
inline int8x16_t k_codes(const BlockQ5_K& b, int j) {
  const uint8x16_t high = vandq_u8(shift_right(vld1q_u8(b.qh + 16 * (j % 2)), j / 2), vdupq_n_u8(1));
  return vreinterpretq_s8_u8(vorrq_u8(k4_nibbles(b.qs, j), vshlq_n_u8(high, 4)));
}

// Q6_K (h = j / 8, g = (j / 2) % 4): nibble g / 2 of ql[64h + 32(g % 2) + l],
// plus bits 2g..2g+1 of qh[32h + l] on top, minus 32.
inline int8x16_t k_codes(const BlockQ6_K& b, int j) {
  const int h = j / 8, g = (j / 2) % 4, l = 16 * (j % 2);
  const uint8x16_t ql = vld1q_u8(b.ql + 64 * h + 32 * (g % 2) + l);
  const uint8x16_t low = g / 2 ? vshrq_n_u8(ql, 4) : vandq_u8(ql, vdupq_n_u8(15));
  const uint8x16_t high = vandq_u8(shift_right(vld1q_u8(b.qh + 32 * h + l), 2 * g), vdupq_n_u8(3));
  return vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(low, vshlq_n_u8(high, 4))), vdupq_n_s8(32));
}

// sumi and (types with mins) summ of one block; exact integers.
template <typename Block>
inline void block_sums_k(const Block& w, const BlockQ8_K& x, int32_t* sumi, int32_t* summ) {
  int16_t sc[16], m[16];
  k_scales16(w, sc, m);
  int32x4_t sum = vdupq_n_s32(0);
  for (int j = 0; j < 16; j += kScaleRun<Block> / 16) {  // the sub-blocks that share scale sc[j]
    int32x4_t part = dot_i8x16(vdupq_n_s32(0), k_codes(w, j), vld1q_s8(x.qs + 16 * j));
    if constexpr (kScaleRun<Block> == 32) part = dot_i8x16(part, k_codes(w, j + 1), vld1q_s8(x.qs + 16 * j + 16));
    sum = vmlaq_n_s32(sum, part, sc[j]);  // integer: exact
  }
  *sumi = vaddvq_s32(sum);
  *summ = 0;
  if constexpr (requires { w.dmin; }) {
    const int16x8_t b0 = vld1q_s16(x.bsums), b1 = vld1q_s16(x.bsums + 8);
    const int16x8_t m0 = vld1q_s16(m), m1 = vld1q_s16(m + 8);
    int32x4_t mins = vmull_s16(vget_low_s16(b0), vget_low_s16(m0));
    mins = vmlal_high_s16(mins, b0, m0);
    mins = vmlal_s16(mins, vget_low_s16(b1), vget_low_s16(m1));
    *summ = vaddvq_s32(vmlal_high_s16(mins, b1, m1));
  }
}

// term = (dx·d)·sumi, minus (dx·dmin)·summ for the types with mins (ref.h),
// eight blocks per step.
template <typename Block>
float dot_k_quant(int64_t n, const void* row, const void* act) {
  constexpr bool kMins = requires(const Block& b) { b.dmin; };
  const Block* w = static_cast<const Block*>(row);
  const BlockQ8_K* x = static_cast<const BlockQ8_K*>(act);
  const int64_t nb = n / kQK_K, nb8 = nb / 8 * 8;
  Lanes8 acc = zero8();
  for (int64_t ib = 0; ib < nb8; ib += 8) {
    int32_t sumi[8], summ[8];
    uint16_t d[8], dmin[8] = {};
    float dx[8];
    for (int j = 0; j < 8; ++j) {
      block_sums_k(w[ib + j], x[ib + j], &sumi[j], &summ[j]);
      d[j] = w[ib + j].d;
      if constexpr (kMins) dmin[j] = w[ib + j].dmin;
      dx[j] = x[ib + j].d;
    }
    const Lanes8 dxv = load8(dx);
    const Lanes8 t1 = mul8(mul8(dxv, f16_to_f32_8(d)), to_float8(sumi));
    if constexpr (kMins) {
      acc = add8(acc, sub8(t1, mul8(mul8(dxv, f16_to_f32_8(dmin)), to_float8(summ))));
    } else {
      acc = add8(acc, t1);
    }
  }
  float lanes[8];
  store8(acc, lanes);
  for (int64_t ib = nb8; ib < nb; ++ib) {
    int32_t sumi, summ;
    block_sums_k(w[ib], x[ib], &sumi, &summ);
    const float dx = x[ib].d;
    float term = (dx * f16_to_f32(w[ib].d)) * static_cast<float>(sumi);
    if constexpr (kMins) term = term - (dx * f16_to_f32(w[ib].dmin)) * static_cast<float>(summ);
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
    {TensorType::kQ4_1, dot_blocks_q8_1<BlockQ4_1, block_sum_q4_1>},
    {TensorType::kQ5_1, dot_blocks_q8_1<BlockQ5_1, block_sum_q5_1>},
    {TensorType::kQ2_K, dot_k_quant<BlockQ2_K>},
    {TensorType::kQ3_K, dot_k_quant<BlockQ3_K>},
    {TensorType::kQ4_K, dot_k_quant<BlockQ4_K>},
    {TensorType::kQ5_K, dot_k_quant<BlockQ5_K>},
    {TensorType::kQ6_K, dot_k_quant<BlockQ6_K>},
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
