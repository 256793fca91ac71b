#include "sampler/stages.h"

namespace wllm {

// Keep ranks [0, k).
void TopKStage::apply(Candidates& cur) {
  // k >= size keeps everything: nothing to select or sort (llama.cpp sorts anyway; the set is the same).
  if (k_ <= 0 || static_cast<size_t>(k_) >= cur.size) return;
  const size_t k = static_cast<size_t>(k_);
  if (!cur.sorted) sort_ranks(cur, 0, k);  // partial selection, not a full sort of the vocabulary
  cur.size = k;
  cur.sorted = true;
}

}  // namespace wllm
