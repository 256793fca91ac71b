// Reference elementwise math (MathKernels in kernels.h): the definition that
// ISA versions reproduce lane by lane.
#include <algorithm>

#include "core/math.h"
#include "quant/ref/ref.h"
#include "quant/traits.h"

namespace wllm::ref {

void swiglu(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) gate[i] = silu_f32(gate[i]) * up[i];
}

void softmax(float* x, int64_t n, float scale) {
  for (int64_t i = 0; i < n; ++i) x[i] *= scale;
  float max = x[0];
  for (int64_t i = 1; i < n; ++i) max = std::max(max, x[i]);
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t i = 0; i < n; ++i) {
    x[i] = exp_f32(x[i] - max);
    acc[i & 7] += x[i];
  }
  const float inv = 1.0f / sum_lanes8(acc);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

}  // namespace wllm::ref
