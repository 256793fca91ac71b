// Tiling helpers shared by every ISA's tiled kernels (gemm): a kernel works
// on full tiles only, and a tile that runs past the last row or activation
// repeats the last one; those extra results are computed but not stored.
#pragma once

#include <cstdint>

namespace wllm {

// The `count` entries of a tile starting at entry `first` of a strided array
// of `total` entries; entries past the end repeat the last one.
template <typename T>
inline void tile_pointers(const void* base, int64_t stride, int first, int total, int count, const T** out) {
  for (int k = 0; k < count; ++k) {
    const int i = first + k < total ? first + k : total - 1;
    out[k] = reinterpret_cast<const T*>(static_cast<const uint8_t*>(base) + i * stride);
  }
}

// How many of a tile's `count` entries starting at `first` are real.
inline int tile_valid(int first, int total, int count) { return total - first < count ? total - first : count; }

}  // namespace wllm
