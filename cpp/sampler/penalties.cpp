#include <algorithm>
#include <limits>

#include "sampler/stages.h"

namespace wllm {

PenaltiesStage::PenaltiesStage(int n_vocab, int last_n, float repeat, float frequency, float presence)
    : repeat_(repeat),
      frequency_(frequency),
      presence_(presence),
      counts_(static_cast<size_t>(std::max(n_vocab, 0)), 0),
      window_(static_cast<size_t>(std::max(last_n, 0)), 0) {}

void PenaltiesStage::accept(int32_t token) {
  if (window_.empty() || token < 0 || static_cast<size_t>(token) >= counts_.size()) return;
  if (window_used_ == window_.size()) {
    --counts_[static_cast<size_t>(window_[window_next_])];  // the oldest token leaves the window
  } else {
    ++window_used_;
  }
  window_[window_next_] = token;
  ++counts_[static_cast<size_t>(token)];
  window_next_ = (window_next_ + 1) % window_.size();
}

// l = l > 0 ? l / repeat : l · repeat;  l −= c·frequency + presence   (c = count in the window > 0)
void PenaltiesStage::apply(Candidates& cur) {
  if (window_used_ == 0) return;
  for (size_t i = 0; i < cur.size; ++i) {
    TokenData& t = cur.data[i];
    if (t.id < 0 || static_cast<size_t>(t.id) >= counts_.size()) continue;
    const int32_t count = counts_[static_cast<size_t>(t.id)];
    if (count == 0) continue;
    // Dividing a negative logit would raise it, hence the multiply (llama.cpp, CTRL paper fix).
    float l = t.logit <= 0.0f ? t.logit * repeat_ : t.logit / repeat_;
    l -= static_cast<float>(count) * frequency_ + presence_;
    // inf − inf from extreme penalties must not bring NaN into the sort.
    t.logit = l == l ? l : -std::numeric_limits<float>::infinity();
  }
  cur.sorted = false;
}

void PenaltiesStage::reset() {
  for (size_t i = 0; i < window_used_; ++i) counts_[static_cast<size_t>(window_[i])] = 0;
  window_used_ = 0;
  window_next_ = 0;
}

}  // namespace wllm
