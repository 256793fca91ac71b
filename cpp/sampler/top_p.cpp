#include <algorithm>

#include "sampler/stages.h"

namespace wllm {

// Keep ranks [0, m), m the smallest with Σ_{i<m} p_i >= p (p = softmax over the current set).
void TopPStage::apply(Candidates& cur) {
  if (p_ >= 1.0f || cur.size <= 1) return;
  softmax(cur);
  // Walk in rank order, ranking lazily in growing chunks: the nucleus is
  // usually a few dozen tokens, so most of the vocabulary is never sorted.
  size_t ranked = cur.sorted ? cur.size : 0;
  double cumulative = 0.0;
  for (size_t i = 0; i < cur.size; ++i) {
    if (i == ranked) {
      size_t next = std::max<size_t>(256, 2 * ranked);
      if (next * 4 > cur.size) next = cur.size;  // a wide nucleus: one sort beats more selections
      sort_ranks(cur, ranked, next);
      ranked = next;
    }
    cumulative += cur.data[i].p;
    if (cumulative >= p_) {
      cur.size = i + 1;
      break;
    }
  }
  cur.sorted = true;
}

}  // namespace wllm
