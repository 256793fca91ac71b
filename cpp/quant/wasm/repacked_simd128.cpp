// SIMD128 kernels for weights repacked at load (repack.h): Q4_0, Q5_0, Q8_0,
// Q4_K and Q6_K rows as Q4_0x8, Q5_0x8, Q8_0x8, Q4_Kx8 and Q6_Kx8
// (blocks.h). Each vector holds 4 rows, one per lane: a chunk of a block (2
// bytes of each of the 4 rows, widened to 8 int16 as it loads; Q5_0x8: 2
// words of each) meets the activation's matching 2 elements (splatted) in
// i32x4.dot_i16x8, which adds each row's products into that row's own lane.
// So a block's 4 row sums come out in one vector with no horizontal
// reduction, and the 8 rows' scales are one 16-byte load. The arithmetic per row is the dot's (traits.h): exact
// int32 block sums, the block's float term into lane block % 8, the
// reference's final reduction.
#include "quant/kernels.h"

#if defined(__wasm_simd128__)

#include <algorithm>

#include "quant/wasm/repacked_driver.h"
#include "quant/wasm/simd128.h"

namespace wllm::simd128 {
namespace {

// Adds blocks [c0, c1) of one group of 8 rows (w: its first block) against
// kActs activations (x[a]: those blocks prepared) into acc[a][h][block % 8]
// (lane k: row 4h + k), for the formats made of 32-element blocks with one
// scale each and Q8_0 activations (Format::chunk below). The chunk loop is
// outside the activation loop so the compiler can share each chunk's weight
// load between activations. (Fully unrolling it made Q4_0x8 and Q5_0x8
// slower: spills.)
template <typename Format, int kActs, typename Prepared>
void add_group_blocks(const typename Format::Packed* w, const Prepared* const* x, int64_t c0, int64_t c1,
                      v128_t acc[][2][8]) {
  for (int64_t ib = c0; ib < c1; ++ib) {
    v128_t sum[kActs][2];
    for (auto& s : sum) s[0] = s[1] = wasm_i32x4_splat(0);
    for (int c = 0; c < Format::kChunks; ++c) {
      for (int a = 0; a < kActs; ++a) {
        for (int h = 0; h < 2; ++h) sum[a][h] = wasm_i32x4_add(sum[a][h], Format::chunk(w[ib], h, c, x[a][ib - c0]));
      }
    }
    v128_t dw[2];
    f16x8_to_f32(wasm_v128_load(w[ib].d), &dw[0], &dw[1]);
    for (int a = 0; a < kActs; ++a) {
      const Prepared& p = x[a][ib - c0];
      const v128_t dx = wasm_f32x4_splat(p.d), offset = wasm_i32x4_splat(Format::kOffset * p.sum);
      for (int h = 0; h < 2; ++h) {
        const v128_t isum = wasm_i32x4_sub(sum[a][h], offset);
        const v128_t term = wasm_f32x4_mul(wasm_f32x4_mul(dw[h], dx), wasm_f32x4_convert_i32x4(isum));
        acc[a][h][ib % 8] = wasm_f32x4_add(acc[a][h][ib % 8], term);
      }
    }
  }
}

// Every format tells run_groups its activation's block type and how that is
// prepared (Act, Prepared, kBlock, prepare) and how its blocks add up
// (add_blocks). The Q8_0 formats share all of it but the chunk (and Q5_0x8
// its prepared activation).
template <typename Format, typename PreparedBlock = PreparedQ8_0>
struct Q8_0Blocks {
  using Act = BlockQ8_0;
  using Prepared = PreparedBlock;
  static constexpr int kBlock = kQK;
  static constexpr int kGemmActs = 4;  // activations per gemm tile
  static void prepare(const BlockQ8_0* x, int64_t count, Prepared* out) { prepare_q8_0(x, count, out); }
  template <int kActs, typename Packed>  // Packed: Format::Packed, which is not complete here yet
  static void add_blocks(const Packed* w, const Prepared* const* x, int64_t c0, int64_t c1, v128_t acc[][2][8]) {
    add_group_blocks<Format, kActs>(w, x, c0, c1, acc);
  }
};

// What differs between the Q8_0 formats: how a chunk (2 bytes of each of a
// half's 4 rows) adds its products, and what the sums exceed Σ code·x by.
// Elements 2c and 2c+1 of the activation as int16 pairs are at byte 4c of
// PreparedQ8_0's q (and of high_minus, for Q4_0's elements 16 + 2c, 17 + 2c).
struct Q4_0x8Format : Q8_0Blocks<Q4_0x8Format> {
  using Packed = BlockQ4_0x8;
  static constexpr int kChunks = 8;
  static constexpr int32_t kOffset = 8;  // per unit of Σx
  // The packed bytes b as they load (PreparedQ8_0 says why):
  // b·x_low + (b >> 4)·(x_high − 16·x_low).
  static v128_t chunk(const Packed& w, int h, int c, const PreparedQ8_0& p) {
    const v128_t b = wasm_u16x8_load8x8(w.qs[h] + 8 * c);
    const v128_t x_low = wasm_v128_load32_splat(reinterpret_cast<const uint8_t*>(p.q) + 4 * c);
    const v128_t x_high = wasm_v128_load32_splat(reinterpret_cast<const uint8_t*>(p.high_minus) + 4 * c);
    return wasm_i32x4_add(wasm_i32x4_dot_i16x8(b, x_low), wasm_i32x4_dot_i16x8(wasm_u16x8_shr(b, 4), x_high));
  }
};

// Q5_0x8 (blocks.h): a word w holds codes c0, c1, c2 in bits 0..14 and one
// bit b of element 30's or 31's code in bit 15. As a signed int16,
// w = c0 + 32·c1 + 1024·c2 − 32768·b, and its arithmetic shifts are
// w >> 5 = c1 + 32·c2 − 1024·b, w >> 10 = c2 − 32·b, w >> 15 = −b; so
// w·a0 + (w >> 5)·a1 + (w >> 10)·a2 + (w >> 15)·a3 = Σ code·x when
// a0 = x0, a1 = x1 − 32·x0, a2 = x2 − 32·x1 and a3 = −32·x2 − 2^v·x_last
// (vector v carries bit v). PreparedQ5_0 holds those a's, which fit int16
// (|a| ≤ 48·127), so 3 codes take 4 int16 dots and 3 shifts, no masks.
struct PreparedQ5_0 {
  v128_t a[5];  // vector v: a0..a3 as int16 pairs (even word, odd word)
  float d;
  int32_t sum;  // Σ of the 32 bytes
};

struct Q5_0x8Format : Q8_0Blocks<Q5_0x8Format, PreparedQ5_0> {
  using Packed = BlockQ5_0x8;
  static constexpr int kChunks = 5;
  static constexpr int32_t kOffset = 16;

  static void prepare(const BlockQ8_0* x, int64_t count, PreparedQ5_0* out) {
    for (int64_t ib = 0; ib < count; ++ib) {
      PreparedQ5_0& p = out[ib];
      PreparedQ8_0 base;  // the bytes as int16 (q), d and sum
      prepare_q8_0(x + ib, 1, &base);
      const int16_t* q = reinterpret_cast<const int16_t*>(base.q);
      const v128_t zero = wasm_i16x8_splat(0);
      for (int v = 0; v < 5; ++v) {
        // x[6v .. 6v + 5], x[30], x[31]: each word's x0 x1 x2 (pairs 0..2) and x_last.
        const v128_t xs = wasm_i16x8_shuffle(wasm_v128_load(q + 6 * v), base.q[3], 0, 1, 2, 3, 4, 5, 14, 15);
        const v128_t previous = wasm_i16x8_shuffle(xs, zero, 8, 8, 0, 1, 2, 3, 4, 5);  // 0, x0, x1, x2 per pair
        const v128_t last = wasm_i16x8_shuffle(xs, zero, 8, 8, 8, 8, 8, 8, 6, 7);      // 0, 0, 0, x_last
        const v128_t a = wasm_i16x8_sub(xs, wasm_i16x8_shl(previous, 5));
        p.a[v] = wasm_i16x8_sub(a, wasm_i16x8_add(last, wasm_i16x8_shl(last, v)));
      }
      p.sum = base.sum;
      p.d = base.d;
    }
  }

  static v128_t chunk(const Packed& w, int h, int v, const PreparedQ5_0& p) {
    const v128_t word = wasm_v128_load(w.qs[h][v]);
    const uint8_t* a = reinterpret_cast<const uint8_t*>(&p.a[v]);
    const v128_t low = wasm_i32x4_add(wasm_i32x4_dot_i16x8(word, wasm_v128_load32_splat(a)),
                                      wasm_i32x4_dot_i16x8(wasm_i16x8_shr(word, 5), wasm_v128_load32_splat(a + 4)));
    const v128_t high = wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_i16x8_shr(word, 10), wasm_v128_load32_splat(a + 8)),
                                       wasm_i32x4_dot_i16x8(wasm_i16x8_shr(word, 15), wasm_v128_load32_splat(a + 12)));
    return wasm_i32x4_add(low, high);
  }
};

struct Q8_0x8Format : Q8_0Blocks<Q8_0x8Format> {
  using Packed = BlockQ8_0x8;
  static constexpr int kChunks = 16;
  static constexpr int32_t kOffset = 0;
  static v128_t chunk(const Packed& w, int h, int c, const PreparedQ8_0& p) {
    const v128_t x = wasm_v128_load32_splat(reinterpret_cast<const uint8_t*>(p.q) + 4 * c);
    return wasm_i32x4_dot_i16x8(wasm_i16x8_load8x8(w.qs[h] + 8 * c), x);
  }
};

// Q4_Kx8 against Q8_K. A sub-block's code bytes are laid out as a Q4_0
// block's, so it adds up as Q4_0x8's chunks do (with the activation's
// sub-block prepared as a Q8_0 block is) into its own sums; each row's are
// then scaled by the row's 6-bit sub-block scale (i32x4.mul) into sumi. The
// mins meet the activation's sub-block sums in int16 dots (summ). Then the
// reference's term = (d_x·d)·sumi − (d_x·dmin)·summ. Scales and mins are
// taken from the file's 12 bytes per row (held as 3 vectors of 4 rows'
// words, blocks.h) with shifts alone, at constant counts.
struct PreparedQ8_K {
  v128_t low[8][2];         // sub-block s: elements 0..15 as int16
  v128_t high_minus[8][2];  // its elements 16..31 as int16, minus 16·low
  int16_t sums[8];          // sub-block sums in the order the mins' dots take them: 0, 2, 1, 3, 4, 6, 5, 7
  float d;
};

struct Q4_Kx8Format {
  using Packed = BlockQ4_Kx8;
  using Act = BlockQ8_K;
  using Prepared = PreparedQ8_K;
  static constexpr int kBlock = kQK_K;
  // Activations per gemm tile: with 4, the sub-block sums and sumi of every
  // activation (16 vectors) no longer fit V8's registers, and the gemm ran
  // slower than with 2 (docs/performance.md).
  static constexpr int kGemmActs = 2;

  static void prepare(const BlockQ8_K* x, int64_t count, PreparedQ8_K* out) {
    for (int64_t ib = 0; ib < count; ++ib) {
      PreparedQ8_K& p = out[ib];
      for (int s = 0; s < 8; ++s) {
        for (int k = 0; k < 2; ++k) {
          p.low[s][k] = wasm_i16x8_load8x8(x[ib].qs + 32 * s + 8 * k);
          const v128_t high = wasm_i16x8_load8x8(x[ib].qs + 32 * s + 16 + 8 * k);
          p.high_minus[s][k] = wasm_i16x8_sub(high, wasm_i16x8_shl(p.low[s][k], 4));
        }
      }
      q4_Kx8_act_sums(x[ib], p.sums);
      p.d = x[ib].d;
    }
  }

  template <int kActs>
  static void add_blocks(const BlockQ4_Kx8* w, const PreparedQ8_K* const* x, int64_t c0, int64_t c1,
                         v128_t acc[][2][8]) {
    for (int64_t ib = c0; ib < c1; ++ib) {
      const BlockQ4_Kx8& b = w[ib];
      v128_t words[2][3], sc[2][8];
      for (int h = 0; h < 2; ++h) {
        for (int k = 0; k < 3; ++k) words[h][k] = wasm_v128_load(b.scales[h] + 16 * k);
        q4_Kx8_scales(words[h], sc[h]);
      }
      v128_t sumi[kActs][2];
      for (auto& s : sumi) s[0] = s[1] = wasm_i32x4_splat(0);
      for (int s = 0; s < 8; ++s) {
        v128_t sum[kActs][2];
        for (auto& v : sum) v[0] = v[1] = wasm_i32x4_splat(0);
        for (int c = 0; c < 8; ++c) {
          const v128_t bytes[2] = {wasm_u16x8_load8x8(b.qs[s][0] + 8 * c), wasm_u16x8_load8x8(b.qs[s][1] + 8 * c)};
          for (int a = 0; a < kActs; ++a) {
            const PreparedQ8_K& p = x[a][ib - c0];
            const v128_t x_low = wasm_v128_load32_splat(reinterpret_cast<const uint8_t*>(p.low[s]) + 4 * c);
            const v128_t x_high = wasm_v128_load32_splat(reinterpret_cast<const uint8_t*>(p.high_minus[s]) + 4 * c);
            for (int h = 0; h < 2; ++h) {
              const v128_t part = wasm_i32x4_add(wasm_i32x4_dot_i16x8(bytes[h], x_low),
                                                 wasm_i32x4_dot_i16x8(wasm_u16x8_shr(bytes[h], 4), x_high));
              sum[a][h] = wasm_i32x4_add(sum[a][h], part);
            }
          }
        }
        for (int a = 0; a < kActs; ++a) {
          for (int h = 0; h < 2; ++h) sumi[a][h] = wasm_i32x4_add(sumi[a][h], wasm_i32x4_mul(sum[a][h], sc[h][s]));
        }
      }
      v128_t d[2], dmin[2], pairs[2][4];
      f16x8_to_f32(wasm_v128_load(b.d), &d[0], &d[1]);
      f16x8_to_f32(wasm_v128_load(b.dmin), &dmin[0], &dmin[1]);
      for (int h = 0; h < 2; ++h) q4_Kx8_min_pairs(words[h], pairs[h]);
      for (int a = 0; a < kActs; ++a) {
        const PreparedQ8_K& p = x[a][ib - c0];
        const v128_t dx = wasm_f32x4_splat(p.d);
        for (int h = 0; h < 2; ++h) {
          const v128_t summ = q4_Kx8_min_total(pairs[h], p.sums);
          const v128_t t1 = wasm_f32x4_mul(wasm_f32x4_mul(dx, d[h]), wasm_f32x4_convert_i32x4(sumi[a][h]));
          const v128_t t2 = wasm_f32x4_mul(wasm_f32x4_mul(dx, dmin[h]), wasm_f32x4_convert_i32x4(summ));
          acc[a][h][ib % 8] = wasm_f32x4_add(acc[a][h][ib % 8], wasm_f32x4_sub(t1, t2));
        }
      }
    }
  }
};

// A Q8_K activation block for Q6_Kx8Format (repacked_driver.h) as int16
// pairs: a code vector's bytes 4k..4k+3 (row k's codes of elements e..e+3)
// are, as int16 lanes 2k and 2k + 1, its even bytes (w & 255: elements e and
// e + 2) and its odd ones (w >> 8: e + 1 and e + 3), so two i16 dots against
// the activation's (x_e, x_e+2) and (x_e+1, x_e+3) add each row's 4
// products into its own lane.
struct PreparedQ6Pairs {
  int16_t even[64][2];  // group j (elements 4j..4j+3): elements 4j and 4j + 2
  int16_t odd[64][2];   // elements 4j + 1 and 4j + 3
  int32_t minus_32_sums[16];
  float d;

  static void prepare_bytes(const BlockQ8_K& x, PreparedQ6Pairs& out) {
    for (int k = 0; k < 16; ++k) {  // elements 16k..16k+15: groups 4k..4k+3
      const v128_t bytes = wasm_v128_load(x.qs + 16 * k);
      const v128_t low = wasm_i16x8_extend_low_i8x16(bytes), high = wasm_i16x8_extend_high_i8x16(bytes);
      wasm_v128_store(out.even[4 * k], wasm_i16x8_shuffle(low, high, 0, 2, 4, 6, 8, 10, 12, 14));
      wasm_v128_store(out.odd[4 * k], wasm_i16x8_shuffle(low, high, 1, 3, 5, 7, 9, 11, 13, 15));
    }
  }
  static v128_t add(const PreparedQ6Pairs& p, int e, v128_t codes, v128_t sum) {
    const v128_t even = wasm_v128_and(codes, wasm_i16x8_splat(255)), odd = wasm_u16x8_shr(codes, 8);
    const v128_t products = wasm_i32x4_add(wasm_i32x4_dot_i16x8(even, wasm_v128_load32_splat(p.even[e / 4])),
                                           wasm_i32x4_dot_i16x8(odd, wasm_v128_load32_splat(p.odd[e / 4])));
    return wasm_i32x4_add(sum, products);
  }
};

// Activations per gemm tile: each step's codes serve all of them (the count
// measured fastest in Node, docs/performance.md).
using Simd128Q6_Kx8 = Q6_Kx8Format<PreparedQ6Pairs, 6>;

constexpr RepackedType kSimd128Repacked[] = {
    {"q4_0x8", TensorType::kQ4_0, 8, ref::repack_q4_0x8, ref::unpack_q4_0x8, matvec_8_rows<Q4_0x8Format>,
     gemm_8_rows<Q4_0x8Format>},
    {"q5_0x8", TensorType::kQ5_0, 8, ref::repack_q5_0x8, ref::unpack_q5_0x8, matvec_8_rows<Q5_0x8Format>,
     gemm_8_rows<Q5_0x8Format>},
    {"q8_0x8", TensorType::kQ8_0, 8, ref::repack_q8_0x8, ref::unpack_q8_0x8, matvec_8_rows<Q8_0x8Format>,
     gemm_8_rows<Q8_0x8Format>},
    {"q4_Kx8", TensorType::kQ4_K, 8, ref::repack_q4_Kx8, ref::unpack_q4_Kx8, matvec_8_rows<Q4_Kx8Format>,
     gemm_8_rows<Q4_Kx8Format>},
    {"q6_Kx8", TensorType::kQ6_K, 8, ref::repack_q6_Kx8, ref::unpack_q6_Kx8, matvec_8_rows<Simd128Q6_Kx8>,
     gemm_8_rows<Simd128Q6_Kx8>},
};

}  // namespace
}  // namespace wllm::simd128

namespace wllm {
const RepackedType* simd128_repacked_types(int* count) {
  *count = static_cast<int>(sizeof(simd128::kSimd128Repacked) / sizeof(simd128::kSimd128Repacked[0]));
  return simd128::kSimd128Repacked;
}
}  // namespace wllm

#else  // built without SIMD128

namespace wllm {
const RepackedType* simd128_repacked_types(int* count) {
  *count = 0;
  return nullptr;
}
}  // namespace wllm

#endif
