// Relaxed-SIMD kernels for weights repacked at load (repack.h), built only
// into the relaxed wasm variant (-mrelaxed-simd; clang 19 compiles this file,
// see CMakeLists.txt). i32x4.relaxed_dot_i8x16_i7x16_add multiplies 16 signed
// bytes by 16 bytes and adds each lane's 4 products to it: one instruction
// where the i16 dot (repacked_simd128.cpp) takes a widening and a dot per 8
// products (V8 on x86 runs it as one vpdpbusd). Its result is
// implementation-defined only when a byte of the second operand has its top
// bit set; these kernels only pass codes there (0..15, 0..31 for q5_0, 0..63
// for q6_K) or ones, so every engine computes the same exact integer sums,
// and the rest is the dot's arithmetic (traits.h): the same bits as every
// other build.
//
// Q4_0 rows go into Q4_0x8i4 (blocks.h): 4 bytes of each of 4 rows per
// vector, so one relaxed dot adds 4 codes × 4 activation bytes into each
// row's own lane. Q4_K rows go into Q4_Kx8i4, whose sub-blocks are laid out
// the same. Q6_K rows go into Q6_Kx8 (blocks.h) as for SIMD128, one relaxed
// dot taking the place of two i16 dots. Q5_0 (Q5_0x8i4) takes its fifth bits
// from a per-half vector: it gains on the prompt's gemm, not on decode (the
// bits cost what the dots save). Q8_0 keeps SIMD128's Q8_0x8: a relaxed
// layout (the activation split by sign so that the weights' signed bytes go in
// as they are, two relaxed dots per 16 products) gained too little to keep.
// Speeds against SIMD128: docs/performance.md, "Measurements behind the code".
#include "quant/kernels.h"

#if defined(__wasm_relaxed_simd__)

#include <vector>

#include "quant/wasm/repacked_driver.h"
#include "quant/wasm/simd128.h"

namespace wllm::simd128 {
namespace {

// A Q8_0 activation block as the relaxed dot reads it: its 32 bytes as they
// are, its scale and the sum of its bytes.
struct PreparedBytesQ8_0 {
  v128_t q[2];
  float d;
  int32_t sum;
};

void prepare_bytes_q8_0(const BlockQ8_0* x, int64_t count, PreparedBytesQ8_0* out) {
  const v128_t ones = wasm_i8x16_splat(1);
  for (int64_t ib = 0; ib < count; ++ib) {
    PreparedBytesQ8_0& p = out[ib];
    p.q[0] = wasm_v128_load(x[ib].qs);
    p.q[1] = wasm_v128_load(x[ib].qs + 16);
    const v128_t sums = wasm_i32x4_relaxed_dot_i8x16_i7x16_add(p.q[0], ones, wasm_i32x4_splat(0));
    p.sum = total(wasm_i32x4_relaxed_dot_i8x16_i7x16_add(p.q[1], ones, sums));
    p.d = f16_to_f32(x[ib].d);
  }
}

// The layouts of 32-element blocks with one scale and unsigned codes, against
// Q8_0: Σ (u − kOffset)·x = Σ u·x − kOffset·Σx, so each row's sum starts at
// −kOffset·Σx and adds the codes' products. Chunk c of a half holds bytes
// 4c..4c+3 of its 4 rows (Layout::codes gives their codes): elements 4c..4c+3
// (low) and 16 + 4c.. (high), against the activation's bytes at 4c and
// 16 + 4c splatted to every lane.
template <typename Layout>
struct UnsignedCodesFormat : Layout {
  using Packed = typename Layout::Packed;
  using Act = BlockQ8_0;
  using Prepared = PreparedBytesQ8_0;
  static constexpr int kBlock = kQK;

  static void prepare(const BlockQ8_0* x, int64_t count, Prepared* out) { prepare_bytes_q8_0(x, count, out); }

  // The halves one after the other keep the live vectors within V8's 16
  // registers. One activation has two sum chains (low and high codes), as
  // a chain of dependent relaxed dots waits on each one's latency; with more
  // activations their chains overlap.
  template <int kActs>
  static void add_blocks(const Packed* w, const Prepared* const* x, int64_t c0, int64_t c1, v128_t acc[][2][8]) {
    constexpr int kChains = kActs == 1 ? 2 : 1;
    for (int64_t ib = c0; ib < c1; ++ib) {
      v128_t dw[2];
      f16x8_to_f32(wasm_v128_load(w[ib].d), &dw[0], &dw[1]);
      for (int h = 0; h < 2; ++h) {
        v128_t sum[kChains][kActs];
        for (int a = 0; a < kActs; ++a) {
          sum[0][a] = wasm_i32x4_splat(-Layout::kOffset * x[a][ib - c0].sum);
          if (kChains == 2) sum[kChains - 1][a] = wasm_i32x4_splat(0);
        }
        for (int c = 0; c < 4; ++c) {
          v128_t low, high;
          Layout::codes(w[ib], h, c, &low, &high);
          for (int a = 0; a < kActs; ++a) {
            const uint8_t* q = reinterpret_cast<const uint8_t*>(x[a][ib - c0].q);
            sum[0][a] = wasm_i32x4_relaxed_dot_i8x16_i7x16_add(wasm_v128_load32_splat(q + 4 * c), low, sum[0][a]);
            sum[kChains - 1][a] = wasm_i32x4_relaxed_dot_i8x16_i7x16_add(wasm_v128_load32_splat(q + 16 + 4 * c),
                                                                          high, sum[kChains - 1][a]);
          }
        }
        for (int a = 0; a < kActs; ++a) {
          const v128_t isum = kChains == 2 ? wasm_i32x4_add(sum[0][a], sum[kChains - 1][a]) : sum[0][a];
          const v128_t dx = wasm_f32x4_splat(x[a][ib - c0].d);
          const v128_t term = wasm_f32x4_mul(wasm_f32x4_mul(dw[h], dx), wasm_f32x4_convert_i32x4(isum));
          acc[a][h][ib % 8] = wasm_f32x4_add(acc[a][h][ib % 8], term);
        }
      }
    }
  }
};

// Q4_0x8i4: the nibbles of a chunk's bytes.
struct Q4_0x8i4Layout {
  using Packed = BlockQ4_0x8;
  static constexpr int32_t kOffset = 8;
  // Activations per gemm tile: the fastest count measured in Chromium (V8's
  // register allocation decides; docs/performance.md).
  static constexpr int kGemmActs = 4;
  static void codes(const Packed& b, int h, int c, v128_t* low, v128_t* high) {
    const v128_t bytes = wasm_v128_load(b.qs[h] + 16 * c);
    *low = wasm_v128_and(bytes, wasm_i8x16_splat(15));
    *high = wasm_v128_and(wasm_u16x8_shr(bytes, 4), wasm_i8x16_splat(15));
  }
};

// Q5_0x8i4: the nibbles, and bit 4 from the fifth bits (blocks.h: chunk c's
// in bits c and 4 + c of the half's qh bytes).
struct Q5_0x8i4Layout {
  using Packed = BlockQ5_0x8i4;
  static constexpr int32_t kOffset = 16;
  static constexpr int kGemmActs = 4;  // as measured in Chromium (docs/performance.md)
  static void codes(const Packed& b, int h, int c, v128_t* low, v128_t* high) {
    const v128_t bytes = wasm_v128_load(b.qs[h] + 16 * c), fifth = wasm_v128_load(b.qh[h]);
    const v128_t bit4 = wasm_i8x16_splat(16);
    *low = wasm_v128_or(wasm_v128_and(bytes, wasm_i8x16_splat(15)), wasm_v128_and(wasm_i16x8_shl(fifth, 4 - c), bit4));
    *high = wasm_v128_or(wasm_v128_and(wasm_u16x8_shr(bytes, 4), wasm_i8x16_splat(15)),
                         wasm_v128_and(wasm_u16x8_shr(fifth, c), bit4));
  }
};

// A Q8_K activation block as the relaxed dot reads it: its 256 bytes as they
// are, its sub-block sums (for the mins) and its scale.
struct PreparedBytesQ8_K {
  v128_t q[16];
  int16_t sums[8];  // in the order q4_Kx8_min_total takes them
  float d;
};

// Q4_Kx8i4 against Q8_K: each 32-element sub-block adds up as a Q4_0x8i4
// block does (without the −8), each row's sum then meets its 6-bit scale in
// i32x4.mul (sumi), the mins meet the activation's sub-block sums in int16
// dots (summ), and term = (d_x·d)·sumi − (d_x·dmin)·summ as the reference.
struct Q4_Kx8i4Format {
  using Packed = BlockQ4_Kx8;
  using Act = BlockQ8_K;
  using Prepared = PreparedBytesQ8_K;
  static constexpr int kBlock = kQK_K;
  // Activations per gemm tile: the fastest count measured in Chromium
  // (docs/performance.md).
  static constexpr int kGemmActs = 3;

  static void prepare(const BlockQ8_K* x, int64_t count, Prepared* out) {
    for (int64_t ib = 0; ib < count; ++ib) {
      for (int k = 0; k < 16; ++k) out[ib].q[k] = wasm_v128_load(x[ib].qs + 16 * k);
      q4_Kx8_act_sums(x[ib], out[ib].sums);
      out[ib].d = x[ib].d;
    }
  }

  // As UnsignedCodesFormat's: the halves in turn, two sum chains for one activation.
  template <int kActs>
  static void add_blocks(const Packed* w, const Prepared* const* x, int64_t c0, int64_t c1, v128_t acc[][2][8]) {
    constexpr int kChains = kActs == 1 ? 2 : 1;
    for (int64_t ib = c0; ib < c1; ++ib) {
      const BlockQ4_Kx8& b = w[ib];
      v128_t d[2], dmin[2];
      f16x8_to_f32(wasm_v128_load(b.d), &d[0], &d[1]);
      f16x8_to_f32(wasm_v128_load(b.dmin), &dmin[0], &dmin[1]);
      for (int h = 0; h < 2; ++h) {
        v128_t words[3];
        for (int k = 0; k < 3; ++k) words[k] = wasm_v128_load(b.scales[h] + 16 * k);
        v128_t sumi[kActs];
        for (v128_t& v : sumi) v = wasm_i32x4_splat(0);
#pragma clang loop unroll(full)
        for (int s = 0; s < 8; ++s) {
          v128_t sum[kChains][kActs];
          for (auto& chain : sum) {
            for (v128_t& v : chain) v = wasm_i32x4_splat(0);
          }
          for (int c = 0; c < 4; ++c) {
            const v128_t bytes = wasm_v128_load(b.qs[s][h] + 16 * c);
            const v128_t low = wasm_v128_and(bytes, wasm_i8x16_splat(15));
            const v128_t high = wasm_v128_and(wasm_u16x8_shr(bytes, 4), wasm_i8x16_splat(15));
            for (int a = 0; a < kActs; ++a) {
              const uint8_t* q = reinterpret_cast<const uint8_t*>(x[a][ib - c0].q) + 32 * s;
              sum[0][a] = wasm_i32x4_relaxed_dot_i8x16_i7x16_add(wasm_v128_load32_splat(q + 4 * c), low, sum[0][a]);
              sum[kChains - 1][a] = wasm_i32x4_relaxed_dot_i8x16_i7x16_add(wasm_v128_load32_splat(q + 16 + 4 * c),
                                                                            high, sum[kChains - 1][a]);
            }
          }
          const v128_t sc = q4_Kx8_scale(words, s);
          for (int a = 0; a < kActs; ++a) {
            const v128_t isum = kChains == 2 ? wasm_i32x4_add(sum[0][a], sum[kChains - 1][a]) : sum[0][a];
            sumi[a] = wasm_i32x4_add(sumi[a], wasm_i32x4_mul(isum, sc));
          }
        }
        v128_t pairs[4];
        q4_Kx8_min_pairs(words, pairs);
        for (int a = 0; a < kActs; ++a) {
          const Prepared& p = x[a][ib - c0];
          const v128_t dx = wasm_f32x4_splat(p.d);
          const v128_t t1 = wasm_f32x4_mul(wasm_f32x4_mul(dx, d[h]), wasm_f32x4_convert_i32x4(sumi[a]));
          const v128_t t2 =
              wasm_f32x4_mul(wasm_f32x4_mul(dx, dmin[h]), wasm_f32x4_convert_i32x4(q4_Kx8_min_total(pairs, p.sums)));
          acc[a][h][ib % 8] = wasm_f32x4_add(acc[a][h][ib % 8], wasm_f32x4_sub(t1, t2));
        }
      }
    }
  }
};

// A Q8_K activation block for Q6_Kx8Format (repacked_driver.h): its 256
// bytes as they are, the relaxed dot's first operand.
struct PreparedQ6Bytes {
  v128_t q[16];
  int32_t minus_32_sums[16];
  float d;

  static void prepare_bytes(const BlockQ8_K& x, PreparedQ6Bytes& out) {
    for (int k = 0; k < 16; ++k) out.q[k] = wasm_v128_load(x.qs + 16 * k);
  }
  // Adds the products of a code vector (row k's codes of elements e..e+3 at
  // bytes 4k..4k+3) into each row's lane: the activation's 4 bytes there,
  // splatted, in one relaxed dot.
  static v128_t add(const PreparedQ6Bytes& p, int e, v128_t codes, v128_t sum) {
    return wasm_i32x4_relaxed_dot_i8x16_i7x16_add(
        wasm_v128_load32_splat(reinterpret_cast<const uint8_t*>(p.q) + e), codes, sum);
  }
};

// Activations per gemm tile: the fastest count measured in Chromium
// (docs/performance.md).
using RelaxedQ6_Kx8 = Q6_Kx8Format<PreparedQ6Bytes, 3>;

constexpr RepackedType kRelaxedRepacked[] = {
    {"q4_0x8i4", TensorType::kQ4_0, 8, ref::repack_q4_0x8i4, ref::unpack_q4_0x8i4,
     matvec_8_rows<UnsignedCodesFormat<Q4_0x8i4Layout>>, gemm_8_rows<UnsignedCodesFormat<Q4_0x8i4Layout>>},
    {"q5_0x8i4", TensorType::kQ5_0, 8, ref::repack_q5_0x8i4, ref::unpack_q5_0x8i4,
     matvec_8_rows<UnsignedCodesFormat<Q5_0x8i4Layout>>, gemm_8_rows<UnsignedCodesFormat<Q5_0x8i4Layout>>},
    {"q4_Kx8i4", TensorType::kQ4_K, 8, ref::repack_q4_Kx8i4, ref::unpack_q4_Kx8i4, matvec_8_rows<Q4_Kx8i4Format>,
     gemm_8_rows<Q4_Kx8i4Format>},
    {"q6_Kx8", TensorType::kQ6_K, 8, ref::repack_q6_Kx8, ref::unpack_q6_Kx8, matvec_8_rows<RelaxedQ6_Kx8>,
     gemm_8_rows<RelaxedQ6_Kx8>},
};

}  // namespace
}  // namespace wllm::simd128

namespace wllm {

// The SIMD128 kernels: every type's dot, gemm and matvec there run as well
// here (relaxed SIMD adds instructions, it takes none away).
const DotKernel* relaxed_dot_kernels(size_t* count) { return simd128_dot_kernels(count); }

// The relaxed layouts, then SIMD128's for the types that have none here.
const RepackedType* relaxed_repacked_types(int* count) {
  static const std::vector<RepackedType> types = [] {
    std::vector<RepackedType> list(std::begin(simd128::kRelaxedRepacked), std::end(simd128::kRelaxedRepacked));
    int n = 0;
    const RepackedType* simd = simd128_repacked_types(&n);
    for (int i = 0; i < n; ++i) {
      bool covered = false;
      for (const RepackedType& own : simd128::kRelaxedRepacked) covered = covered || own.source == simd[i].source;
      if (!covered) list.push_back(simd[i]);
    }
    return list;
  }();
  *count = static_cast<int>(types.size());
  return types.data();
}

}  // namespace wllm

#else  // built without relaxed SIMD

namespace wllm {
const DotKernel* relaxed_dot_kernels(size_t* count) {
  *count = 0;
  return nullptr;
}
const RepackedType* relaxed_repacked_types(int* count) {
  *count = 0;
  return nullptr;
}
}  // namespace wllm

#endif
