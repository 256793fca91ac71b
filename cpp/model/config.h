// Hyperparameters of a Llama-family model, read from GGUF metadata.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "gguf/gguf.h"

namespace wllm {

enum class Architecture { kLlama, kQwen2 };

struct ModelConfig {
  Architecture arch = Architecture::kLlama;
  std::string arch_name;     // "llama", "qwen2"
  std::string name;          // general.name, if any
  int n_vocab = 0;
  int dim = 0;               // embedding width
  int n_layers = 0;
  int n_heads = 0;
  int n_kv_heads = 0;        // < n_heads: grouped-query attention
  int head_dim = 0;          // per-head width of q, k and v
  int ffn_dim = 0;           // SwiGLU hidden width
  int n_ctx_train = 0;       // context length the model was trained with
  float rms_eps = 1e-5f;
  int rope_dims = 0;         // leading dims of each head that rotate
  float rope_freq_base = 10000.0f;
  float rope_freq_scale = 1.0f;  // 1 / linear scaling factor
  bool rope_neox = false;        // qwen2: rotate (i, i + n/2)

  int q_dim() const { return n_heads * head_dim; }
  int kv_dim() const { return n_kv_heads * head_dim; }
};

// Reads and checks the hyperparameters; a missing key or an inconsistent
// value (heads not dividing the width, ...) is an error naming it.
Result<ModelConfig> load_config(const GgufFile& file);

}  // namespace wllm
