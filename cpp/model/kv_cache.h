// The keys and values of past positions, per attention layer, in f16: half
// the memory of f32, like llama.cpp's default. Allocated once for the whole
// context; nothing is allocated per token.
//
// A global layer keeps every position of the context: position p sits in
// slot p. A sliding-window layer keeps only what its window can still see, in
// a ring of `window + max_batch - 1` slots (position p in slot p mod size):
// enough that a batch stores all its positions before any of its tokens
// reads, and the batch's first token still finds its whole window.
//
// Evaluation may go back to an earlier position p (the engine reuses a cached
// prefix): a global layer still holds every position before p; a ring holds
// only its last `slots` positions, so going back is exact only while the
// window of position p is still in it (can_continue_at).
#pragma once

#include <cstdint>
#include <vector>

#include "model/config.h"

namespace wllm {

class KvCache {
 public:
  KvCache(const ModelConfig& config, int n_ctx, int max_batch);

  // Bytes the cache takes, as allocated, and as planned before allocating.
  int64_t bytes() const { return static_cast<int64_t>(data_.size()) * sizeof(uint16_t); }
  static int64_t plan_bytes(const ModelConfig& config, int n_ctx, int max_batch);

  // Positions layer l holds: n_ctx, the ring's size, or 0 (no attention).
  int slots(int l) const { return layers_[l].slots; }
  // Key (and value) floats per position of layer l.
  int kv_dim(int l) const { return layers_[l].kv_dim; }
  // Whether layer l is a ring (its positions wrap around its slots).
  bool is_ring(int l) const { return layers_[l].slots < n_ctx_; }
  int n_ctx() const { return n_ctx_; }

  uint16_t* keys(int l) { return data_.data() + layers_[l].offset; }  // (slots, kv_dim) f16
  const uint16_t* keys(int l) const { return data_.data() + layers_[l].offset; }
  // (kv_dim, slots) f16: transposed, a row per value dimension, so the
  // weighted sum over positions reads each row contiguously.
  uint16_t* values(int l) { return keys(l) + layers_[l].slots * static_cast<int64_t>(layers_[l].kv_dim); }
  const uint16_t* values(int l) const { return keys(l) + layers_[l].slots * static_cast<int64_t>(layers_[l].kv_dim); }

  // Stores position `pos`'s key and value (kv_dim floats each) in layer l.
  // `scratch`: kv_dim f16 values on their way to the transposed rows.
  void store(int l, int64_t pos, const float* key, const float* value, uint16_t* scratch);

  // The oldest position layer l still holds: the positions from there up to
  // the last one stored are intact (0 for a layer that is no ring).
  int64_t oldest(int l) const { return layers_[l].oldest; }
  // Every layer has stored the positions before `end`: the rings' oldest
  // positions move past what their newest ones overwrote.
  void stored_up_to(int64_t end);
  // Whether evaluation can continue exactly at position p (< the last one
  // stored + 1) from what the layers hold: each ring still has the window
  // of p. Always true at 0, where a sequence starts afresh.
  bool can_continue_at(int64_t p) const;
  // Continues at p (can_continue_at(p)); at 0 the rings start afresh.
  void continue_at(int64_t p);
  // Declares that layer l holds positions [oldest, ...) after a restore
  // (engine/state_file.h wrote them).
  void set_oldest(int l, int64_t oldest) { layers_[l].oldest = oldest; }

 private:
  struct Layer {
    int64_t offset = 0;  // in uint16_t
    int slots = 0;
    int kv_dim = 0;
    int window = 0;      // > 0: a sliding-window layer
    int64_t oldest = 0;  // see oldest()
  };
  static std::vector<Layer> plan(const ModelConfig& config, int n_ctx, int max_batch, int64_t* total);

  int n_ctx_;
  std::vector<Layer> layers_;
  std::vector<uint16_t> data_;
};

}  // namespace wllm
