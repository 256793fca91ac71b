// Quantized block layouts, byte for byte those of ggml (ggml/src/ggml-common.h),
// so tensors in a GGUF file written by llama.cpp decode identically here.
//
// Conventions in the comments below: `f16` is an IEEE half stored as uint16_t
// (convert with f16_to_f32 from core/half.h), q is the element's unsigned
// code as stored, y is the decoded float. "Element i" counts from 0 within the
// block. Multi-bit fields are little-endian as in ggml.
//
// Blocks are read through pointers to these structs, so a row must start at an
// address aligned to alignof(block) (2, or 4 for BlockQ8_K); GGUF's 32-byte
// tensor alignment and our arena give that.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

namespace wllm {

constexpr int kQK = 32;     // elements in a Q4_0/Q4_1/Q5_0/Q5_1/Q8_0/Q8_1 block
constexpr int kQK_K = 256;  // elements in a K-quant super-block

// Q4_0 {f16 d; u8 qs[16]}: qs[j] low nibble = element j, high nibble = j+16.
// y = (q - 8) * d
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ4_0) == 18, "block_q4_0 size");

// Q4_1 {f16 d; f16 m; u8 qs[16]}: nibbles as Q4_0.  y = q * d + m
struct BlockQ4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ4_1) == 20, "block_q4_1 size");

// Q5_0 {f16 d; u8 qh[4]; u8 qs[16]}: low 4 bits as Q4_0, bit 4 of element i is
// bit i of the little-endian u32 qh.  y = (q - 16) * d
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ5_0) == 22, "block_q5_0 size");

// Q5_1 {f16 d; f16 m; u8 qh[4]; u8 qs[16]}: bits as Q5_0.  y = q * d + m
struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ5_1) == 24, "block_q5_1 size");

// Q8_0 {f16 d; i8 qs[32]}: qs[i] = element i.  y = q * d
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[kQK];
};
static_assert(sizeof(BlockQ8_0) == 34, "block_q8_0 size");

// Q4_0x8: 8 Q4_0 rows interleaved block by block (repack.h), the layout the
// SIMD128 kernels read with 4 rows in the 4 lanes of a vector: block ib of
// rows 8g..8g+7 is {f16 d[8]; u8 qs[2][64]}, d[k] row 8g+k's scale; half h
// holds rows 4h..4h+3 as 8 chunks of 8 bytes, chunk c = bytes 2c and 2c+1 of
// row 4h+k's qs at 2k, 2k+1. The same 144 bytes as the 8 rows' Q4_0 blocks.
// Q4_0x8i4, for the relaxed-SIMD kernels, is the same struct with 4-byte
// chunks: half h as 4 chunks of 16 bytes, chunk c = bytes 4c..4c+3 of row
// 4h+k's qs at 4k..4k+3, so one 4-byte group per lane meets the relaxed dot.
struct BlockQ4_0x8 {
  uint16_t d[8];
  uint8_t qs[2][64];
};
static_assert(sizeof(BlockQ4_0x8) == 8 * sizeof(BlockQ4_0), "block_q4_0x8 size");

// Q8_0x8: the same for 8 Q8_0 rows, {f16 d[8]; i8 qs[2][128]}: 16 chunks of
// 8 bytes per half, chunk c = bytes 2c and 2c+1 of row 4h+k's qs at 2k, 2k+1.
struct BlockQ8_0x8 {
  uint16_t d[8];
  int8_t qs[2][128];
};
static_assert(sizeof(BlockQ8_0x8) == 8 * sizeof(BlockQ8_0), "block_q8_0x8 size");

// Q5_0x8: 8 Q5_0 rows as {f16 d[8]; u16 qs[2][5][8]}: half h holds rows
// 4h..4h+3 as 5 vectors of 8 16-bit words, word 2k + j of vector v row
// 4h + k's codes (0..31) of elements 6v + j, 6v + 2 + j and 6v + 4 + j in
// bits 0..4, 5..9 and 10..14, and bit v of element 30 + j's code in bit 15.
// So every code bit has a place and the kernel takes 3 codes per word with
// arithmetic shifts alone (repacked_simd128.cpp).
struct BlockQ5_0x8 {
  uint16_t d[8];
  uint16_t qs[2][5][8];
};
static_assert(sizeof(BlockQ5_0x8) == 8 * sizeof(BlockQ5_0), "block_q5_0x8 size");

// Q5_0x8i4: 8 Q5_0 rows for the relaxed-SIMD kernels, {f16 d[8]; u8 qh[2][16];
// u8 qs[2][64]}: qs as Q4_0x8i4's (chunk c of half h = bytes 4c..4c+3 of row
// 4h+k's qs at 4k..4k+3), and qh[h][4k + j] row 4h+k's fifth bits of the
// elements chunk c's byte j holds: bit c that of element 4c + j (low nibble),
// bit 4 + c that of element 16 + 4c + j (high nibble). So one 16-bit shift
// and a mask move chunk c's fifth bits to bit 4 of each code byte. The same
// 176 bytes as the 8 rows' Q5_0 blocks.
struct BlockQ5_0x8i4 {
  uint16_t d[8];
  uint8_t qh[2][16];
  uint8_t qs[2][64];
};
static_assert(sizeof(BlockQ5_0x8i4) == 8 * sizeof(BlockQ5_0), "block_q5_0x8i4 size");

// Q8_1 {f16 d; f16 s; i8 qs[32]} (activations only): s = f16(d_f32 * Σ qs), with
// d_f32 the scale before rounding to f16, as ggml.  y = q * d
struct BlockQ8_1 {
  uint16_t d;
  uint16_t s;
  int8_t qs[kQK];
};
static_assert(sizeof(BlockQ8_1) == 36, "block_q8_1 size");

// Q2_K {u8 scales[16]; u8 qs[64]; f16 d; f16 dmin}: element i has sub-block
// j = i/16 with scales[j] = sc | m << 4, and 2-bit q = (qs[32*(i/128) + i%32] >> 2*((i%128)/32)) & 3.
// y = (d * sc) * q - dmin * m
struct BlockQ2_K {
  uint8_t scales[kQK_K / 16];
  uint8_t qs[kQK_K / 4];
  uint16_t d;
  uint16_t dmin;
};
static_assert(sizeof(BlockQ2_K) == 84, "block_q2_K size");

// Q3_K {u8 hmask[32]; u8 qs[64]; u8 scales[12]; f16 d}: low 2 bits as Q2_K, high
// bit h = (hmask[i%32] >> i/32) & 1; sub-block j = i/16 has a 6-bit scale sc
// packed as q3_K_scale() below.  y = (d * (sc - 32)) * (q2 - (h ? 0 : 4))
struct BlockQ3_K {
  uint8_t hmask[kQK_K / 8];
  uint8_t qs[kQK_K / 4];
  uint8_t scales[12];
  uint16_t d;
};
static_assert(sizeof(BlockQ3_K) == 110, "block_q3_K size");

// Q4_K {f16 d; f16 dmin; u8 scales[12]; u8 qs[128]}: sub-block j = i/32 has
// 6-bit sc, m packed as k4_scale_min(); q = (qs[32*(i/64) + i%32] >> 4*((i%64)/32)) & 15.
// y = (d * sc) * q - dmin * m
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ4_K) == 144, "block_q4_K size");

// Q5_K {f16 d; f16 dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]}: as Q4_K plus
// bit 4 of element i = (qh[i%32] >> i/32) & 1.  y = (d * sc) * q - dmin * m
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[kQK_K / 8];
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ5_K) == 176, "block_q5_K size");

// Q6_K {u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d}: for h = i/128, g = (i%128)/32,
// l = i%32: low 4 bits = (ql[64h + 32*(g&1) + l] >> 4*(g>>1)) & 15, high 2 bits =
// (qh[32h + l] >> 2g) & 3; sub-block j = i/16 has scale scales[j].
// y = (d * scales[j]) * (q - 32)
struct BlockQ6_K {
  uint8_t ql[kQK_K / 2];
  uint8_t qh[kQK_K / 4];
  int8_t scales[kQK_K / 16];
  uint16_t d;
};
static_assert(sizeof(BlockQ6_K) == 210, "block_q6_K size");

// Q6_Kx8: 8 Q6_K rows interleaved block by block for the wasm kernels (SIMD128
// and relaxed SIMD; repack.h), in the order they read it, so decode streams
// each block forward (with ql, qh and the scales in separate regions, as the
// file has them, the relaxed matvec ran far slower out of cache than in it;
// docs/performance.md).
// After the scales d[8], the block is [h][n][r]: half h (rows 4h..4h+3),
// part n (elements 128n..128n+127), quarter r (chunks c = 4r..4r+3). Each
// holds 4 steps, step c: ql[0] and ql[1] = bytes 64n + 4c.. and 64n + 32 + 4c..
// of the rows' ql, qh = bytes 32n + 4c.. of their qh (row 4h+k at bytes
// 4k..4k+3 of each), then scales[g][k]: row 4h+k's scale of sub-block
// 8n + 2g + r, which those steps' elements 128n + 32g + 4c.. belong to. A
// step's ql low nibbles are elements 128n + 4c.. (g = 0) and 128n + 32 + 4c..
// (g = 1), its high nibbles those + 64 (g = 2, 3), and its qh bits 2g, 2g + 1
// their top 2 bits. The same 1680 bytes as the 8 rows' Q6_K blocks.
struct BlockQ6_Kx8 {
  struct Step {
    uint8_t ql[2][16];
    uint8_t qh[16];
  };
  struct Quarter {
    Step steps[4];
    int8_t scales[4][4];
  };
  uint16_t d[8];
  Quarter quarters[2][2][2];  // [h][n][r]
};
static_assert(sizeof(BlockQ6_Kx8) == 8 * sizeof(BlockQ6_K), "block_q6_Kx8 size");

// Q4_Kx8: 8 Q4_K rows interleaved block by block for SIMD128 (repack.h),
// {f16 d[8]; f16 dmin[8]; u8 scales[2][48]; u8 qs[8][2][64]}, 4 rows (a half
// h: rows 4h..4h+3) in the lanes of a vector. scales[h] is 3 vectors: vector
// w holds word w (bytes 4w..4w+3) of row 4h+k's 12 scale bytes at 4k. qs[s][h]
// is sub-block s (elements 32s..32s+31) of the half's rows in 8 chunks of 8
// bytes, chunk c = bytes 2c, 2c+1 of row 4h+k's codes at 2k, 2k+1, where a
// row's code byte l (0..15) holds element l of the sub-block in its low nibble
// and element l + 16 in its high nibble (as a Q4_0 block's). A sub-block's two
// halves sit side by side because the SIMD128 kernel reads them together (with
// the halves apart, its decode ran far slower out of cache than in it;
// docs/performance.md). The same 1152 bytes as the 8 rows' Q4_K blocks.
// Q4_Kx8i4 (relaxed SIMD) has 4-byte chunks instead, as Q4_0x8i4: 4 chunks of
// 16 bytes per sub-block and half.
struct BlockQ4_Kx8 {
  uint16_t d[8];
  uint16_t dmin[8];
  uint8_t scales[2][48];
  uint8_t qs[8][2][64];
};
static_assert(sizeof(BlockQ4_Kx8) == 8 * sizeof(BlockQ4_K), "block_q4_Kx8 size");

// Q8_K {f32 d; i8 qs[256]; i16 bsums[16]} (activations only): bsums[j] = Σ of
// qs[16j .. 16j+15], so K-quant dots get their min terms without touching qs.
// y = q * d
struct BlockQ8_K {
  float d;
  int8_t qs[kQK_K];
  int16_t bsums[kQK_K / 16];
};
static_assert(sizeof(BlockQ8_K) == 292, "block_q8_K size");

// Decoding the packed scales, shared by every ISA so there is one copy of it.

// Q4_K/Q5_K: 6-bit scale and min of sub-block j (0..7) from the 12 scale bytes.
// j < 4: sc = s[j] & 63, m = s[j+4] & 63; j >= 4: low 4 bits in s[j+4] (sc low
// nibble, m high nibble), top 2 bits in the top bits of s[j-4] (sc) and s[j] (m).
inline void k4_scale_min(const uint8_t s[12], int j, int* sc, int* m) {
  if (j < 4) {
    *sc = s[j] & 63;
    *m = s[j + 4] & 63;
  } else {
    *sc = (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4);
    *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

// Q4_K/Q5_K: all 8 scales and mins at once, out[j] = sc_j and out[8 + j] = m_j
// as k4_scale_min gives them, for SIMD kernels to load as one vector. Word by
// word (ggml's utmp trick): bytes 0..3 keep their low 6 bits; bytes 4..7 take
// the nibbles of s[8..11] and the top bits of s[0..3] (scales) or s[4..7] (mins).
inline void k4_scales_mins(const uint8_t s[12], uint8_t out[16]) {
  static_assert(std::endian::native == std::endian::little, "words hold the bytes in format order");
  constexpr uint32_t kLow6 = 0x3f3f3f3f, kLow4 = 0x0f0f0f0f, kLow2 = 0x03030303;
  uint32_t w[3];
  std::memcpy(w, s, 12);
  const uint32_t words[4] = {w[0] & kLow6, (w[2] & kLow4) | (((w[0] >> 6) & kLow2) << 4), w[1] & kLow6,
                             ((w[2] >> 4) & kLow4) | (((w[1] >> 6) & kLow2) << 4)};
  std::memcpy(out, words, 16);
}

// Q3_K: 6-bit scale of sub-block j (0..15), still biased by 32. Low 4 bits are
// the low (j < 8) or high (j >= 8) nibble of s[j % 8]; top 2 bits are bits
// 2*(j/4) .. 2*(j/4)+1 of s[8 + j%4].
inline int q3_K_scale(const uint8_t s[12], int j) {
  const int low = j < 8 ? (s[j] & 15) : (s[j - 8] >> 4);
  const int high = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
  return low | (high << 4);
}

// Q3_K: all 16 scales at once, out[j] = q3_K_scale(s, j), for SIMD kernels to
// load as one vector. Word by word: the low nibbles of s[0..7], then their
// high nibbles, each byte with its 2-bit top from s[8..11] (bits 0..1 of
// s[8..11] for scales 0..3, bits 2..3 for 4..7, and so on).
inline void q3_K_scales(const uint8_t s[12], uint8_t out[16]) {
  static_assert(std::endian::native == std::endian::little, "words hold the bytes in format order");
  constexpr uint32_t kLow4 = 0x0f0f0f0f, kLow2 = 0x03030303;
  uint32_t w[3];
  std::memcpy(w, s, 12);
  const uint32_t words[4] = {(w[0] & kLow4) | ((w[2] & kLow2) << 4), (w[1] & kLow4) | (((w[2] >> 2) & kLow2) << 4),
                             ((w[0] >> 4) & kLow4) | (((w[2] >> 4) & kLow2) << 4),
                             ((w[1] >> 4) & kLow4) | (((w[2] >> 6) & kLow2) << 4)};
  std::memcpy(out, words, 16);
}

// Any K-quant's sub-block scales as plain integers, for SIMD kernels that
// scale 16 elements at a time: sc[j] and m[j] for elements 16j..16j+15 (a
// 32-element Q4_K/Q5_K sub-block's values stand in both of its halves; Q3_K's
// bias removed; m = 0 for the types without mins).
inline void k_scales16(const BlockQ2_K& b, int16_t sc[16], int16_t m[16]) {
  for (int j = 0; j < 16; ++j) {
    sc[j] = static_cast<int16_t>(b.scales[j] & 15);
    m[j] = static_cast<int16_t>(b.scales[j] >> 4);
  }
}

inline void k_scales16(const BlockQ3_K& b, int16_t sc[16], int16_t m[16]) {
  uint8_t biased[16];
  q3_K_scales(b.scales, biased);
  for (int j = 0; j < 16; ++j) {
    sc[j] = static_cast<int16_t>(biased[j] - 32);
    m[j] = 0;
  }
}

template <typename Block>  // Q4_K, Q5_K
inline void k4_scales16(const Block& b, int16_t sc[16], int16_t m[16]) {
  uint8_t sm[16];
  k4_scales_mins(b.scales, sm);
  for (int j = 0; j < 16; ++j) {
    sc[j] = sm[j / 2];
    m[j] = sm[8 + j / 2];
  }
}
inline void k_scales16(const BlockQ4_K& b, int16_t sc[16], int16_t m[16]) { k4_scales16(b, sc, m); }
inline void k_scales16(const BlockQ5_K& b, int16_t sc[16], int16_t m[16]) { k4_scales16(b, sc, m); }

inline void k_scales16(const BlockQ6_K& b, int16_t sc[16], int16_t m[16]) {
  for (int j = 0; j < 16; ++j) {
    sc[j] = b.scales[j];
    m[j] = 0;
  }
}

// How many elements of a K-quant block share one scale: 32 in Q4_K and Q5_K,
// 16 in the others.
template <typename Block>
inline constexpr int kScaleRun = 16;
template <>
inline constexpr int kScaleRun<BlockQ4_K> = 32;
template <>
inline constexpr int kScaleRun<BlockQ5_K> = 32;

}  // namespace wllm
