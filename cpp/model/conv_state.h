// The state of the short-convolution layers (lfm2) between forward passes:
// what the KV cache is to attention layers. A convolution layer's output at
// position p reads its input at the last `taps` positions, p − taps + 1 .. p,
// so the layer keeps the inputs of the last taps − 1 positions of the
// sequence, in f32 (as llama.cpp's recurrent state). A pass at position 0
// starts from zeros (llama.cpp's state of a new sequence); any other pass
// continues the previous one. Allocated once; nothing is allocated per token.
#pragma once

#include <cstdint>
#include <vector>

#include "model/config.h"

namespace wllm {

class ConvState {
 public:
  explicit ConvState(const ModelConfig& config);

  // Bytes the state takes, as allocated, and as planned before allocating.
  int64_t bytes() const { return static_cast<int64_t>(data_.size()) * sizeof(float); }
  static int64_t plan_bytes(const ModelConfig& config);

  // Positions a layer's convolution reads (its taps), the current one included.
  int taps() const { return taps_; }

  // (taps − 1, dim) f32: layer l's inputs at the positions before the next
  // pass, oldest first. Only for convolution layers.
  const float* rows(int l) const { return data_.data() + offsets_[l]; }

  // Zeros layer l's rows: the state before a sequence's first position.
  void clear(int l);
  // Moves layer l's rows past a pass of n positions whose inputs are
  // in[t·stride .. t·stride + dim) for t < n: they become the last taps − 1
  // of (the rows, then the pass's inputs).
  void push(int l, const float* in, int64_t stride, int n);

 private:
  static std::vector<int64_t> plan(const ModelConfig& config, int64_t* total);

  int64_t dim_;
  int taps_;
  std::vector<int64_t> offsets_;  // per layer, in floats
  std::vector<float> data_;
};

}  // namespace wllm
