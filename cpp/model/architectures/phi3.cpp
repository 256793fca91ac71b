// phi3 (Phi-3 and Phi-3.5 mini and medium, Phi-4-mini): Llama's tensors and
// forward pass with fused matrices: one Wqkv (q, k and v rows) and one
// W_gate_up of twice the feed-forward width (gate rows, then up rows). Each
// part is bound as a range of its matrix's rows (TensorList::part in
// weights.cpp), so it goes through the same kernels and repacking as a
// matrix of its own, with no copy. NeoX RoPE over the first
// rope.dimension_count dims of each head (Phi-4-mini rotates 3/4 of them),
// and LongRoPE: per-frequency divisors, rope_factors_long for contexts
// beyond rope.scaling.original_context_length and rope_factors_short
// otherwise, with cos and sin scaled by rope.scaling.attn_factor
// (forward.cpp). The sliding window some files give is ignored, as
// llama.cpp ignores it. llama.cpp: src/models/phi3.cpp.
#include <algorithm>
#include <cmath>

#include "model/architecture.h"
#include "model/architectures/llama.h"

namespace wllm {
namespace {

// Phi-3.5 and Phi-4-mini: 131072 positions of context from 4096 pretrained.
constexpr int kContextExtension = 32;
constexpr int kRotatedQuarters = 3;  // Phi-4-mini's partial_rotary_factor, 0.75

Status phi3_config(ConfigKeys& keys, ModelConfig* c) {
  c->rope_neox = true;
  c->fused_gate_up = true;  // the only layout llama.cpp reads
  // Read, and written by synth, but not used: llama.cpp switches Phi's
  // sliding window off (every layer attends to the whole context).
  WLLM_RETURN_IF_ERROR(keys.count("attention.sliding_window", &c->sliding_window, 0, 1 << 30));
  WLLM_RETURN_IF_ERROR(keys.number("attention.layer_norm_rms_epsilon", &c->norm_eps, 0.0f, 1.0f, true));
  return require_attention_layers(*c);
}

// Phi-4-mini's structure: fused matrices, 3/4 of each head rotating, and
// LongRoPE divisors for a context 32 times the pretrained one, with the
// magnitude scale llama.cpp's converter writes for it:
// sqrt(1 + ln(scale) / ln(pretrained context)).
void phi3_synth(ModelConfig* c) {
  c->norm_eps = 1e-5f;
  c->fused_qkv = true;
  c->rope_dims = c->head_dim * kRotatedQuarters / 4 / 2 * 2;
  c->rope_long_short = true;
  c->rope_orig_ctx = std::max(2, c->n_ctx_train / kContextExtension);
  const double scale = static_cast<double>(c->n_ctx_train) / c->rope_orig_ctx;
  if (scale > 1.0) {
    c->rope_attn_factor = static_cast<float>(std::sqrt(1.0 + std::log(scale) / std::log(c->rope_orig_ctx)));
  }
}

}  // namespace

extern const Architecture kPhi3 = {"phi3", phi3_config, llama_tensors, llama_forward, phi3_synth};

}  // namespace wllm
