// smollm3 (SmolLM3): Llama, but every 4th layer has no RoPE: its queries and
// keys attend by content alone. Its own config, Llama's tensors and forward
// pass. llama.cpp: src/models/smollm3.cpp.
#include "model/architecture.h"
#include "model/architectures/llama.h"

namespace wllm {
namespace {

// Layers 3, 7, 11, ... (counting from 0) do not rotate.
constexpr int kNoRopeLayerStep = 4;

Status smollm3_config(ConfigKeys&, ModelConfig* c) {
  for (int l = 0; l < c->n_layers; ++l) c->layers[l].rope = (l + 1) % kNoRopeLayerStep != 0;
  return require_attention_layers(*c);
}

void smollm3_synth(ModelConfig* c) { c->norm_eps = 1e-6f; }

}  // namespace

extern const Architecture kSmollm3 = {"smollm3", smollm3_config, llama_tensors, llama_forward, smollm3_synth};

}  // namespace wllm
