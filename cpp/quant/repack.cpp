// Repacking (repack.h): the Q4_0x8 layout's reference repack and unpack, its
// scalar reference kernels, and which repacked type the active ISA wants.
#include "quant/repack.h"

#include <cstring>
#include <vector>

#include "quant/blocks.h"
#include "quant/kernels.h"
#include "quant/ref/ref.h"

namespace wllm {

namespace ref {

// Rows 8g..8g+7 (8 rows of nb Q4_0 blocks, one after another) <-> nb
// Q4_0x8 blocks, through a copy of the group.
void repack_q4_0x8(uint8_t* data, int64_t n, int64_t n_rows) {
  const int64_t nb = n / kQK;
  std::vector<BlockQ4_0> rows(static_cast<size_t>(8 * nb));
  for (int64_t g = 0; g < n_rows / 8; ++g) {
    uint8_t* group = data + g * 8 * nb * static_cast<int64_t>(sizeof(BlockQ4_0));
    std::memcpy(rows.data(), group, rows.size() * sizeof(BlockQ4_0));
    BlockQ4_0x8* out = reinterpret_cast<BlockQ4_0x8*>(group);
    for (int64_t ib = 0; ib < nb; ++ib) {
      for (int r = 0; r < 8; ++r) {
        const BlockQ4_0& b = rows[static_cast<size_t>(r * nb + ib)];
        out[ib].d[r] = b.d;
        for (int c = 0; c < 8; ++c) {
          out[ib].qs[r / 4][8 * c + 2 * (r % 4)] = b.qs[2 * c];
          out[ib].qs[r / 4][8 * c + 2 * (r % 4) + 1] = b.qs[2 * c + 1];
        }
      }
    }
  }
}

void unpack_q4_0x8(uint8_t* data, int64_t n, int64_t n_rows) {
  const int64_t nb = n / kQK;
  std::vector<BlockQ4_0x8> packed(static_cast<size_t>(nb));
  for (int64_t g = 0; g < n_rows / 8; ++g) {
    uint8_t* group = data + g * 8 * nb * static_cast<int64_t>(sizeof(BlockQ4_0));
    std::memcpy(packed.data(), group, packed.size() * sizeof(BlockQ4_0x8));
    BlockQ4_0* rows = reinterpret_cast<BlockQ4_0*>(group);
    for (int64_t ib = 0; ib < nb; ++ib) {
      for (int r = 0; r < 8; ++r) {
        BlockQ4_0& b = rows[r * nb + ib];
        b.d = packed[static_cast<size_t>(ib)].d[r];
        for (int c = 0; c < 8; ++c) {
          b.qs[2 * c] = packed[static_cast<size_t>(ib)].qs[r / 4][8 * c + 2 * (r % 4)];
          b.qs[2 * c + 1] = packed[static_cast<size_t>(ib)].qs[r / 4][8 * c + 2 * (r % 4) + 1];
        }
      }
    }
  }
}

namespace {

// The reference kernels: each group unpacked into a copy, then the reference
// dot row by row — what "bit for bit the type's dot" means.
std::vector<uint8_t> unpacked_group(const void* rows, int64_t row_stride, int64_t n, int64_t g) {
  const uint8_t* group = static_cast<const uint8_t*>(rows) + g * 8 * row_stride;
  std::vector<uint8_t> copy(group, group + 8 * row_stride);
  unpack_q4_0x8(copy.data(), n, 8);
  return copy;
}

void matvec_q4_0x8(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out) {
  for (int g = 0; g < n_rows / 8; ++g) {
    const std::vector<uint8_t> copy = unpacked_group(rows, row_stride, n, g);
    for (int r = 0; r < 8; ++r) out[8 * g + r] = dot_q4_0_q8_0(n, copy.data() + r * row_stride, act);
  }
}

void gemm_q4_0x8(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts, int64_t act_stride,
                 int n_acts, float* out, int64_t out_stride) {
  for (int g = 0; g < n_rows / 8; ++g) {
    const std::vector<uint8_t> copy = unpacked_group(rows, row_stride, n, g);
    for (int a = 0; a < n_acts; ++a) {
      const uint8_t* x = static_cast<const uint8_t*>(acts) + a * act_stride;
      for (int r = 0; r < 8; ++r) out[a * out_stride + 8 * g + r] = dot_q4_0_q8_0(n, copy.data() + r * row_stride, x);
    }
  }
}

}  // namespace
}  // namespace ref

namespace {
constexpr RepackedType kReferenceRepacked[] = {
    {"q4_0x8", TensorType::kQ4_0, 8, ref::repack_q4_0x8, ref::unpack_q4_0x8, ref::matvec_q4_0x8, ref::gemm_q4_0x8},
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
