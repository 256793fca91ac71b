// Tensor element types, numbered exactly as ggml's `enum ggml_type` so the
// numbers read from a GGUF file map directly. Retired or unsupported ggml
// numbers (4, 5 = old Q4_2/Q4_3; 16.. IQ*, I8.., F64) are not listed: the
// GGUF reader rejects them with a clear error.
#pragma once

#include <cstdint>

namespace wllm {

enum class TensorType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,   // activation format only (pairs with Q4_1/Q5_1 weights)
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,  // activation format only (pairs with the K-quants)
  kBF16 = 30,
};

}  // namespace wllm
