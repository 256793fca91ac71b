// gpt2 (GPT-2 124M to 1.5B): pre-norm blocks with LayerNorm (a gain and a
// bias), learned position embeddings added to the token's and no RoPE, one
// fused Wqkv with a bias, an output projection with a bias, and a plain GELU
// feed-forward with biases. llama.cpp: src/models/gpt2.cpp.
#include "model/architecture.h"
#include "model/forward.h"
#include "model/weights.h"

namespace wllm {
namespace {

Status gpt2_config(ConfigKeys& keys, ModelConfig* c) {
  // LayerNorm's epsilon has its own key, which llama.cpp requires.
  WLLM_RETURN_IF_ERROR(keys.number("attention.layer_norm_epsilon", &c->norm_eps, 0.0f, 1.0f, true));
  c->fused_qkv = true;  // the only layout llama.cpp reads, with its bias
  c->qkv_bias = true;
  c->rope_factors = false;
  return require_attention_layers(*c);
}

void gpt2_tensors(TensorList& t, const ModelConfig& c, ModelWeights* w) {
  embedding_tensors(t, c, w);
  t.add("position_embd.weight", {c.dim, c.n_ctx_train}, TensorRole::kEmbedding, &w->pos_embd);
  output_tensors(t, c, w);
  t.add("output_norm.bias", {c.dim}, TensorRole::kBias, &w->output_norm_b);
  for (int l = 0; l < c.n_layers; ++l) {
    LayerWeights& L = w->layers[l];
    t.add(layer_tensor(l, "attn_norm.weight"), {c.dim}, TensorRole::kNorm, &L.attn_norm);
    t.add(layer_tensor(l, "attn_norm.bias"), {c.dim}, TensorRole::kBias, &L.attn_norm_b);
    qkv_tensors(t, c, l, &L);
    t.add(layer_tensor(l, "attn_output.weight"), {c.q_dim(), c.dim}, TensorRole::kMatrix, &L.wo);
    t.add(layer_tensor(l, "attn_output.bias"), {c.dim}, TensorRole::kBias, &L.bo);
    t.add(layer_tensor(l, "ffn_norm.weight"), {c.dim}, TensorRole::kNorm, &L.ffn_norm);
    t.add(layer_tensor(l, "ffn_norm.bias"), {c.dim}, TensorRole::kBias, &L.ffn_norm_b);
    t.add(layer_tensor(l, "ffn_down.weight"), {c.ffn_dim, c.dim}, TensorRole::kMatrix, &L.w_down);
    t.add(layer_tensor(l, "ffn_down.bias"), {c.dim}, TensorRole::kBias, &L.b_down);
    t.add(layer_tensor(l, "ffn_up.weight"), {c.dim, c.ffn_dim}, TensorRole::kMatrix, &L.w_up);
    t.add(layer_tensor(l, "ffn_up.bias"), {c.ffn_dim}, TensorRole::kBias, &L.b_up);
  }
}

void gpt2_forward(Forward& f) {
  const ModelConfig& c = f.config;
  const ModelWeights& w = f.weights;
  f.embed(w.token_embd);                               // x = token_embd[token]
  f.add_positions(w.pos_embd);                         // x += pos_embd[position]
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& L = w.layers[l];
    f.layernorm(f.xb, f.x, L.attn_norm, L.attn_norm_b);  // xb = layernorm(x)·w + b
    f.qkv(L, f.xb);                                    // q, k, v = Wqkv·xb + bqkv
    f.attention(l);                                    // att = softmax(q·Kᵀ/√d)·V over the cache
    f.matmul(L.wo, f.att, f.xb);                       // xb = Wo·att
    f.add_bias(f.xb, L.bo);                            // xb += bo
    f.add(f.x, f.xb);                                  // x += xb
    f.layernorm(f.xb, f.x, L.ffn_norm, L.ffn_norm_b);  // xb = layernorm(x)·w + b
    f.matmul(L.w_up, f.xb, f.hb);                      // hb = W_up·xb
    f.add_bias(f.hb, L.b_up);                          // hb += b_up
    f.gelu(f.hb, c.ffn_dim);                           // hb = gelu(hb)
    f.matmul(L.w_down, f.hb, f.xb);                    // xb = W_down·hb
    f.add_bias(f.xb, L.b_down);                        // xb += b_down
    f.add(f.x, f.xb);                                  // x += xb
  }
  f.output(w.output_norm, w.output_norm_b, w.output);  // logits = W_out·(layernorm(x)·w + b)
}

// No RoPE keys: GPT-2's files have none.
void gpt2_synth(ModelConfig* c) {
  c->rope_dims = 0;
  c->rope_freq_base = 0;
}

}  // namespace

extern const Architecture kGpt2 = {"gpt2", gpt2_config, gpt2_tensors, gpt2_forward, gpt2_synth};

}  // namespace wllm
