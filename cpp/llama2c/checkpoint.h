// llama2.c checkpoints (karpathy/llama2.c: the `.bin` files run.c reads and
// export.py writes in its default, "legacy" format): the header, and where
// each weight lies in the file, in GGUF's names and shapes.
//
// File layout (little-endian, no magic):
//   7 x i32   dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len
//             (vocab_size < 0: the classifier is a matrix of its own, stored
//             last; otherwise it shares the token embedding)
//   f32 weights, each matrix row by row (a row is one output's input weights):
//     token_embedding (vocab, dim)
//     rms_att (layer, dim) | wq (layer, q_dim, dim) | wk, wv (layer, kv_dim, dim)
//     wo (layer, dim, q_dim) | rms_ffn (layer, dim)
//     w1 (layer, hidden, dim) | w2 (layer, dim, hidden) | w3 (layer, hidden, dim)
//     rms_final (dim)
//     freq_cis_real, freq_cis_imag (seq_len, head_size/2): RoPE tables that
//       run.c no longer reads (it computes the rotation), skipped here too
//     wcls (vocab, dim), only when vocab_size < 0
// where head_size = dim / n_heads, q_dim = dim and kv_dim = n_kv_heads·head_size.
// Each (layer, ...) block holds layer 0's matrix, then layer 1's, ...
//
// Every field is checked before use, and the file must be exactly the size
// the header implies: a truncated or lying file is an error naming both sizes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"

namespace wllm {

inline constexpr uint64_t kLlama2cHeaderBytes = 7 * 4;

struct Llama2cConfig {
  int dim = 0;
  int hidden_dim = 0;
  int n_layers = 0;
  int n_heads = 0;
  int n_kv_heads = 0;
  int vocab_size = 0;              // |vocab_size| of the header
  int seq_len = 0;                 // the context it was trained with
  bool shared_classifier = true;   // the header's vocab_size was positive
  int head_size() const { return dim / n_heads; }
};

// The header in the first kLlama2cHeaderBytes of `prefix`. kBadFile if a
// field is out of range (then the bytes are not a llama2.c header at all):
// the message names the field.
Result<Llama2cConfig> parse_llama2c_header(std::span<const uint8_t> prefix);

// kBadFile (naming the shapes and sizes) unless the shapes fit together
// (heads dividing dim into even sizes, kv heads dividing heads) and the
// checkpoint they describe is file_size bytes long.
Status check_llama2c_checkpoint(const Llama2cConfig& c, uint64_t file_size);

// One weight of the checkpoint as a GGUF tensor (f32).
struct Llama2cTensor {
  std::string name;       // llama.cpp's name, e.g. "blk.0.attn_q.weight"
  std::vector<int64_t> shape;  // ne[0] (the row length) first
  uint64_t file_offset;   // its first byte in the checkpoint
  uint64_t n_bytes;
};

// The tensors in the order llama.cpp's convert-llama2c-to-ggml writes them
// (token_embd, output_norm, output, then per layer attn_q, attn_k, attn_v,
// attn_output, attn_norm, ffn_gate, ffn_down, ffn_up, ffn_norm), without
// output.weight when the classifier is the token embedding (a GGUF reader
// then ties them).
std::vector<Llama2cTensor> llama2c_tensors(const Llama2cConfig& c);

}  // namespace wllm
