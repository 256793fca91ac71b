// Llama's tensors and forward pass, which architectures that differ from it
// only in their config (smollm3) or add to it (qwen3's tensors) reuse, and
// its feed-forward block (qwen3, lfm2).
#pragma once

#include "model/forward.h"
#include "model/weights.h"

namespace wllm {

void llama_tensors(TensorList& t, const ModelConfig& c, ModelWeights* w);
void llama_forward(Forward& f);
// Its feed-forward block of layer L, residual included:
// x += W_down·(silu(W_gate·xb) ⊙ W_up·xb) with xb = rmsnorm(x)·w_ffn_norm.
void llama_feed_forward(Forward& f, const LayerWeights& L);

}  // namespace wllm
