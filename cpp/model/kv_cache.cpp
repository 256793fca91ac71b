#include "model/kv_cache.h"

#include <algorithm>

#include "quant/traits.h"

namespace wllm {

std::vector<KvCache::Layer> KvCache::plan(const ModelConfig& c, int n_ctx, int max_batch, int64_t* total) {
  std::vector<Layer> layers(c.n_layers);
  int64_t offset = 0;
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerConfig& lc = c.layers[l];
    Layer& L = layers[l];
    L.offset = offset;
    if (!lc.attention) continue;
    L.kv_dim = c.layer_kv_dim(l);
    L.window = lc.window;
    L.slots = lc.window > 0 ? std::min(n_ctx, lc.window + max_batch - 1) : n_ctx;
    offset += 2 * static_cast<int64_t>(L.slots) * L.kv_dim;
  }
  *total = offset;
  return layers;
}

KvCache::KvCache(const ModelConfig& c, int n_ctx, int max_batch) : n_ctx_(n_ctx) {
  int64_t total = 0;
  layers_ = plan(c, n_ctx, max_batch, &total);
  data_.resize(static_cast<size_t>(total));
}

int64_t KvCache::plan_bytes(const ModelConfig& c, int n_ctx, int max_batch) {
  int64_t total = 0;
  plan(c, n_ctx, max_batch, &total);
  return total * static_cast<int64_t>(sizeof(uint16_t));
}

void KvCache::store(int l, int64_t pos, const float* key, const float* value, uint16_t* scratch) {
  const TypeTraits& f16 = type_traits(TensorType::kF16);
  const Layer& L = layers_[l];
  const int64_t slot = pos % L.slots;
  f16.from_float(key, keys(l) + slot * L.kv_dim, L.kv_dim);
  f16.from_float(value, scratch, L.kv_dim);
  uint16_t* column = values(l) + slot;
  for (int i = 0; i < L.kv_dim; ++i) column[static_cast<int64_t>(i) * L.slots] = scratch[i];
}

void KvCache::stored_up_to(int64_t end) {
  for (Layer& L : layers_) {
    if (L.slots > 0 && L.slots < n_ctx_) L.oldest = std::max(L.oldest, end - L.slots);
  }
}

// A query at p reads positions p - window + 1 .. p; evaluation then stores p
// before it reads, so positions from max(0, p - window + 1) up to p - 1 must
// be intact.
bool KvCache::can_continue_at(int64_t p) const {
  if (p == 0) return true;
  for (const Layer& L : layers_) {
    if (L.window > 0 && std::max<int64_t>(0, p - L.window + 1) < L.oldest) return false;
  }
  return true;
}

void KvCache::continue_at(int64_t p) {
  if (p > 0) return;  // the positions before p stay as they are
  for (Layer& L : layers_) L.oldest = 0;
}

}  // namespace wllm
