#include "model/conv_state.h"

#include <algorithm>

namespace wllm {

std::vector<int64_t> ConvState::plan(const ModelConfig& c, int64_t per_layer, int64_t* total) {
  std::vector<int64_t> offsets(c.n_layers);
  int64_t offset = 0;
  for (int l = 0; l < c.n_layers; ++l) {
    offsets[l] = offset;
    if (!c.layers[l].attention) offset += per_layer;
  }
  *total = offset;
  return offsets;
}

ConvState::ConvState(const ModelConfig& c, int n_ctx) : dim_(c.dim), taps_(c.shortconv_l_cache), n_ctx_(n_ctx) {
  offsets_ = plan(c, static_cast<int64_t>(taps_ - 1) * dim_, &block_);
  int64_t input_floats = 0;
  inputs_offsets_ = plan(c, kRecentInputs * dim_, &input_floats);
  rows_.resize(static_cast<size_t>(block_ * (1 + checkpoints(n_ctx))));
  inputs_.resize(static_cast<size_t>(input_floats));
  for (int l = 0; l < c.n_layers; ++l) {
    if (!c.layers[l].attention) conv_layers_.push_back(l);
  }
}

int64_t ConvState::plan_bytes(const ModelConfig& c, int n_ctx) {
  int64_t block = 0, inputs = 0;
  plan(c, static_cast<int64_t>(c.shortconv_l_cache - 1) * c.dim, &block);
  plan(c, kRecentInputs * static_cast<int64_t>(c.dim), &inputs);
  return (block * (1 + checkpoints(n_ctx)) + inputs) * static_cast<int64_t>(sizeof(float));
}

void ConvState::clear(int l) {
  float* state = rows_.data() + offsets_[l];
  std::fill(state, state + (taps_ - 1) * dim_, 0.0f);
}

void ConvState::rows_after(const float* state, const float* in, int64_t stride, int k, float* dst) const {
  // Row r becomes the input at u = k − (taps − 1) + r, counted from the
  // pass's first position: the pass's own row, or (u < 0) the state's row
  // r + k, which is further on and so not yet overwritten when dst == state.
  for (int r = 0; r < taps_ - 1; ++r) {
    const int64_t u = k - (taps_ - 1) + r;
    const float* from = u >= 0 ? in + u * stride : state + (r + k) * dim_;
    std::copy_n(from, dim_, dst + r * dim_);
  }
}

void ConvState::push(int l, int64_t pos, const float* in, int64_t stride, int n) {
  float* state = rows_.data() + offsets_[l];
  const int64_t interval = kCheckpointInterval;
  for (int64_t m = (pos / interval + 1) * interval; m <= pos + n && m < n_ctx_; m += interval) {
    rows_after(state, in, stride, static_cast<int>(m - pos), state + (m / interval) * block_);
  }
  rows_after(state, in, stride, n, state);
  // The pass's last kRecentInputs inputs join the recent ones (every layer
  // sees the same pass, so each moves oldest_input_ alike).
  for (int t = std::max(0, n - kRecentInputs); t < n; ++t) {
    std::copy_n(in + t * stride, dim_, inputs(l) + (pos + t) % kRecentInputs * dim_);
  }
  oldest_input_ = std::max(oldest_input_, pos + n - kRecentInputs);
}

int64_t ConvState::rewind_point(int64_t p) const {
  if (std::max<int64_t>(0, p - (taps_ - 1)) >= oldest_input_) return p;
  return p / kCheckpointInterval * kCheckpointInterval;
}

void ConvState::rewind(int64_t p) {
  if (p == 0) {  // a new sequence
    std::fill(rows_.begin(), rows_.begin() + block_, 0.0f);
    oldest_input_ = 0;
  } else if (std::max<int64_t>(0, p - (taps_ - 1)) >= oldest_input_) {
    // Rebuilt from the recent inputs: those of the positions before p (zeros before 0).
    for (const int l : conv_layers_) {
      float* state = rows_.data() + offsets_[l];
      for (int r = 0; r < taps_ - 1; ++r) {
        const int64_t u = p - (taps_ - 1) + r;
        if (u < 0) {
          std::fill_n(state + r * dim_, dim_, 0.0f);
        } else {
          std::copy_n(inputs(l) + u % kRecentInputs * dim_, dim_, state + r * dim_);
        }
      }
    }
  } else {
    std::copy_n(rows_.data() + (p / kCheckpointInterval) * block_, block_, rows_.data());
    oldest_input_ = p;  // the inputs before p are not known now
  }
}

std::span<float> ConvState::blocks(int64_t length) {
  if (block_ == 0) return {};
  const int64_t count = 1 + (length > 0 ? (length - 1) / kCheckpointInterval : 0);
  return {rows_.data(), static_cast<size_t>(count * block_)};
}

}  // namespace wllm
