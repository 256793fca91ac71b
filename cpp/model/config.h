// Hyperparameters of a model, read from GGUF metadata: the keys every
// architecture shares (config.cpp) and each architecture's own (listed in its
// file under architectures/, through the same ConfigKeys list that reads a
// file and writes one for `synth`).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "gguf/gguf.h"

namespace wllm {

class GgufWriter;
struct Architecture;

// How an embedding is made from the hidden states of a text's tokens, with
// llama.cpp's numbers (llama_pooling_type, the GGUF's pooling_type): none,
// their mean, the first token's (BERT's [CLS]), the last token's, or a
// reranker's classification head on the first (or, qwen3, the last) token.
enum class Pooling { kNone = 0, kMean = 1, kCls = 2, kLast = 3, kRank = 4 };
const char* pooling_name(Pooling pooling);  // "none", "mean", "cls", "last", "rank"
bool parse_pooling(std::string_view name, Pooling* pooling);  // the inverse; false for other names

// What one layer is: attention (global or over a sliding window), or a
// short convolution (lfm2), and whether its queries and keys rotate.
struct LayerConfig {
  bool attention = true;  // false: a short-convolution layer
  int n_kv_heads = 0;     // attention layers: key-value heads
  int window = 0;         // > 0: attends to the last `window` positions only
  bool rope = true;       // false: no rotary position embedding (smollm3)
};

struct ModelConfig {
  const Architecture* arch = nullptr;
  std::string arch_name;     // general.architecture
  std::string name;          // general.name, if any
  int n_vocab = 0;
  int dim = 0;               // embedding width
  int n_layers = 0;
  int n_heads = 0;
  int n_kv_heads = 0;        // < n_heads: grouped-query attention (the most any layer has)
  int head_dim = 0;          // per-head width of q, k and v
  int ffn_dim = 0;           // feed-forward hidden width
  int n_ctx_train = 0;       // context length the model was trained with
  float norm_eps = 1e-5f;    // RMSNorm (or LayerNorm) epsilon

  // Rotary position embedding of the global layers; local (sliding-window)
  // layers may rotate with their own base.
  int rope_dims = 0;         // leading dims of each head that rotate
  float rope_freq_base = 10000.0f;
  float rope_freq_scale = 1.0f;       // 1 / linear scaling factor
  float rope_freq_base_local = 0.0f;  // > 0: local layers rotate with this base and
  float rope_freq_scale_local = 1.0f; //   this scale (and no frequency divisors)
  bool rope_neox = false;             // rotate (i, i + n/2), not (2i, 2i + 1)
  float rope_attn_factor = 1.0f;      // cos and sin are multiplied by this (LongRoPE's magnitude scale)
  int rope_orig_ctx = 0;              // context the model was pretrained with: LongRoPE's long
                                      //   factors rotate contexts beyond it, the short ones the rest

  // Scales and caps (0 or 1 where unused).
  float attn_scale = 0.0f;       // query scale; 0: 1/sqrt(head_dim)
  float attn_softcap = 0.0f;     // > 0: scores = cap·tanh(scores/cap) (gemma2)
  float logit_softcap = 0.0f;    // > 0: the same on the output logits
  float embed_scale = 1.0f;      // the token embedding is multiplied by this
  float residual_scale = 1.0f;   // each block's output is scaled before the residual add (granite)
  float logit_scale = 1.0f;      // the logits are multiplied by 1/this (granite)

  // Sliding-window attention: the window and how layers alternate.
  int sliding_window = 0;        // positions a local layer sees; 0: none
  int sliding_window_pattern = 0;  // every n-th layer is global, the others local
  int shortconv_l_cache = 0;     // lfm2: taps of the short convolution

  // Embedding models (encoders, and decoders that embed).
  bool encoder = false;          // no output layer: the model gives embeddings only (its Architecture's)
  bool causal = true;            // attention.causal: false: every token sees the whole text
  Pooling pooling = Pooling::kNone;  // pooling_type: how the model's embeddings are pooled
  int n_token_types = 0;         // tokenizer.ggml.token_type_count: rows of token_types
  int n_cls_out = 1;             // classifier.output_labels: the scores a reranker gives
  bool rank_softmax = false;     // qwen3: rank pooling takes the last token, its scores softmaxed (llama.cpp)
  float alibi_bias_max = 0.0f;   // > 0: ALiBi (jina-bert-v2): scores fall with distance, per head

  // What the file holds, found by looking for the tensors (as llama.cpp's
  // loader does): these choose among the tensor layouts an architecture allows.
  bool tied_output = false;  // no output.weight: token_embd is the output matrix
  bool fused_qkv = false;    // attn_qkv holds Wq, Wk and Wv as one matrix
  bool fused_gate_up = false;  // ffn_up holds W_gate, then W_up, as one matrix of twice the width (phi3, jina-bert-v2)
  bool qkv_bias = false;     // the q, k and v projections have biases
  bool rope_factors = false; // rope_freqs.weight: per-frequency divisors
  bool token_types = false;  // token_types.weight: token-type embeddings (row 0 is added)
  bool cls_head = false;     // cls.weight: a reranker's dense layer (then tanh) before its scores
  bool cls_out = false;      // cls.output.weight: a reranker's projection to its scores
  bool qk_norm = false;      // attn_q_norm, attn_k_norm: LayerNorms of the queries and keys (jina-bert-v2)
  bool attn_norm_2 = false;  // attn_norm_2: a second post-attention LayerNorm (jina-bert-v2)
  bool gated_ffn = false;    // ffn_gate, or ffn_up of 2·ffn_dim rows: the feed-forward is gated
  bool rope_long_short = false;  // rope_factors_long/short.weight: LongRoPE's two sets of divisors

  std::vector<LayerConfig> layers;  // one per layer, filled by the architecture

  int q_dim() const { return n_heads * head_dim; }
  int kv_dim() const { return n_kv_heads * head_dim; }
  int layer_kv_dim(int l) const { return layers[l].n_kv_heads * head_dim; }
  float query_scale() const;  // attn_scale, or 1/sqrt(head_dim)
  int local_layers() const;   // layers with a sliding window
};

// The metadata keys of an architecture, "<arch>.<suffix>", each bound to its
// field: reading fills the config from a file (checking ranges), writing puts
// the fields into a GgufWriter (`synth`). One list serves both, so a key
// cannot be read under one name and written under another.
class ConfigKeys {
 public:
  static ConfigKeys reader(const GgufFile& file, std::string arch);
  static ConfigKeys writer(GgufWriter* out, std::string arch);

  bool reading() const { return file_ != nullptr; }

  // An integer key in [lo, hi]. Optional: absent leaves *value as it is
  // (its default), and writing skips it when *value is 0.
  Status count(std::string_view suffix, int* value, int64_t lo, int64_t hi, bool required = false);
  // A float key in (lo, hi); optional ones are written when *value is not 0.
  Status number(std::string_view suffix, float* value, float lo, float hi, bool required = false);
  // A boolean key; optional, absent leaves *value as it is, and writing
  // skips it when *value is `fallback`.
  Status flag(std::string_view suffix, bool* value, bool fallback);
  // Whether the file holds the key as an array (writing: false).
  bool is_array(std::string_view suffix) const;
  // A per-layer integer array (or one integer for every layer).
  Status per_layer(std::string_view suffix, int n_layers, std::vector<int>* values, int64_t lo, int64_t hi);

  const GgufFile* file() const { return file_; }

 private:
  ConfigKeys(const GgufFile* file, GgufWriter* out, std::string arch) : file_(file), out_(out), arch_(std::move(arch)) {}
  std::string key(std::string_view suffix) const;

  const GgufFile* file_ = nullptr;
  GgufWriter* out_ = nullptr;
  std::string arch_;
};

// Reads and checks the hyperparameters; a missing key or an inconsistent
// value (heads not dividing the width, ...) is an error naming it, and an
// unknown architecture is an error listing the supported ones.
Result<ModelConfig> load_config(const GgufFile& file);

// An error unless every layer has attention (for architectures without
// other kinds of layer).
Status require_attention_layers(const ModelConfig& config);

// Writes the config's metadata (general.architecture and the model's keys,
// and of the tokenizer's only the token-type count): what `synth` puts in a
// file for load_config to read.
// Also derives what the architecture derives from its keys (the layers),
// as load_config does, so *config is then what a reader of the file gets.
Status write_config(ModelConfig* config, GgufWriter* out);

}  // namespace wllm
