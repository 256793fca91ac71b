// gemma3 (Gemma 3 270M to 27B, text): pre- and post-norm blocks (the
// attention's and the feed-forward's outputs are RMS-normalised before the
// residual add), RMSNorm on each query and key head, a GELU-gated
// feed-forward, the embedding scaled by sqrt(dim), and sliding-window
// attention: 5 local layers (window of attention.sliding_window positions,
// their own RoPE base) to 1 global. Norm gains are stored with Gemma's +1
// already added, as llama.cpp's converter writes them.
// llama.cpp: src/models/gemma3.cpp.
#include <cmath>

#include "model/architecture.h"
#include "model/architectures/llama.h"

namespace wllm {
namespace {

constexpr int kDefaultPattern = 6;  // every 6th layer is global
constexpr int kLayers27B = 62;

Status gemma3_config(ConfigKeys& keys, ModelConfig* c) {
  c->rope_neox = true;
  if (keys.reading()) {  // llama.cpp's defaults where the file is silent
    c->rope_freq_base_local = 10000.0f;
    c->sliding_window_pattern = kDefaultPattern;
  }
  WLLM_RETURN_IF_ERROR(keys.count("attention.sliding_window", &c->sliding_window, 0, 1 << 24));
  WLLM_RETURN_IF_ERROR(keys.number("rope.freq_base_swa", &c->rope_freq_base_local, 1.0f, 1e12f));
  WLLM_RETURN_IF_ERROR(keys.number("final_logit_softcapping", &c->logit_softcap, 0.0f, 1e6f));
  // The pattern: every n-th layer global, or a flag per layer (1: local).
  std::vector<int> local(c->n_layers, 0);
  if (keys.is_array("attention.sliding_window_pattern")) {
    WLLM_RETURN_IF_ERROR(keys.per_layer("attention.sliding_window_pattern", c->n_layers, &local, 0, 1));
  } else {
    WLLM_RETURN_IF_ERROR(keys.count("attention.sliding_window_pattern", &c->sliding_window_pattern, 1, 1 << 20));
    const int n = c->sliding_window_pattern;
    for (int l = 0; l < c->n_layers; ++l) local[l] = l % n < n - 1;
  }
  for (int l = 0; l < c->n_layers; ++l) c->layers[l].window = local[l] && c->sliding_window > 0 ? c->sliding_window : 0;
  if (c->sliding_window == 0) c->rope_freq_base_local = 0;  // no local layers
  c->embed_scale = std::sqrt(static_cast<float>(c->dim));
  // Queries are scaled by 1/sqrt(head width); the 27B's by 1/sqrt(dim / heads).
  c->attn_scale = 1.0f / std::sqrt(static_cast<float>(c->n_layers == kLayers27B ? c->dim / c->n_heads : c->head_dim));
  return require_attention_layers(*c);
}

// Llama's, and the gains of the head norms and of the output norms.
void gemma3_tensors(TensorList& t, const ModelConfig& c, ModelWeights* w) {
  llama_tensors(t, c, w);
  for (int l = 0; l < c.n_layers; ++l) {
    LayerWeights& L = w->layers[l];
    qk_norm_tensors(t, c, l, &L);
    t.add(layer_tensor(l, "post_attention_norm.weight"), {c.dim}, TensorRole::kNorm, &L.attn_post_norm);
    t.add(layer_tensor(l, "post_ffw_norm.weight"), {c.dim}, TensorRole::kNorm, &L.ffn_post_norm);
  }
}

void gemma3_forward(Forward& f) {
  const ModelConfig& c = f.config;
  const ModelWeights& w = f.weights;
  f.embed(w.token_embd, c.embed_scale);            // x = token_embd[token]·√dim
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& L = w.layers[l];
    f.rmsnorm(f.xb, f.x, L.attn_norm);             // xb = rmsnorm(x)·w
    f.qkv(L, f.xb);                                // q, k, v = Wq·xb, Wk·xb, Wv·xb
    f.head_rmsnorm(f.q, c.n_heads, L.q_norm);      // each query head: rmsnorm(q_h)·w
    f.head_rmsnorm(f.k, c.n_kv_heads, L.k_norm);   // each key head: rmsnorm(k_h)·w
    f.rope(l);                                     // rotate q and k (local layers: their own base)
    f.attention(l);                                // att = softmax(q·Kᵀ·scale)·V over the layer's window
    f.matmul(L.wo, f.att, f.xb);                   // xb = Wo·att
    f.rmsnorm(f.xb, f.xb, L.attn_post_norm);       // xb = rmsnorm(xb)·w
    f.add(f.x, f.xb);                              // x += xb
    f.rmsnorm(f.xb, f.x, L.ffn_norm);              // xb = rmsnorm(x)·w
    f.gated_ffn(L, Forward::Gate::kGelu);          // xb = W_down·(gelu(W_gate·xb) ⊙ W_up·xb)
    f.rmsnorm(f.xb, f.xb, L.ffn_post_norm);        // xb = rmsnorm(xb)·w
    f.add(f.x, f.xb);                              // x += xb
  }
  f.output(w.output_norm, w.output);               // logits = W_out·rmsnorm(x)·w
  if (c.logit_softcap > 0) f.cap_logits(c.logit_softcap);  // logits = cap·tanh(logits/cap)
}

void gemma3_synth(ModelConfig* c) {
  c->norm_eps = 1e-6f;
  c->sliding_window = 512;
  c->sliding_window_pattern = kDefaultPattern;
  c->rope_freq_base_local = 10000.0f;
}

}  // namespace

extern const Architecture kGemma3 = {"gemma3", gemma3_config, gemma3_tensors, gemma3_forward, gemma3_synth};

}  // namespace wllm
