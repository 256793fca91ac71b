#include <limits>

#include "sampler/stages.h"

namespace wllm {

// l = l / t   (t <= 0: l = −inf for all but the best-ranked token)
void TemperatureStage::apply(Candidates& cur) {
  if (cur.size == 0) return;
  if (t_ <= 0.0f) {
    size_t best = 0;
    for (size_t i = 1; i < cur.size; ++i) {
      if (ranks_before(cur.data[i], cur.data[best])) best = i;
    }
    for (size_t i = 0; i < cur.size; ++i) {
      if (i != best) cur.data[i].logit = -std::numeric_limits<float>::infinity();
    }
  } else {
    for (size_t i = 0; i < cur.size; ++i) cur.data[i].logit /= t_;
  }
  // Rounding can make distinct logits equal, which may break the id tie order.
  cur.sorted = false;
}

}  // namespace wllm
