// Reference elementwise math (MathKernels in kernels.h): the definition that
// ISA versions reproduce lane by lane.
#include "core/math.h"
#include "quant/ref/ref.h"
#include "quant/traits.h"

namespace wllm::ref {

void swiglu(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) gate[i] = silu_f32(gate[i]) * up[i];
}

float exp_shifted_sum(float* x, int64_t n, float max) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t i = 0; i < n; ++i) {
    x[i] = exp_f32(x[i] - max);
    acc[i & 7] += x[i];
  }
  return sum_lanes8(acc);
}

}  // namespace wllm::ref
