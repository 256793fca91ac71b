// gemma2 (Gemma 2 2B to 27B): Gemma 3's blocks without the head norms, with
// attention scores and the output logits soft-capped (cap·tanh(x/cap)), and
// sliding-window attention on every other layer (the even ones; window
// attention.sliding_window, 4096 where the file is silent). The output
// matrix is always the embedding's.
// llama.cpp: src/models/gemma2.cpp.
#include <cmath>

#include "model/architecture.h"
#include "model/architectures/llama.h"

namespace wllm {
namespace {

// llama.cpp's values where the file is silent.
constexpr int kDefaultWindow = 4096;
constexpr float kDefaultAttentionCap = 50.0f;
constexpr float kDefaultLogitCap = 30.0f;
constexpr int kLayers27B = 46;

Status gemma2_config(ConfigKeys& keys, ModelConfig* c) {
  c->rope_neox = true;
  c->tied_output = true;  // the output is always token_embd (as llama.cpp reads gemma2)
  if (keys.reading()) {
    c->sliding_window = kDefaultWindow;
    c->attn_softcap = kDefaultAttentionCap;
    c->logit_softcap = kDefaultLogitCap;
  }
  WLLM_RETURN_IF_ERROR(keys.count("attention.sliding_window", &c->sliding_window, 0, 1 << 24));
  // Local layers rotate as the global ones unless the file gives them a base.
  WLLM_RETURN_IF_ERROR(keys.number("rope.freq_base_swa", &c->rope_freq_base_local, 1.0f, 1e12f));
  c->rope_freq_scale_local = c->rope_freq_scale;
  WLLM_RETURN_IF_ERROR(keys.number("attn_logit_softcapping", &c->attn_softcap, 0.0f, 1e6f));
  WLLM_RETURN_IF_ERROR(keys.number("final_logit_softcapping", &c->logit_softcap, 0.0f, 1e6f));
  for (int l = 0; l < c->n_layers; ++l) c->layers[l].window = l % 2 == 0 ? c->sliding_window : 0;
  c->embed_scale = std::sqrt(static_cast<float>(c->dim));
  // Queries are scaled by 1/sqrt(head width); the 27B's by 1/sqrt(dim / heads).
  c->attn_scale = 1.0f / std::sqrt(static_cast<float>(c->n_layers == kLayers27B ? c->dim / c->n_heads : c->head_dim));
  return require_attention_layers(*c);
}

// Llama's, and the gains of the norms of the attention's and the
// feed-forward's outputs.
void gemma2_tensors(TensorList& t, const ModelConfig& c, ModelWeights* w) {
  llama_tensors(t, c, w);
  for (int l = 0; l < c.n_layers; ++l) {
    LayerWeights& L = w->layers[l];
    t.add(layer_tensor(l, "post_attention_norm.weight"), {c.dim}, TensorRole::kNorm, &L.attn_post_norm);
    t.add(layer_tensor(l, "post_ffw_norm.weight"), {c.dim}, TensorRole::kNorm, &L.ffn_post_norm);
  }
}

void gemma2_forward(Forward& f) {
  const ModelConfig& c = f.config;
  const ModelWeights& w = f.weights;
  f.embed(w.token_embd, c.embed_scale);            // x = token_embd[token]·√dim
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& L = w.layers[l];
    f.rmsnorm(f.xb, f.x, L.attn_norm);             // xb = rmsnorm(x)·w
    f.qkv(L, f.xb);                                // q, k, v = Wq·xb, Wk·xb, Wv·xb
    f.rope(l);                                     // rotate q and k by position
    f.attention(l);                                // att = softmax(cap·tanh(q·Kᵀ·scale/cap))·V (even layers: a window)
    f.matmul(L.wo, f.att, f.xb);                   // xb = Wo·att
    f.rmsnorm(f.xb, f.xb, L.attn_post_norm);       // xb = rmsnorm(xb)·w
    f.add(f.x, f.xb);                              // x += xb
    f.rmsnorm(f.xb, f.x, L.ffn_norm);              // xb = rmsnorm(x)·w
    f.gated_ffn(L, Forward::Gate::kGelu);          // xb = W_down·(gelu(W_gate·xb) ⊙ W_up·xb)
    f.rmsnorm(f.xb, f.xb, L.ffn_post_norm);        // xb = rmsnorm(xb)·w
    f.add(f.x, f.xb);                              // x += xb
  }
  f.output(w.output_norm, w.output);               // logits = W_out·rmsnorm(x)·w
  f.cap_logits(c.logit_softcap);                   // logits = cap·tanh(logits/cap)
}

void gemma2_synth(ModelConfig* c) {
  c->norm_eps = 1e-6f;
  c->sliding_window = kDefaultWindow;
  c->attn_softcap = kDefaultAttentionCap;
  c->logit_softcap = kDefaultLogitCap;
}

}  // namespace

extern const Architecture kGemma2 = {"gemma2", gemma2_config, gemma2_tensors, gemma2_forward, gemma2_synth};

}  // namespace wllm
