// llama (Llama 1-3, Mistral, SmolLM2, TinyLlama, ...) and qwen2 (Qwen2,
// Qwen2.5): pre-norm blocks of grouped-query attention with RoPE, and a
// SwiGLU feed-forward. qwen2 is the same network with biases on q, k and v
// and NeoX-style RoPE (llama.cpp: src/models/llama.cpp, qwen2.cpp). A layer
// may skip RoPE (c.layers[l].rope: smollm3, which reuses this).
#include "model/architectures/llama.h"

#include "model/architecture.h"

namespace wllm {
namespace {

Status llama_config(ConfigKeys&, ModelConfig* c) { return require_attention_layers(*c); }

Status qwen2_config(ConfigKeys& keys, ModelConfig* c) {
  c->rope_neox = true;
  c->qkv_bias = true;
  return llama_config(keys, c);
}

}  // namespace

void llama_tensors(TensorList& t, const ModelConfig& c, ModelWeights* w) {
  embedding_tensors(t, c, w);
  for (int l = 0; l < c.n_layers; ++l) {
    LayerWeights& L = w->layers[l];
    t.add(layer_tensor(l, "attn_norm.weight"), {c.dim}, TensorRole::kNorm, &L.attn_norm);
    qkv_tensors(t, c, l, &L);
    t.add(layer_tensor(l, "attn_output.weight"), {c.q_dim(), c.dim}, TensorRole::kMatrix, &L.wo);
    t.add(layer_tensor(l, "ffn_norm.weight"), {c.dim}, TensorRole::kNorm, &L.ffn_norm);
    gated_ffn_tensors(t, c, l, &L);
  }
  output_tensors(t, c, w);
}

void llama_forward(Forward& f) {
  const ModelConfig& c = f.config;
  const ModelWeights& w = f.weights;
  f.embed(w.token_embd);                           // x = token_embd[token]
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& L = w.layers[l];
    f.rmsnorm(f.xb, f.x, L.attn_norm);             // xb = rmsnorm(x)·w
    f.qkv(L, f.xb);                                // q, k, v = Wq·xb, Wk·xb, Wv·xb (+ biases)
    if (c.layers[l].rope) f.rope(l);               // rotate q and k by position
    f.attention(l);                                // att = softmax(q·Kᵀ/√d)·V over the cache
    f.matmul(L.wo, f.att, f.xb);                   // xb = Wo·att
    f.add(f.x, f.xb);                              // x += xb
    llama_feed_forward(f, L);                      // x += W_down·(silu(W_gate·xb) ⊙ W_up·xb), xb = rmsnorm(x)·w
  }
  f.output(w.output_norm, w.output);               // logits = W_out·rmsnorm(x)·w
}

void llama_feed_forward(Forward& f, const LayerWeights& L) {
  f.rmsnorm(f.xb, f.x, L.ffn_norm);                // xb = rmsnorm(x)·w
  f.matmul2(L.w_gate, f.hb, L.w_up, f.hb2, f.xb);  // hb, hb2 = W_gate·xb, W_up·xb
  f.swiglu(f.hb, f.hb2, f.config.ffn_dim);         // hb = silu(hb) ⊙ hb2
  f.matmul(L.w_down, f.hb, f.xb);                  // xb = W_down·hb
  f.add(f.x, f.xb);                                // x += xb
}

namespace {

void llama_synth(ModelConfig*) {}

void qwen2_synth(ModelConfig* c) { c->norm_eps = 1e-6f; }

}  // namespace

extern const Architecture kLlama = {"llama", llama_config, llama_tensors, llama_forward, llama_synth};
extern const Architecture kQwen2 = {"qwen2", qwen2_config, llama_tensors, llama_forward, qwen2_synth};

}  // namespace wllm
