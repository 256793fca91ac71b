#include "model/transformer.h"

namespace wllm {

Transformer::Transformer(const ModelConfig& c, const ModelWeights& w, int n_ctx, ThreadPool& pool)
    : config_(c), weights_(w), n_ctx_(n_ctx), forward_(config_, weights_, n_ctx, max_batch(c, n_ctx), pool) {}

int64_t Transformer::plan_kv_cache_bytes(const ModelConfig& c, int n_ctx) {
  return Forward::plan_kv_cache_bytes(c, n_ctx, max_batch(c, n_ctx));
}

int64_t Transformer::plan_buffer_bytes(const ModelConfig& c, int n_ctx, int n_threads) {
  return Forward::plan_buffer_bytes(c, n_ctx, max_batch(c, n_ctx), n_threads);
}

}  // namespace wllm
