// The model's weight tensors: views into the arena that holds the file's
// tensor data, looked up by their GGUF names and shape-checked.
#pragma once

#include <vector>

#include "core/status.h"
#include "gguf/gguf.h"
#include "model/config.h"
#include "ops/tensor.h"

namespace wllm {

struct LayerWeights {
  Tensor attn_norm;            // (dim) f32
  Tensor wq, wk, wv;           // (dim -> q_dim), (dim -> kv_dim) x2
  Tensor bq, bk, bv;           // qwen2 only: (q_dim), (kv_dim) x2 f32
  Tensor wo;                   // (q_dim -> dim)
  Tensor ffn_norm;             // (dim) f32
  Tensor w_gate, w_up;         // (dim -> ffn_dim)
  Tensor w_down;               // (ffn_dim -> dim)
};

struct ModelWeights {
  Tensor token_embd;           // (n_vocab rows of dim)
  std::vector<LayerWeights> layers;
  Tensor output_norm;          // (dim) f32
  Tensor output;               // (dim -> n_vocab); token_embd when tied
  Tensor rope_freqs;           // optional (rope_dims/2) f32 frequency factors
};

// Binds every tensor the config calls for. `data` holds the file's tensor
// data section (data_size() bytes starting at the file's data_offset()).
Result<ModelWeights> bind_weights(const GgufFile& file, const ModelConfig& config, const uint8_t* data);

// Repacks, in place in `arena` (the `data` the weights were bound to), the
// matrices the active kernels read faster in another layout (repack.h): the
// layers' projections and a separate output matrix, never the embeddings
// (their rows are read one by one), and only a tensor whose bytes no other
// tensor shares. Returns how many tensors it repacked.
int repack_weights(ModelWeights* weights, uint8_t* arena);

}  // namespace wllm
