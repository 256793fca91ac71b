// qwen3 (Qwen3 0.6B to 32B, dense; Qwen3-Embedding, Qwen3-Reranker):
// Llama's blocks with an RMSNorm on each query and key head before RoPE,
// NeoX-style RoPE, and a head width of its own (attention.key_length; 128
// where dim / heads is 64).
// llama.cpp: src/models/qwen3.cpp.
#include "model/architecture.h"
#include "model/architectures/llama.h"

namespace wllm {
namespace {

Status qwen3_config(ConfigKeys&, ModelConfig* c) {
  c->rope_neox = true;
  c->rank_softmax = true;
  return require_attention_layers(*c);
}

// Llama's, the gains of the query and key head norms, and a reranker's
// score projection (Qwen3-Reranker: cls.output, pooled from the last token).
void qwen3_tensors(TensorList& t, const ModelConfig& c, ModelWeights* w) {
  llama_tensors(t, c, w);
  for (int l = 0; l < c.n_layers; ++l) qk_norm_tensors(t, c, l, &w->layers[l]);
  classifier_tensors(t, c, w, c.dim);
}

void qwen3_forward(Forward& f) {
  const ModelConfig& c = f.config;
  const ModelWeights& w = f.weights;
  f.embed(w.token_embd);                           // x = token_embd[token]
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& L = w.layers[l];
    f.rmsnorm(f.xb, f.x, L.attn_norm);             // xb = rmsnorm(x)·w
    f.qkv(L, f.xb);                                // q, k, v = Wq·xb, Wk·xb, Wv·xb
    f.head_rmsnorm(f.q, c.n_heads, L.q_norm);      // each query head: rmsnorm(q_h)·w
    f.head_rmsnorm(f.k, c.n_kv_heads, L.k_norm);   // each key head: rmsnorm(k_h)·w
    f.rope(l);                                     // rotate q and k by position
    f.attention(l);                                // att = softmax(q·Kᵀ/√d)·V over the cache
    f.matmul(L.wo, f.att, f.xb);                   // xb = Wo·att
    f.add(f.x, f.xb);                              // x += xb
    f.rmsnorm(f.xb, f.x, L.ffn_norm);              // xb = rmsnorm(x)·w
    f.gated_ffn(L, Forward::Gate::kSilu);          // xb = W_down·(silu(W_gate·xb) ⊙ W_up·xb)
    f.add(f.x, f.xb);                              // x += xb
  }
  f.output(w.output_norm, w.output);               // logits = W_out·rmsnorm(x)·w
}

void qwen3_synth(ModelConfig* c) { c->norm_eps = 1e-6f; }

}  // namespace

extern const Architecture kQwen3 = {"qwen3", qwen3_config, qwen3_tensors, qwen3_forward, qwen3_synth};

}  // namespace wllm
