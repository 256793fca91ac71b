// A saved state ("prompt cache"): the tokens a model's cache holds and the
// cache's contents for them, so that a later run continues exactly where this
// one stopped, without evaluating those tokens again. Every build computes
// the same bits (design-notes §2), so a state saved natively continues in
// wasm or on aarch64 with exactly the tokens the saving build would give.
//
// Format, version 1 (every number little-endian):
//   magic "WLLMSTAT"                   8 bytes
//   version                            u32 (1)
//   model id                           u64: Engine::model_id() of the model saved from
//   layers                             u32: the model's layer count
//   checkpoint interval                u32: ConvState::kCheckpointInterval
//   tokens n                           u32
//   token ids                          n × i32
//   first position, per layer          layers × u32: where the layer's positions
//                                      start: 0 for a global attention layer, later
//                                      where a sliding-window ring has dropped older
//                                      ones; for a convolution layer, its oldest
//                                      recent input (ConvState::oldest_input)
//   per layer, in order:               attention: the keys of positions first..n−1
//                                      (kv_dim f16 each), then the values transposed,
//                                      kv_dim rows of n − first f16 (as the cache
//                                      holds them); convolution: the inputs of
//                                      positions first..n−1 (dim f32 each)
//   convolution rows and checkpoints   ConvState::blocks(n): f32 (lfm2 only)
//   checksum                           u64: Checksum64 of every byte before it
//
// The reader refuses, with ErrorCode::kBadState and a message that says why,
// anything that is not such a state of this model fitting this context:
// another magic or version, another model id, more tokens than the context
// holds, token ids outside the vocabulary, first positions the model could not
// continue from, another size than the header describes (a truncated state),
// or a checksum that does not match (a damaged one). A context of another
// size is fine if the tokens fit it: positions are stored in order, and a
// smaller sliding-window ring keeps the latest of them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/checksum.h"
#include "core/status.h"
#include "model/transformer.h"

namespace wllm {

class StateWriter {
 public:
  // The state of `model`'s sequence, named by model_id.
  StateWriter(Transformer& model, uint64_t model_id);

  // The state's bytes: these pieces in order. Most view the model's cache,
  // so they are valid until the model next runs.
  const std::vector<std::span<const uint8_t>>& pieces() const { return pieces_; }
  uint64_t size() const { return size_; }

 private:
  // Where the pieces that are not the model's memory live (on the heap, so
  // the pieces stay valid when the writer moves).
  std::vector<uint8_t> head_;     // magic .. first positions
  std::vector<uint8_t> trailer_;  // the checksum
  std::vector<std::span<const uint8_t>> pieces_;
  uint64_t size_ = 0;
};

class StateReader {
 public:
  // Reads a state of `size` bytes into `model` (named by model_id, with
  // n_vocab tokens). The bytes come through write(), in pieces of any size;
  // then finish().
  StateReader(Transformer& model, uint64_t model_id, int n_vocab, uint64_t size);

  // The next bytes. Once the header is in, it is checked before anything of
  // the model changes; from then on the model's sequence is empty until
  // finish() succeeds (after any error the next prompt is evaluated in full).
  Status write(std::span<const uint8_t> bytes);
  // After the last byte: checks the checksum; then the model holds the state's tokens.
  Status finish();

 private:
  // A destination of the body's bytes: in the model's memory, or null
  // (dropped: positions a smaller ring has no room for).
  struct Run {
    uint8_t* data;
    uint64_t bytes;
  };
  Status fail(Status s);
  Status read_fixed_header();
  Status read_head();
  void copy_body(std::span<const uint8_t>* bytes);

  Transformer& model_;
  const uint64_t model_id_;
  const int n_vocab_;
  const uint64_t size_;
  uint64_t received_ = 0;
  Status status_;
  std::vector<uint8_t> head_;   // the header, token ids and first positions, as they arrive
  uint64_t head_size_ = 0;      // their size, once the fixed header is in
  bool head_read_ = false;
  std::vector<int32_t> tokens_;
  std::vector<int64_t> keep_;   // per layer: the first position the model keeps
  std::vector<Run> runs_;       // the body, in order
  size_t run_ = 0;              // the run being filled
  uint64_t run_filled_ = 0;     // and its bytes so far
  uint8_t trailer_[8];
  size_t trailer_filled_ = 0;
  Checksum64 checksum_;
};

}  // namespace wllm
