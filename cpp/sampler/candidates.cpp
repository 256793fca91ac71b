#include "sampler/candidates.h"

#include <algorithm>

#include "core/math.h"

namespace wllm {

void sort_ranks(Candidates& cur, size_t from, size_t to) {
  to = std::min(to, cur.size);
  if (from >= to) return;
  TokenData* begin = cur.data + from;
  TokenData* mid = cur.data + to;
  TokenData* end = cur.data + cur.size;
  const size_t count = to - from, pool = cur.size - from;
  if (count * 16 <= pool) {
    // Few out of many (top-k = 40 of 150k): keep the best `count` seen so far
    // in a heap whose root is the worst of them. Most entries then cost one
    // comparison, several times faster than nth_element.
    std::make_heap(begin, mid, ranks_before);
    for (TokenData* it = mid; it != end; ++it) {
      if (ranks_before(*it, *begin)) {
        std::pop_heap(begin, mid, ranks_before);
        std::swap(mid[-1], *it);  // the evicted entry moves to the tail, nothing is lost
        std::push_heap(begin, mid, ranks_before);
      }
    }
    std::sort_heap(begin, mid, ranks_before);
    return;
  }
  if (mid < end) std::nth_element(begin, mid, end, ranks_before);
  std::sort(begin, mid, ranks_before);
}

double softmax_weights(Candidates& cur) {
  if (cur.size == 0) return 0.0;
  float max = cur.data[0].logit;
  for (size_t i = 1; i < cur.size; ++i) max = std::max(max, cur.data[i].logit);
  double sum = 0.0;
  for (size_t i = 0; i < cur.size; ++i) {
    const float l = cur.data[i].logit;
    const float w = l == max ? 1.0f : exp_f32(l - max);
    cur.data[i].p = w;
    sum += w;
  }
  return sum;
}

void softmax(Candidates& cur) {
  const double sum = softmax_weights(cur);
  for (size_t i = 0; i < cur.size; ++i) cur.data[i].p = static_cast<float>(cur.data[i].p / sum);
}

}  // namespace wllm
