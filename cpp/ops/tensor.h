// A view of a weight tensor living in the model arena. Shapes follow GGUF:
// ne[0] is the row length (contiguous), ne[1] the number of rows.
#pragma once

#include <cstdint>

#include "quant/repack.h"
#include "quant/traits.h"

namespace wllm {

struct Tensor {
  const TypeTraits* traits = nullptr;  // null: tensor absent (optional weights)
  int64_t ne[4] = {1, 1, 1, 1};
  const uint8_t* data = nullptr;
  // Set when rows were repacked at load (repack.h): matmul then goes through
  // these kernels, and row() no longer points at a plain row. Only the first
  // repacked_rows rows (whole groups) are: the rest, fewer than a group (a
  // vocabulary of 50257 rows), keep the file's layout.
  const RepackedType* repacked = nullptr;
  int64_t repacked_rows = 0;

  bool present() const { return data != nullptr; }
  int64_t cols() const { return ne[0]; }
  int64_t rows() const { return ne[1] * ne[2] * ne[3]; }
  int64_t row_size() const { return row_bytes(*traits, ne[0]); }
  const uint8_t* row(int64_t r) const { return data + r * row_size(); }
  // The tensor as plain floats; only valid for F32 tensors (norms, biases).
  const float* f32() const { return reinterpret_cast<const float*>(data); }
};

}  // namespace wllm
