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

// Rows 8g..8g+7 (8 rows of nb Source blocks, one after another) <-> nb
// Packed blocks (blocks.h: scales, fifth bits if any, then per half of 4
// rows 2-byte chunks of each row's codes), through a copy of the group.
template <typename Source, typename Packed>
void repack_rows(uint8_t* data, int64_t n, int64_t n_rows) {
  constexpr int kChunks = sizeof(Source::qs) / 2;
  const int64_t nb = n / kQK;
  std::vector<Source> rows(static_cast<size_t>(8 * nb));
  for (int64_t g = 0; g < n_rows / 8; ++g) {
    uint8_t* group = data + g * 8 * nb * static_cast<int64_t>(sizeof(Source));
    std::memcpy(rows.data(), group, rows.size() * sizeof(Source));
    Packed* out = reinterpret_cast<Packed*>(group);
    for (int64_t ib = 0; ib < nb; ++ib) {
      for (int r = 0; r < 8; ++r) {
        const Source& b = rows[static_cast<size_t>(r * nb + ib)];
        out[ib].d[r] = b.d;
        if constexpr (requires { b.qh; }) std::memcpy(out[ib].qh[r], b.qh, sizeof b.qh);
        for (int c = 0; c < kChunks; ++c) std::memcpy(&out[ib].qs[r / 4][8 * c + 2 * (r % 4)], &b.qs[2 * c], 2);
      }
    }
  }
}

template <typename Source, typename Packed>
void unpack_rows(uint8_t* data, int64_t n, int64_t n_rows) {
  constexpr int kChunks = sizeof(Source::qs) / 2;
  const int64_t nb = n / kQK;
  std::vector<Packed> packed(static_cast<size_t>(nb));
  for (int64_t g = 0; g < n_rows / 8; ++g) {
    uint8_t* group = data + g * 8 * nb * static_cast<int64_t>(sizeof(Source));
    std::memcpy(packed.data(), group, packed.size() * sizeof(Packed));
    Source* rows = reinterpret_cast<Source*>(group);
    for (int64_t ib = 0; ib < nb; ++ib) {
      const Packed& p = packed[static_cast<size_t>(ib)];
      for (int r = 0; r < 8; ++r) {
        Source& b = rows[r * nb + ib];
        b.d = p.d[r];
        if constexpr (requires { b.qh; }) std::memcpy(b.qh, p.qh[r], sizeof b.qh);
        for (int c = 0; c < kChunks; ++c) std::memcpy(&b.qs[2 * c], &p.qs[r / 4][8 * c + 2 * (r % 4)], 2);
      }
    }
  }
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

void repack_q4_0x8(uint8_t* data, int64_t n, int64_t n_rows) { repack_rows<BlockQ4_0, BlockQ4_0x8>(data, n, n_rows); }
void unpack_q4_0x8(uint8_t* data, int64_t n, int64_t n_rows) { unpack_rows<BlockQ4_0, BlockQ4_0x8>(data, n, n_rows); }
void repack_q8_0x8(uint8_t* data, int64_t n, int64_t n_rows) { repack_rows<BlockQ8_0, BlockQ8_0x8>(data, n, n_rows); }
void unpack_q8_0x8(uint8_t* data, int64_t n, int64_t n_rows) { unpack_rows<BlockQ8_0, BlockQ8_0x8>(data, n, n_rows); }
void repack_q5_0x8(uint8_t* data, int64_t n, int64_t n_rows) { repack_rows<BlockQ5_0, BlockQ5_0x8>(data, n, n_rows); }
void unpack_q5_0x8(uint8_t* data, int64_t n, int64_t n_rows) { unpack_rows<BlockQ5_0, BlockQ5_0x8>(data, n, n_rows); }

}  // namespace ref

namespace {
using ref::gemm_unpacked, ref::matvec_unpacked;
constexpr RepackedType kReferenceRepacked[] = {
    {"q4_0x8", TensorType::kQ4_0, 8, ref::repack_q4_0x8, ref::unpack_q4_0x8,
     matvec_unpacked<ref::unpack_q4_0x8, ref::dot_q4_0_q8_0>, gemm_unpacked<ref::unpack_q4_0x8, ref::dot_q4_0_q8_0>},
    {"q5_0x8", TensorType::kQ5_0, 8, ref::repack_q5_0x8, ref::unpack_q5_0x8,
     matvec_unpacked<ref::unpack_q5_0x8, ref::dot_q5_0_q8_0>, gemm_unpacked<ref::unpack_q5_0x8, ref::dot_q5_0_q8_0>},
    {"q8_0x8", TensorType::kQ8_0, 8, ref::repack_q8_0x8, ref::unpack_q8_0x8,
     matvec_unpacked<ref::unpack_q8_0x8, ref::dot_q8_0_q8_0>, gemm_unpacked<ref::unpack_q8_0x8, ref::dot_q8_0_q8_0>},
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
