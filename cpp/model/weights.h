// The model's weight tensors: views into the arena that holds the file's
// tensor data. Each architecture lists the tensors it reads (its `tensors`
// function, through a TensorList); the same list binds a file's tensors here,
// shape-checked, and tells `synth` what to write.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/status.h"
#include "gguf/gguf.h"
#include "model/config.h"
#include "ops/tensor.h"

namespace wllm {

// Every tensor any architecture has; each reads the ones it needs, the rest
// stay absent (Tensor::present() is false).
struct LayerWeights {
  Tensor attn_norm, attn_norm_b;  // (dim) f32: RMSNorm weight (LayerNorm: and bias)
  Tensor wqkv, bqkv;              // fused (dim -> q_dim + 2·kv_dim) and its bias, where the file has them
  Tensor wq, wk, wv;              // (dim -> q_dim), (dim -> kv_dim) x2; rows of wqkv when fused
  Tensor bq, bk, bv;              // (q_dim), (kv_dim) x2 f32; parts of bqkv when fused
  Tensor q_norm, k_norm;          // (head_dim) f32: RMSNorm of each query and key head
  Tensor q_norm_b, k_norm_b;      // jina-bert-v2: q_norm, k_norm are (dim) LayerNorm gains, these their biases
  Tensor wo, bo;                  // (q_dim -> dim), (dim) f32
  Tensor attn_post_norm;          // (dim) f32: RMSNorm of the attention output
  Tensor attn_out_norm, attn_out_norm_b;    // (dim) f32: encoders' LayerNorm after the attention's residual add
  Tensor attn_norm_2, attn_norm_2_b;        // (dim) f32: jina-bert-v2's second one
  Tensor ffn_norm, ffn_norm_b;    // (dim) f32
  Tensor w_gate_up;               // fused (dim -> 2·ffn_dim): gate rows, then up rows
  Tensor w_gate, w_up;            // (dim -> ffn_dim); rows of w_gate_up when fused
  Tensor b_up, b_gate;            // (ffn_dim) f32
  Tensor b_gate_up;               // fused (2·ffn_dim) f32: the gate's bias, then the up's
  Tensor w_down, b_down;          // (ffn_dim -> dim), (dim) f32
  Tensor ffn_post_norm;           // (dim) f32: RMSNorm of the feed-forward output
  Tensor layer_out_norm, layer_out_norm_b;  // (dim) f32: encoders' LayerNorm ending the layer
  Tensor conv_in, conv, conv_out; // short convolution: (dim -> 3·dim), (taps) x dim f32, (dim -> dim)
};

struct ModelWeights {
  Tensor token_embd;           // (n_vocab rows of dim)
  Tensor pos_embd;             // (n_ctx_train rows of dim): learned positions (gpt2, bert)
  Tensor type_embd;            // (n_token_types rows of dim): token types (encoders; row 0 is added)
  Tensor embd_norm, embd_norm_b;  // (dim) f32: encoders' LayerNorm of the embeddings
  std::vector<LayerWeights> layers;
  Tensor output_norm, output_norm_b;  // (dim) f32
  Tensor output;               // (dim -> n_vocab); token_embd when tied
  Tensor rope_freqs;           // (rope_dims/2) f32 frequency divisors
  // A reranker's classification head (rank pooling): cls (dim -> dim, then
  // tanh) and cls_out (dim -> n_cls_out), each optional, with biases.
  Tensor cls, cls_b, cls_out, cls_out_b;
  Tensor rope_long, rope_short;  // (rope_dims/2) f32 LongRoPE divisors: contexts beyond rope_orig_ctx, the rest
};

// What a tensor is for: whether it may be repacked, what type it must have,
// and how `synth` fills it.
enum class TensorRole {
  kEmbedding,  // rows looked up one at a time: never repacked
  kMatrix,     // a projection: any type, repacked for the active kernels
  kOutput,     // the output matrix: as kMatrix, filled by synth to give peaked logits
  kNorm,       // f32 gains, around 1
  kBias,       // f32, around 0
  kFactors,    // f32 RoPE frequency divisors, >= 1
  kConv,       // f32 convolution taps
};

// The visitor an architecture's `tensors` function calls for each tensor.
class TensorList {
 public:
  virtual ~TensorList() = default;
  // A tensor of the file, of shape `ne` (ne[0]: the row length), into *dest.
  virtual void add(const std::string& name, std::initializer_list<int64_t> ne, TensorRole role, Tensor* dest) = 0;
  // *dest = rows [first_row, first_row + n_rows) of *whole (added before):
  // one part of a fused matrix (or, for a 1-D tensor, elements), no copy.
  virtual void part(Tensor* dest, const Tensor* whole, int64_t first_row, int64_t n_rows) = 0;
  // Whether an optional tensor is there: in the file being bound (`synth`
  // writes every one).
  virtual bool has(const std::string& /*name*/) const { return true; }
  // add() if has(name).
  void add_optional(const std::string& name, std::initializer_list<int64_t> ne, TensorRole role, Tensor* dest) {
    if (has(name)) add(name, ne, role, dest);
  }
};

// The tensors most architectures share, in llama.cpp's names:
// token_embd, and output_norm (or the name given) + output (or token_embd
// when tied), and the RoPE frequency divisors the file has.
void embedding_tensors(TensorList& t, const ModelConfig& c, ModelWeights* w);
void output_tensors(TensorList& t, const ModelConfig& c, ModelWeights* w, const char* norm = "output_norm.weight");
// attn_q/k/v (or fused attn_qkv), with their biases where the file has them.
void qkv_tensors(TensorList& t, const ModelConfig& c, int layer, LayerWeights* L);
// attn_q_norm, attn_k_norm: the gains of per-head query and key RMSNorms.
void qk_norm_tensors(TensorList& t, const ModelConfig& c, int layer, LayerWeights* L);
// ffn_gate, ffn_up, ffn_down: a gated feed-forward (fused: ffn_up of twice
// the width, gate rows then up rows, and ffn_down).
void gated_ffn_tensors(TensorList& t, const ModelConfig& c, int layer, LayerWeights* L);
// cls (dim -> cls_rows), cls.output (cls_rows -> n_cls_out) and their
// biases: a reranker's classification head, where the file has one.
void classifier_tensors(TensorList& t, const ModelConfig& c, ModelWeights* w, int64_t cls_rows);
// "blk.<layer>.<name>"
std::string layer_tensor(int layer, const char* name);

// Binds every tensor the architecture lists. `data` holds the file's tensor
// data section (data_size() bytes starting at the file's data_offset()). A
// missing tensor, or one whose shape or type differs, is an error naming it.
Result<ModelWeights> bind_weights(const GgufFile& file, const ModelConfig& config, const uint8_t* data);

// Repacks, in place in `arena` (the `data` the weights were bound to), the
// matrices the active kernels read faster in another layout (repack.h):
// kMatrix and kOutput tensors, never embeddings (their rows are read one by
// one), only a tensor whose bytes no other tensor shares, and a fused matrix
// only when each of its parts is whole groups of rows. Returns how many
// tensors it repacked.
int repack_weights(const ModelConfig& config, ModelWeights* weights, uint8_t* arena);

// A checksum (core/checksum.h) of the file's header and tensor data as the
// file has them: `arena` read in order, each repacked tensor's rows unpacked
// a group at a time. Every build gives the same, whatever its kernels
// repacked; the engine names its model by it (Engine::model_id).
uint64_t file_checksum(const GgufFile& file, const ModelConfig& config, ModelWeights* weights, const uint8_t* arena);

}  // namespace wllm
