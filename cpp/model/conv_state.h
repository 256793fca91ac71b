// The state of the short-convolution layers (lfm2) between forward passes:
// what the KV cache is to attention layers. A convolution layer's output at
// position p reads its input at the last `taps` positions, p − taps + 1 .. p,
// so the layer keeps the inputs of the last taps − 1 positions of the
// sequence, in f32 (as llama.cpp's recurrent state). A pass at position 0
// starts from zeros (llama.cpp's state of a new sequence); any other pass
// continues the previous one.
//
// Evaluation may go back to an earlier position p (the engine reuses a cached
// prefix), which needs the rows as they were before p. So the state also
// keeps the inputs of the last kRecentInputs positions (a ring: position u
// in slot u mod kRecentInputs), from which the rows before any of them are
// rebuilt, and a checkpoint of the rows every kCheckpointInterval positions,
// to go back further: to the checkpoint, and evaluate again from there.
// Allocated once; nothing is allocated per token.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/config.h"

namespace wllm {

class ConvState {
 public:
  // A prefill batch (Transformer::kMaxBatch) each: going back within a batch
  // of the end is exact, and going back further evaluates at most a batch again.
  static constexpr int kRecentInputs = 64;
  static constexpr int kCheckpointInterval = 64;

  // n_ctx: the positions a sequence can have (checkpoints below it are kept).
  ConvState(const ModelConfig& config, int n_ctx);

  // Bytes the state takes, as allocated, and as planned before allocating.
  int64_t bytes() const { return static_cast<int64_t>((rows_.size() + inputs_.size()) * sizeof(float)); }
  static int64_t plan_bytes(const ModelConfig& config, int n_ctx);

  // Positions a layer's convolution reads (its taps), the current one included.
  int taps() const { return taps_; }

  // (taps − 1, dim) f32: layer l's inputs at the positions before the next
  // pass, oldest first. Only for convolution layers.
  const float* rows(int l) const { return rows_.data() + offsets_[l]; }

  // Zeros layer l's rows: the state before a sequence's first position.
  void clear(int l);
  // Moves layer l's rows past a pass at positions pos .. pos + n − 1 whose
  // inputs are in[t·stride .. t·stride + dim) for t < n: they become the last
  // taps − 1 of (the rows, then the pass's inputs). Keeps the pass's inputs
  // among the recent ones, and the checkpoint of each multiple of the
  // interval in (pos, pos + n].
  void push(int l, int64_t pos, const float* in, int64_t stride, int n);

  // The latest position <= p (< length, the positions evaluated) whose rows
  // can be restored: p while the recent inputs reach back to its rows, else
  // the checkpoint before p.
  int64_t rewind_point(int64_t p) const;
  // Sets every layer's rows to what they were before position p (a
  // rewind_point, or 0).
  void rewind(int64_t p);

  // For saving and restoring a sequence of `length` positions
  // (engine/state_file.h): the oldest position whose input is kept (the
  // recent inputs run from there to length − 1); layer l's ring of recent
  // inputs, (kRecentInputs, dim) f32; and the rows of every layer followed by
  // those of the checkpoints before `length`, in order (each block holds
  // every layer's rows). Empty without convolution layers.
  int64_t oldest_input() const { return oldest_input_; }
  void set_oldest_input(int64_t p) { oldest_input_ = p; }
  float* inputs(int l) { return inputs_.data() + inputs_offsets_[l]; }
  std::span<float> blocks(int64_t length);

 private:
  static std::vector<int64_t> plan(const ModelConfig& config, int64_t per_layer, int64_t* total);
  static int checkpoints(int n_ctx) { return (n_ctx - 1) / kCheckpointInterval; }
  // Writes to dst the rows after the first k (>= 1) positions of a pass:
  // `state` holds them before it. dst may be state itself.
  void rows_after(const float* state, const float* in, int64_t stride, int k, float* dst) const;

  int64_t dim_;
  int taps_;
  int n_ctx_;
  std::vector<int> conv_layers_;         // the convolution layers' indices
  int64_t block_;                        // floats of every layer's rows
  std::vector<int64_t> offsets_;         // per layer, in floats, within a block
  std::vector<float> rows_;              // (1 + checkpoints, block): the rows, then checkpoint i·interval in block i
  std::vector<int64_t> inputs_offsets_;  // per layer, in floats
  std::vector<float> inputs_;            // per convolution layer (kRecentInputs, dim)
  int64_t oldest_input_ = 0;             // the recent inputs are those of oldest_input_ .. the last position
};

}  // namespace wllm
