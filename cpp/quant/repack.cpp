// Repacking (repack.h): the 8-row layouts' reference repack and unpack, their
// scalar reference kernels, and which repacked type the active ISA wants.
#include "quant/repack.h"

#include <cstring>
#include <vector>

#include "quant/blocks.h"
#include "quant/kernels.h"
#include "quant/ref/ref.h"

namespace wllm {

namespace ref {
namespace {

// Every layout's walk: rows 8g..8g+7 (nb Source blocks each, one row after
// another) <-> nb Packed blocks, in place through a copy of the group.
// pack(row r's block ib, r, packed block ib) fills in that row's share;
// unpack(packed block ib, r, row r's block ib) takes it back out.
template <typename Source, typename Packed, typename Pack>
void repack_groups(uint8_t* data, int64_t nb, int64_t n_rows, Pack pack) {
  std::vector<Source> rows(static_cast<size_t>(8 * nb));
  for (int64_t g = 0; g < n_rows / 8; ++g) {
    uint8_t* group = data + g * 8 * nb * static_cast<int64_t>(sizeof(Source));
    std::memcpy(rows.data(), group, rows.size() * sizeof(Source));
    Packed* out = reinterpret_cast<Packed*>(group);
    for (int64_t ib = 0; ib < nb; ++ib) {
      for (int r = 0; r < 8; ++r) pack(rows[static_cast<size_t>(r * nb + ib)], r, out[ib]);
    }
  }
}

template <typename Source, typename Packed, typename Unpack>
void unpack_groups(uint8_t* data, int64_t nb, int64_t n_rows, Unpack unpack) {
  std::vector<Packed> packed(static_cast<size_t>(nb));
  for (int64_t g = 0; g < n_rows / 8; ++g) {
    uint8_t* group = data + g * 8 * nb * static_cast<int64_t>(sizeof(Source));
    std::memcpy(packed.data(), group, packed.size() * sizeof(Packed));
    Source* rows = reinterpret_cast<Source*>(group);
    for (int64_t ib = 0; ib < nb; ++ib) {
      for (int r = 0; r < 8; ++r) unpack(packed[static_cast<size_t>(ib)], r, rows[r * nb + ib]);
    }
  }
}

// Q4_0, Q8_0 <-> their x8 blocks (blocks.h: scales, then per half of 4 rows
// chunks of kWidth bytes of each row's codes: chunk c holds bytes
// kWidth·c .. kWidth·c + kWidth − 1 of row 4h + k at kWidth·k).
template <typename Source, typename Packed, int kWidth>
void repack_rows(uint8_t* data, int64_t n, int64_t n_rows) {
  constexpr int kChunks = sizeof(Source::qs) / kWidth;
  repack_groups<Source, Packed>(data, n / kQK, n_rows, [](const Source& b, int r, Packed& out) {
    out.d[r] = b.d;
    for (int c = 0; c < kChunks; ++c) {
      std::memcpy(&out.qs[r / 4][4 * kWidth * c + kWidth * (r % 4)], &b.qs[kWidth * c], kWidth);
    }
  });
}

template <typename Source, typename Packed, int kWidth>
void unpack_rows(uint8_t* data, int64_t n, int64_t n_rows) {
  constexpr int kChunks = sizeof(Source::qs) / kWidth;
  unpack_groups<Source, Packed>(data, n / kQK, n_rows, [](const Packed& p, int r, Source& b) {
    b.d = p.d[r];
    for (int c = 0; c < kChunks; ++c) {
      std::memcpy(&b.qs[kWidth * c], &p.qs[r / 4][4 * kWidth * c + kWidth * (r % 4)], kWidth);
    }
  });
}

// Q5_0 rows <-> Q5_0x8 blocks (blocks.h): each row's 32 five-bit codes
// (low nibble from qs, fifth bit from qh, as the dot reads them) go into its
// 10 words, 3 codes per word plus one bit of element 30's or 31's code.
void q5_0_codes(const BlockQ5_0& b, uint8_t codes[32]) {
  uint32_t qh;
  std::memcpy(&qh, b.qh, 4);  // little-endian, as the file
  for (int i = 0; i < 16; ++i) {
    codes[i] = static_cast<uint8_t>((b.qs[i] & 15) | ((qh >> i) & 1) << 4);
    codes[i + 16] = static_cast<uint8_t>((b.qs[i] >> 4) | ((qh >> (i + 16)) & 1) << 4);
  }
}

void set_q5_0_codes(const uint8_t codes[32], BlockQ5_0& b) {
  uint32_t qh = 0;
  for (int i = 0; i < 16; ++i) {
    b.qs[i] = static_cast<uint8_t>((codes[i] & 15) | (codes[i + 16] & 15) << 4);
    qh |= static_cast<uint32_t>(codes[i] >> 4) << i | static_cast<uint32_t>(codes[i + 16] >> 4) << (i + 16);
  }
  std::memcpy(b.qh, &qh, 4);
}

void repack_q5_0_rows(uint8_t* data, int64_t n, int64_t n_rows) {
  repack_groups<BlockQ5_0, BlockQ5_0x8>(data, n / kQK, n_rows, [](const BlockQ5_0& b, int r, BlockQ5_0x8& out) {
    uint8_t codes[32];
    q5_0_codes(b, codes);
    out.d[r] = b.d;
    for (int v = 0; v < 5; ++v) {
      for (int j = 0; j < 2; ++j) {
        const int e = 6 * v + j;
        out.qs[r / 4][v][2 * (r % 4) + j] = static_cast<uint16_t>(
            codes[e] | codes[e + 2] << 5 | codes[e + 4] << 10 | ((codes[30 + j] >> v) & 1) << 15);
      }
    }
  });
}

void unpack_q5_0_rows(uint8_t* data, int64_t n, int64_t n_rows) {
  unpack_groups<BlockQ5_0, BlockQ5_0x8>(data, n / kQK, n_rows, [](const BlockQ5_0x8& p, int r, BlockQ5_0& b) {
    uint8_t codes[32] = {};
    for (int v = 0; v < 5; ++v) {
      for (int j = 0; j < 2; ++j) {
        const int e = 6 * v + j, word = p.qs[r / 4][v][2 * (r % 4) + j];
        for (int t = 0; t < 3; ++t) codes[e + 2 * t] = static_cast<uint8_t>(word >> (5 * t) & 31);
        codes[30 + j] = static_cast<uint8_t>(codes[30 + j] | (word >> 15) << v);
      }
    }
    b.d = p.d[r];
    set_q5_0_codes(codes, b);
  });
}

// Q5_0 rows <-> Q5_0x8i4 blocks (blocks.h): qs in 4-byte chunks, each row's
// 32 fifth bits regrouped by the byte of a chunk that holds their element.
void repack_q5_0i4_rows(uint8_t* data, int64_t n, int64_t n_rows) {
  repack_groups<BlockQ5_0, BlockQ5_0x8i4>(data, n / kQK, n_rows, [](const BlockQ5_0& b, int r, BlockQ5_0x8i4& out) {
    const int h = r / 4, k = r % 4;
    uint32_t qh;
    std::memcpy(&qh, b.qh, 4);  // little-endian, as the file
    out.d[r] = b.d;
    for (int j = 0; j < 4; ++j) {
      uint8_t bits = 0;
      for (int c = 0; c < 4; ++c) bits |= ((qh >> (4 * c + j)) & 1) << c | ((qh >> (16 + 4 * c + j)) & 1) << (4 + c);
      out.qh[h][4 * k + j] = bits;
    }
    for (int c = 0; c < 4; ++c) std::memcpy(&out.qs[h][16 * c + 4 * k], &b.qs[4 * c], 4);
  });
}

void unpack_q5_0i4_rows(uint8_t* data, int64_t n, int64_t n_rows) {
  unpack_groups<BlockQ5_0, BlockQ5_0x8i4>(data, n / kQK, n_rows, [](const BlockQ5_0x8i4& p, int r, BlockQ5_0& b) {
    const int h = r / 4, k = r % 4;
    uint32_t qh = 0;
    for (int j = 0; j < 4; ++j) {
      const uint32_t bits = p.qh[h][4 * k + j];
      for (int c = 0; c < 4; ++c) qh |= ((bits >> c) & 1) << (4 * c + j) | ((bits >> (4 + c)) & 1) << (16 + 4 * c + j);
    }
    b.d = p.d[r];
    std::memcpy(b.qh, &qh, 4);
    for (int c = 0; c < 4; ++c) std::memcpy(&b.qs[4 * c], &p.qs[h][16 * c + 4 * k], 4);
  });
}

// Q4_K rows <-> Q4_Kx8 blocks (blocks.h). A Q4_K block keeps sub-blocks 2t
// and 2t + 1 in the low and high nibbles of the same 32 bytes q; Q4_Kx8 gives
// each its own 16 bytes, elements l and l + 16 in byte l. Eight bytes at a
// time, as 64-bit words (load time: TinyLlama's 490 MiB of Q4_K).
constexpr uint64_t kLowNibbles = 0x0f0f0f0f0f0f0f0full;

void split_q4_K_pair(const uint8_t q[32], uint8_t even[16], uint8_t odd[16]) {
  for (int i = 0; i < 16; i += 8) {
    uint64_t lo, hi;  // bytes i.. and 16 + i..
    std::memcpy(&lo, q + i, 8);
    std::memcpy(&hi, q + 16 + i, 8);
    const uint64_t e = (lo & kLowNibbles) | (hi & kLowNibbles) << 4;
    const uint64_t o = (lo >> 4 & kLowNibbles) | (hi & ~kLowNibbles);
    std::memcpy(even + i, &e, 8);
    std::memcpy(odd + i, &o, 8);
  }
}

void join_q4_K_pair(const uint8_t even[16], const uint8_t odd[16], uint8_t q[32]) {
  for (int i = 0; i < 16; i += 8) {
    uint64_t e, o;
    std::memcpy(&e, even + i, 8);
    std::memcpy(&o, odd + i, 8);
    const uint64_t lo = (e & kLowNibbles) | (o & kLowNibbles) << 4;
    const uint64_t hi = (e >> 4 & kLowNibbles) | (o & ~kLowNibbles);
    std::memcpy(q + i, &lo, 8);
    std::memcpy(q + 16 + i, &hi, 8);
  }
}

// kWidth: the bytes of a row per chunk, as for Q4_0x8 (2, or 4 for i4).
template <int kWidth>
void repack_q4_K_rows(uint8_t* data, int64_t n, int64_t n_rows) {
  repack_groups<BlockQ4_K, BlockQ4_Kx8>(data, n / kQK_K, n_rows, [](const BlockQ4_K& b, int r, BlockQ4_Kx8& out) {
    const int h = r / 4, k = r % 4;
    out.d[r] = b.d;
    out.dmin[r] = b.dmin;
    for (int w = 0; w < 3; ++w) std::memcpy(&out.scales[h][16 * w + 4 * k], &b.scales[4 * w], 4);
    uint8_t codes[8][16];
    for (int t = 0; t < 4; ++t) split_q4_K_pair(b.qs + 32 * t, codes[2 * t], codes[2 * t + 1]);
    for (int sb = 0; sb < 8; ++sb) {
      for (int c = 0; c < 16 / kWidth; ++c) {
        std::memcpy(&out.qs[sb][h][4 * kWidth * c + kWidth * k], &codes[sb][kWidth * c], kWidth);
      }
    }
  });
}

template <int kWidth>
void unpack_q4_K_rows(uint8_t* data, int64_t n, int64_t n_rows) {
  unpack_groups<BlockQ4_K, BlockQ4_Kx8>(data, n / kQK_K, n_rows, [](const BlockQ4_Kx8& p, int r, BlockQ4_K& b) {
    const int h = r / 4, k = r % 4;
    b.d = p.d[r];
    b.dmin = p.dmin[r];
    for (int w = 0; w < 3; ++w) std::memcpy(&b.scales[4 * w], &p.scales[h][16 * w + 4 * k], 4);
    uint8_t codes[8][16];
    for (int sb = 0; sb < 8; ++sb) {
      for (int c = 0; c < 16 / kWidth; ++c) {
        std::memcpy(&codes[sb][kWidth * c], &p.qs[sb][h][4 * kWidth * c + kWidth * k], kWidth);
      }
    }
    for (int t = 0; t < 4; ++t) join_q4_K_pair(codes[2 * t], codes[2 * t + 1], b.qs + 32 * t);
  });
}

// Q6_K rows <-> Q6_Kx8 blocks (blocks.h): each row's ql and qh bytes in
// 4-byte chunks and its scales at its place in each quarter of its half.
template <bool kToPacked, typename Row, typename Packed>
void move_q6_K_row(Row& row, int r, Packed& out) {
  const int h = r / 4, k = r % 4;
  const auto move = [](auto* in_row, auto* in_packed, size_t bytes) {  // one way or the other
    if constexpr (kToPacked) {
      std::memcpy(in_packed, in_row, bytes);
    } else {
      std::memcpy(in_row, in_packed, bytes);
    }
  };
  move(&row.d, &out.d[r], 2);
  for (int n = 0; n < 2; ++n) {
    for (int q = 0; q < 2; ++q) {
      auto& quarter = out.quarters[h][n][q];
      for (int i = 0; i < 4; ++i) {
        const int c = 4 * q + i;
        for (int g = 0; g < 2; ++g) move(&row.ql[64 * n + 32 * g + 4 * c], &quarter.steps[i].ql[g][4 * k], 4);
        move(&row.qh[32 * n + 4 * c], &quarter.steps[i].qh[4 * k], 4);
      }
      for (int g = 0; g < 4; ++g) move(&row.scales[8 * n + 2 * g + q], &quarter.scales[g][k], 1);
    }
  }
}

void repack_q6_K_rows(uint8_t* data, int64_t n, int64_t n_rows) {
  repack_groups<BlockQ6_K, BlockQ6_Kx8>(data, n / kQK_K, n_rows, [](const BlockQ6_K& b, int r, BlockQ6_Kx8& out) {
    move_q6_K_row<true>(b, r, out);
  });
}

void unpack_q6_K_rows(uint8_t* data, int64_t n, int64_t n_rows) {
  unpack_groups<BlockQ6_K, BlockQ6_Kx8>(data, n / kQK_K, n_rows, [](const BlockQ6_Kx8& p, int r, BlockQ6_K& b) {
    move_q6_K_row<false>(b, r, p);
  });
}

// The reference kernels: each group unpacked into a copy, then the source
// type's reference dot row by row — what "bit for bit the type's dot" means.
template <UnpackFn kUnpack, DotFn kDot>
void matvec_unpacked(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out) {
  for (int g = 0; g < n_rows / 8; ++g) {
    const uint8_t* group = static_cast<const uint8_t*>(rows) + g * 8 * row_stride;
    std::vector<uint8_t> copy(group, group + 8 * row_stride);
    kUnpack(copy.data(), n, 8);
    for (int r = 0; r < 8; ++r) out[8 * g + r] = kDot(n, copy.data() + r * row_stride, act);
  }
}

template <UnpackFn kUnpack, DotFn kDot>
void gemm_unpacked(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts, int64_t act_stride,
                   int n_acts, float* out, int64_t out_stride) {
  for (int a = 0; a < n_acts; ++a) {
    matvec_unpacked<kUnpack, kDot>(n, rows, row_stride, n_rows, static_cast<const uint8_t*>(acts) + a * act_stride,
                                   out + a * out_stride);
  }
}

}  // namespace

// The 8-row layouts of 32-element blocks: the SIMD128 kernels read 2-byte
// chunks, the relaxed-SIMD ones 4-byte chunks (i4).
void repack_q4_0x8(uint8_t* data, int64_t n, int64_t rows) { repack_rows<BlockQ4_0, BlockQ4_0x8, 2>(data, n, rows); }
void unpack_q4_0x8(uint8_t* data, int64_t n, int64_t rows) { unpack_rows<BlockQ4_0, BlockQ4_0x8, 2>(data, n, rows); }
void repack_q4_0x8i4(uint8_t* data, int64_t n, int64_t rows) { repack_rows<BlockQ4_0, BlockQ4_0x8, 4>(data, n, rows); }
void unpack_q4_0x8i4(uint8_t* data, int64_t n, int64_t rows) { unpack_rows<BlockQ4_0, BlockQ4_0x8, 4>(data, n, rows); }
void repack_q8_0x8(uint8_t* data, int64_t n, int64_t rows) { repack_rows<BlockQ8_0, BlockQ8_0x8, 2>(data, n, rows); }
void unpack_q8_0x8(uint8_t* data, int64_t n, int64_t rows) { unpack_rows<BlockQ8_0, BlockQ8_0x8, 2>(data, n, rows); }
void repack_q5_0x8(uint8_t* data, int64_t n, int64_t n_rows) { repack_q5_0_rows(data, n, n_rows); }
void unpack_q5_0x8(uint8_t* data, int64_t n, int64_t n_rows) { unpack_q5_0_rows(data, n, n_rows); }
void repack_q5_0x8i4(uint8_t* data, int64_t n, int64_t n_rows) { repack_q5_0i4_rows(data, n, n_rows); }
void unpack_q5_0x8i4(uint8_t* data, int64_t n, int64_t n_rows) { unpack_q5_0i4_rows(data, n, n_rows); }
void repack_q4_Kx8(uint8_t* data, int64_t n, int64_t n_rows) { repack_q4_K_rows<2>(data, n, n_rows); }
void unpack_q4_Kx8(uint8_t* data, int64_t n, int64_t n_rows) { unpack_q4_K_rows<2>(data, n, n_rows); }
void repack_q4_Kx8i4(uint8_t* data, int64_t n, int64_t n_rows) { repack_q4_K_rows<4>(data, n, n_rows); }
void unpack_q4_Kx8i4(uint8_t* data, int64_t n, int64_t n_rows) { unpack_q4_K_rows<4>(data, n, n_rows); }
void repack_q6_Kx8(uint8_t* data, int64_t n, int64_t n_rows) { repack_q6_K_rows(data, n, n_rows); }
void unpack_q6_Kx8(uint8_t* data, int64_t n, int64_t n_rows) { unpack_q6_K_rows(data, n, n_rows); }

}  // namespace ref

namespace {
using ref::gemm_unpacked, ref::matvec_unpacked;
constexpr RepackedType kReferenceRepacked[] = {
    {"q4_0x8", TensorType::kQ4_0, 8, ref::repack_q4_0x8, ref::unpack_q4_0x8,
     matvec_unpacked<ref::unpack_q4_0x8, ref::dot_q4_0_q8_0>, gemm_unpacked<ref::unpack_q4_0x8, ref::dot_q4_0_q8_0>},
    {"q4_0x8i4", TensorType::kQ4_0, 8, ref::repack_q4_0x8i4, ref::unpack_q4_0x8i4,
     matvec_unpacked<ref::unpack_q4_0x8i4, ref::dot_q4_0_q8_0>,
     gemm_unpacked<ref::unpack_q4_0x8i4, ref::dot_q4_0_q8_0>},
    {"q5_0x8", TensorType::kQ5_0, 8, ref::repack_q5_0x8, ref::unpack_q5_0x8,
     matvec_unpacked<ref::unpack_q5_0x8, ref::dot_q5_0_q8_0>, gemm_unpacked<ref::unpack_q5_0x8, ref::dot_q5_0_q8_0>},
    {"q5_0x8i4", TensorType::kQ5_0, 8, ref::repack_q5_0x8i4, ref::unpack_q5_0x8i4,
     matvec_unpacked<ref::unpack_q5_0x8i4, ref::dot_q5_0_q8_0>,
     gemm_unpacked<ref::unpack_q5_0x8i4, ref::dot_q5_0_q8_0>},
    {"q8_0x8", TensorType::kQ8_0, 8, ref::repack_q8_0x8, ref::unpack_q8_0x8,
     matvec_unpacked<ref::unpack_q8_0x8, ref::dot_q8_0_q8_0>, gemm_unpacked<ref::unpack_q8_0x8, ref::dot_q8_0_q8_0>},
    {"q4_Kx8", TensorType::kQ4_K, 8, ref::repack_q4_Kx8, ref::unpack_q4_Kx8,
     matvec_unpacked<ref::unpack_q4_Kx8, ref::dot_q4_K_q8_K>, gemm_unpacked<ref::unpack_q4_Kx8, ref::dot_q4_K_q8_K>},
    {"q4_Kx8i4", TensorType::kQ4_K, 8, ref::repack_q4_Kx8i4, ref::unpack_q4_Kx8i4,
     matvec_unpacked<ref::unpack_q4_Kx8i4, ref::dot_q4_K_q8_K>,
     gemm_unpacked<ref::unpack_q4_Kx8i4, ref::dot_q4_K_q8_K>},
    {"q6_Kx8", TensorType::kQ6_K, 8, ref::repack_q6_Kx8, ref::unpack_q6_Kx8,
     matvec_unpacked<ref::unpack_q6_Kx8, ref::dot_q6_K_q8_K>, gemm_unpacked<ref::unpack_q6_Kx8, ref::dot_q6_K_q8_K>},
};
}  // namespace

const RepackedType* reference_repacked_types(int* count) {
  *count = static_cast<int>(sizeof(kReferenceRepacked) / sizeof(kReferenceRepacked[0]));
  return kReferenceRepacked;
}

const RepackedType* repacked_type_for(TensorType source) {
  int count = 0;
  const RepackedType* types = active_repacked_types(&count);
  for (int i = 0; i < count; ++i) {
    if (types[i].source == source) return &types[i];
  }
  return nullptr;
}

}  // namespace wllm
