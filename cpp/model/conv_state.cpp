#include "model/conv_state.h"

#include <algorithm>

namespace wllm {

std::vector<int64_t> ConvState::plan(const ModelConfig& c, int64_t* total) {
  std::vector<int64_t> offsets(c.n_layers);
  int64_t offset = 0;
  for (int l = 0; l < c.n_layers; ++l) {
    offsets[l] = offset;
    if (!c.layers[l].attention) offset += static_cast<int64_t>(c.shortconv_l_cache - 1) * c.dim;
  }
  *total = offset;
  return offsets;
}

ConvState::ConvState(const ModelConfig& c) : dim_(c.dim), taps_(c.shortconv_l_cache) {
  int64_t total = 0;
  offsets_ = plan(c, &total);
  data_.resize(static_cast<size_t>(total));
}

int64_t ConvState::plan_bytes(const ModelConfig& c) {
  int64_t total = 0;
  plan(c, &total);
  return total * static_cast<int64_t>(sizeof(float));
}

void ConvState::clear(int l) {
  float* state = data_.data() + offsets_[l];
  std::fill(state, state + (taps_ - 1) * dim_, 0.0f);
}

void ConvState::push(int l, const float* in, int64_t stride, int n) {
  float* state = data_.data() + offsets_[l];
  // Row r becomes the input at u = n − (taps − 1) + r, counted from the
  // pass's first position: the pass's own row, or (u < 0) the state's row
  // r + n, which is further on and so not yet overwritten.
  for (int r = 0; r < taps_ - 1; ++r) {
    const int64_t u = n - (taps_ - 1) + r;
    const float* from = u >= 0 ? in + u * stride : state + (r + n) * dim_;
    std::copy_n(from, dim_, state + r * dim_);
  }
}

}  // namespace wllm
