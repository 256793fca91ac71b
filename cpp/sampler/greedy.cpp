#include "sampler/stages.h"

namespace wllm {

// i = argmax l_i, lowest id among equals.
void GreedyStage::apply(Candidates& cur) {
  if (cur.size == 0) {
    cur.selected = -1;
    return;
  }
  size_t best = 0;
  for (size_t i = 1; i < cur.size; ++i) {
    if (ranks_before(cur.data[i], cur.data[best])) best = i;
  }
  cur.selected = static_cast<int32_t>(best);
}

}  // namespace wllm
