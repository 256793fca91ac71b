#include "sampler/stages.h"

namespace wllm {

// i = min { i : Σ_{j<=i} w_j > u · Σ_j w_j },  w_j = e^(l_j − max), u uniform in [0, 1).
void DistStage::apply(Candidates& cur) {
  // One draw per call, even for a single candidate, so later draws do not
  // depend on how many candidates earlier stages kept.
  const double u = static_cast<double>(rng_.uniform_f32());
  if (cur.size == 0) {
    cur.selected = -1;
    return;
  }
  const double sum = softmax_weights(cur);
  // u <= 1 − 2^-24 makes target < sum, and the running sum below repeats the
  // additions that made sum, so some candidate with w > 0 is always chosen.
  const double target = u * sum;
  double running = 0.0;
  size_t selected = cur.size - 1;
  for (size_t i = 0; i < cur.size; ++i) {
    running += cur.data[i].p;
    if (running > target) {
      selected = i;
      break;
    }
  }
  for (size_t i = 0; i < cur.size; ++i) cur.data[i].p = static_cast<float>(cur.data[i].p / sum);
  cur.selected = static_cast<int32_t>(selected);
}

}  // namespace wllm
