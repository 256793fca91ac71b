// Llama's tensors and forward pass, which architectures that differ from it
// only in their config (smollm3) or add to it (qwen3's tensors) reuse.
#pragma once

#include "model/forward.h"
#include "model/weights.h"

namespace wllm {

void llama_tensors(TensorList& t, const ModelConfig& c, ModelWeights* w);
void llama_forward(Forward& f);

}  // namespace wllm
