// F32, F16 and BF16 rows: conversions and the lane-structured float dots.
#include <cstring>

#include "core/half.h"
#include "quant/ref/ref.h"
#include "quant/traits.h"

namespace wllm::ref {
namespace {

// Σ w_i·x_i with element i in lane i % 8 (any n), reduced by sum_lanes8:
// one AVX2 register or two SIMD128/NEON registers give the same bits.
template <typename Load>
float dot_lanes8(int64_t n, Load load, const float* x) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t i = 0; i < n; ++i) {
    const float p = load(i) * x[i];
    acc[i % 8] += p;
  }
  return sum_lanes8(acc);
}

}  // namespace

void to_float_f32(const void* src, float* dst, int64_t n) {
  if (n > 0) std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void from_float_f32(const float* src, void* dst, int64_t n) {
  if (n > 0) std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

float dot_f32_f32(int64_t n, const void* row, const void* act) {
  const float* w = static_cast<const float*>(row);
  return dot_lanes8(n, [w](int64_t i) { return w[i]; }, static_cast<const float*>(act));
}

void to_float_f16(const void* src, float* dst, int64_t n) {
  f16_row_to_f32(static_cast<const uint16_t*>(src), dst, n);
}

void from_float_f16(const float* src, void* dst, int64_t n) {
  uint16_t* h = static_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < n; ++i) h[i] = f32_to_f16(src[i]);
}

float dot_f16_f32(int64_t n, const void* row, const void* act) {
  const uint16_t* w = static_cast<const uint16_t*>(row);
  return dot_lanes8(n, [w](int64_t i) { return f16_to_f32(w[i]); }, static_cast<const float*>(act));
}

void to_float_bf16(const void* src, float* dst, int64_t n) {
  const uint16_t* h = static_cast<const uint16_t*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(h[i]);
}

void from_float_bf16(const float* src, void* dst, int64_t n) {
  uint16_t* h = static_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < n; ++i) h[i] = f32_to_bf16(src[i]);
}

float dot_bf16_f32(int64_t n, const void* row, const void* act) {
  const uint16_t* w = static_cast<const uint16_t*>(row);
  return dot_lanes8(n, [w](int64_t i) { return bf16_to_f32(w[i]); }, static_cast<const float*>(act));
}

}  // namespace wllm::ref
