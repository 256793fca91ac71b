#include <algorithm>

#include "core/math.h"
#include "sampler/stages.h"

namespace wllm {

MinPStage::MinPStage(float p) : p_(p), log_p_(p > 0.0f ? static_cast<float>(log_f64(p)) : 0.0f) {}

// Keep l_i >= l_max + ln p  ⇔  p_i >= p · p_max.
void MinPStage::apply(Candidates& cur) {
  if (p_ <= 0.0f || cur.size == 0) return;
  float max = cur.data[0].logit;
  if (!cur.sorted) {
    for (size_t i = 1; i < cur.size; ++i) max = std::max(max, cur.data[i].logit);
  }
  // ln p <= 0, so min_logit <= max and the best token always stays.
  const float min_logit = max + log_p_;
  size_t kept = 0;
  for (size_t i = 0; i < cur.size; ++i) {
    if (cur.data[i].logit >= min_logit) cur.data[kept++] = cur.data[i];  // stable: order is kept
  }
  cur.size = kept;
}

}  // namespace wllm
