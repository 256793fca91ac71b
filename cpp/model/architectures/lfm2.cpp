// lfm2 (Liquid's LFM2 and LFM2.5, 350M to 2.6B, dense): a hybrid whose
// layers are either grouped-query attention (RMSNorm on each query and key
// head, NeoX RoPE) or a gated short convolution: b, c, h = W_in·x, then
// c ⊙ conv(b ⊙ h) over the last few positions (conv_state.h keeps the rest of
// the sequence's inputs), then W_out. Which is which comes from the file's
// per-layer key-value head counts: 0 marks a convolution layer. Every layer
// then has the same SwiGLU feed-forward. The final norm is named
// token_embd_norm. llama.cpp: src/models/lfm2.cpp. Not supported: the MoE
// models (architecture lfm2moe), and the sliding-window and bidirectional
// variants (an audio tokenizer and embedding models, not text generators).
#include <iterator>

#include "model/architecture.h"
#include "model/architectures/llama.h"

namespace wllm {
namespace {

// Real models' layers, 16 of them (LFM2-350M to 1.2B, LFM2.5): attention at
// 2, 5, 8, 10, 12 and 14, convolutions elsewhere. `synth` repeats this.
constexpr bool kAttentionLayers[] = {false, false, true, false, false, true, false, false,
                                     true,  false, true, false, true,  false, true, false};
constexpr int kTaps = 3;  // shortconv.l_cache of every released model

Status lfm2_config(ConfigKeys& keys, ModelConfig* c) {
  WLLM_RETURN_IF_ERROR(keys.count("shortconv.l_cache", &c->shortconv_l_cache, 2, 1 << 10, true));
  WLLM_RETURN_IF_ERROR(keys.number("attention.layer_norm_rms_epsilon", &c->norm_eps, 0.0f, 1.0f, true));
  if (keys.reading()) {
    int window = 0;
    WLLM_RETURN_IF_ERROR(keys.count("attention.sliding_window", &window, 0, 1 << 30));
    if (window > 0) {
      return Status::error(ErrorCode::kUnsupported, "lfm2 with sliding-window attention (%d) is not supported", window);
    }
    if (!c->causal) {
      return Status::error(ErrorCode::kUnsupported, "lfm2 with bidirectional attention (an embedding model) is not "
                           "supported");
    }
  }
  // Key and value rows of every attention layer share one buffer width.
  for (int l = 0; l < c->n_layers; ++l) {
    if (c->layers[l].attention && c->layers[l].n_kv_heads != c->n_kv_heads) {
      return Status::error(ErrorCode::kUnsupported, "lfm2: attention layers with different key-value head counts (layer "
                           "%d: %d, another: %d) are not supported", l, c->layers[l].n_kv_heads, c->n_kv_heads);
    }
  }
  c->rope_neox = true;
  c->rope_factors = false;  // llama.cpp rotates without them
  return {};
}

void lfm2_tensors(TensorList& t, const ModelConfig& c, ModelWeights* w) {
  embedding_tensors(t, c, w);
  output_tensors(t, c, w, "token_embd_norm.weight");
  for (int l = 0; l < c.n_layers; ++l) {
    LayerWeights& L = w->layers[l];
    t.add(layer_tensor(l, "attn_norm.weight"), {c.dim}, TensorRole::kNorm, &L.attn_norm);
    if (c.layers[l].attention) {
      qk_norm_tensors(t, c, l, &L);
      qkv_tensors(t, c, l, &L);
      t.add(layer_tensor(l, "attn_output.weight"), {c.q_dim(), c.dim}, TensorRole::kMatrix, &L.wo);
    } else {
      t.add(layer_tensor(l, "shortconv.conv.weight"), {c.shortconv_l_cache, c.dim}, TensorRole::kConv, &L.conv);
      t.add(layer_tensor(l, "shortconv.in_proj.weight"), {c.dim, 3 * c.dim}, TensorRole::kMatrix, &L.conv_in);
      t.add(layer_tensor(l, "shortconv.out_proj.weight"), {c.dim, c.dim}, TensorRole::kMatrix, &L.conv_out);
    }
    t.add(layer_tensor(l, "ffn_norm.weight"), {c.dim}, TensorRole::kNorm, &L.ffn_norm);
    gated_ffn_tensors(t, c, l, &L);
  }
}

void lfm2_forward(Forward& f) {
  const ModelConfig& c = f.config;
  const ModelWeights& w = f.weights;
  f.embed(w.token_embd);                             // x = token_embd[token]
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& L = w.layers[l];
    f.rmsnorm(f.xb, f.x, L.attn_norm);               // xb = rmsnorm(x)·w
    if (c.layers[l].attention) {
      f.qkv(L, f.xb);                                // q, k, v = Wq·xb, Wk·xb, Wv·xb
      f.head_rmsnorm(f.q, c.n_heads, L.q_norm);      // each query head: rmsnorm(q_h)·w
      f.head_rmsnorm(f.k, c.n_kv_heads, L.k_norm);   // each key head: rmsnorm(k_h)·w
      f.rope(l);                                     // rotate q and k by position
      f.attention(l);                                // att = softmax(q·Kᵀ/√d)·V over the cache
      f.matmul(L.wo, f.att, f.xb);                   // xb = Wo·att
    } else {
      f.matmul(L.conv_in, f.xb, f.bch);              // b, c, h = W_in·xb
      f.short_conv(l, L.conv);                       // xc = c ⊙ Σ_j w_j ⊙ (b ⊙ h)[p − taps + 1 + j]
      f.matmul(L.conv_out, f.xc, f.xb);              // xb = W_out·xc
    }
    f.add(f.x, f.xb);                                // x += xb
    f.rmsnorm(f.xb, f.x, L.ffn_norm);                // xb = rmsnorm(x)·w
    f.gated_ffn(L, Forward::Gate::kSilu);            // xb = W_down·(silu(W_gate·xb) ⊙ W_up·xb)
    f.add(f.x, f.xb);                                // x += xb
  }
  f.output(w.output_norm, w.output);                 // logits = W_out·rmsnorm(x)·w
}

void lfm2_synth(ModelConfig* c) {
  c->shortconv_l_cache = kTaps;
  for (int l = 0; l < c->n_layers; ++l) {
    c->layers[l].attention = kAttentionLayers[l % std::size(kAttentionLayers)];
  }
}

}  // namespace

extern const Architecture kLfm2 = {"lfm2", lfm2_config, lfm2_tensors, lfm2_forward, lfm2_synth};

}  // namespace wllm
