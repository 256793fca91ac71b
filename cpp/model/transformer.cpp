#include "model/transformer.h"

#include "model/kv_cache.h"

namespace wllm {

Transformer::Transformer(const ModelConfig& c, const ModelWeights& w, int n_ctx, ThreadPool& pool)
    : config_(c), weights_(w), n_ctx_(n_ctx), forward_(config_, weights_, n_ctx, kMaxBatch, pool) {}

int64_t Transformer::plan_kv_cache_bytes(const ModelConfig& c, int n_ctx) {
  return KvCache::plan_bytes(c, n_ctx, kMaxBatch);
}

int64_t Transformer::plan_buffer_bytes(const ModelConfig& c, int n_ctx, int n_threads) {
  return Forward::plan_buffer_bytes(c, n_ctx, kMaxBatch, n_threads);
}

}  // namespace wllm
