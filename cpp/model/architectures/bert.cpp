// The BERT encoders, which give embeddings, not text (llama.cpp:
// src/models/bert.cpp, one graph for the three):
//   bert (BERT, bge, all-MiniLM, e5, RoBERTa and XLM-RoBERTa rerankers):
//     learned position embeddings, a GELU feed-forward with biases;
//   nomic-bert (nomic-embed-text v1, v1.5): RoPE (NeoX) in place of learned
//     positions, a SwiGLU feed-forward without biases;
//   jina-bert-v2 (jina-embeddings-v2, jina-reranker-v1): ALiBi in place of
//     positions (scores fall with distance), a GeGLU feed-forward (gate and up
//     in one matrix, or two), optional LayerNorms of the queries and keys and
//     a second one after the attention.
// Every one: the token and token-type (type 0) embeddings, LayerNorm'd;
// then post-norm blocks, each token attending to every token of its text
// (attention.causal is false in their files), LayerNorms with biases after
// each residual add. No output layer: the last hidden states are pooled
// (engine/embedding.h), a reranker's through its classification head.
// Not supported: nomic-bert-moe, jina-bert-v3, modern-bert, neo-bert and
// eurobert (other architectures; table.cpp names them in its error).
#include "model/architecture.h"
#include "model/forward.h"
#include "model/weights.h"

namespace wllm {
namespace {

// How the three differ.
struct Encoder {
  bool learned_positions;    // position_embd (else RoPE or ALiBi)
  int cls_rows;              // a reranker's cls: to dim (0) or to one value (jina-reranker)
  bool rope;                 // q and k rotate by position
  bool ffn_biases;           // the feed-forward's biases are read (llama.cpp ignores nomic-bert's)
  Forward::Gate activation;  // of a gated feed-forward
};
constexpr Encoder kBertEncoder{true, 0, false, true, Forward::Gate::kGelu};
constexpr Encoder kNomicBertEncoder{false, 0, true, false, Forward::Gate::kSilu};
constexpr Encoder kJinaBertV2Encoder{false, 1, false, true, Forward::Gate::kGelu};

// Keys and layouts all three share.
Status encoder_config(ConfigKeys& keys, ModelConfig* c) {
  WLLM_RETURN_IF_ERROR(keys.number("attention.layer_norm_epsilon", &c->norm_eps, 0.0f, 1.0f, true));
  if (c->q_dim() != c->dim || (c->qk_norm && c->kv_dim() != c->dim)) {
    return Status::error(ErrorCode::kUnsupported, "%s: attention of %d heads of %d (%d key-value heads) beside a "
                         "width of %d is not supported", c->arch_name.c_str(), c->n_heads, c->head_dim, c->n_kv_heads,
                         c->dim);
  }
  if (c->token_types && c->n_token_types == 0) {
    return Status::error(ErrorCode::kBadFile, "%s: token_types.weight is there but tokenizer.ggml.token_type_count is "
                         "missing", c->arch_name.c_str());
  }
  return require_attention_layers(*c);
}

// llama.cpp refuses a bert or nomic-bert file that names no token types.
Status require_token_types(const ConfigKeys& keys, const ModelConfig& c) {
  if (!keys.reading() || c.n_token_types > 0) return {};
  return Status::error(ErrorCode::kBadFile, "%s: the file names no token types (tokenizer.ggml.token_type_count)",
                       c.arch_name.c_str());
}

Status bert_config(ConfigKeys& keys, ModelConfig* c) {
  WLLM_RETURN_IF_ERROR(require_token_types(keys, *c));
  return encoder_config(keys, c);
}

Status nomic_bert_config(ConfigKeys& keys, ModelConfig* c) {
  WLLM_RETURN_IF_ERROR(require_token_types(keys, *c));
  c->rope_neox = true;
  return encoder_config(keys, c);
}

Status jina_bert_v2_config(ConfigKeys& keys, ModelConfig* c) {
  c->alibi_bias_max = 8.0f;  // llama.cpp's, fixed
  return encoder_config(keys, c);
}

// token_embd, token_types, token_embd_norm; then the architecture's positions.
void embedding_tensors_of_encoder(TensorList& t, const ModelConfig& c, ModelWeights* w) {
  embedding_tensors(t, c, w);
  if (c.token_types) t.add("token_types.weight", {c.dim, c.n_token_types}, TensorRole::kEmbedding, &w->type_embd);
  t.add("token_embd_norm.weight", {c.dim}, TensorRole::kNorm, &w->embd_norm);
  t.add("token_embd_norm.bias", {c.dim}, TensorRole::kBias, &w->embd_norm_b);
}

// The feed-forward: up (+ bias) and down (+ bias), with a gate where the
// file has one (its own matrix, or the first half of up's rows).
void ffn_tensors(TensorList& t, const ModelConfig& c, const Encoder& e, int l, LayerWeights* L) {
  const int64_t ffn = c.ffn_dim;
  if (!e.ffn_biases) {
    gated_ffn_tensors(t, c, l, L);
    return;
  }
  if (c.fused_gate_up) {
    t.add(layer_tensor(l, "ffn_up.weight"), {c.dim, 2 * ffn}, TensorRole::kMatrix, &L->w_gate_up);
    t.part(&L->w_gate, &L->w_gate_up, 0, ffn);
    t.part(&L->w_up, &L->w_gate_up, ffn, ffn);
    if (t.has(layer_tensor(l, "ffn_up.bias"))) {
      t.add(layer_tensor(l, "ffn_up.bias"), {2 * ffn}, TensorRole::kBias, &L->b_gate_up);
      t.part(&L->b_gate, &L->b_gate_up, 0, ffn);
      t.part(&L->b_up, &L->b_gate_up, ffn, ffn);
    }
  } else {
    if (c.gated_ffn) t.add(layer_tensor(l, "ffn_gate.weight"), {c.dim, ffn}, TensorRole::kMatrix, &L->w_gate);
    t.add(layer_tensor(l, "ffn_up.weight"), {c.dim, ffn}, TensorRole::kMatrix, &L->w_up);
    t.add_optional(layer_tensor(l, "ffn_up.bias"), {ffn}, TensorRole::kBias, &L->b_up);
  }
  t.add(layer_tensor(l, "ffn_down.weight"), {ffn, c.dim}, TensorRole::kMatrix, &L->w_down);
  t.add_optional(layer_tensor(l, "ffn_down.bias"), {c.dim}, TensorRole::kBias, &L->b_down);
}

void encoder_tensors(TensorList& t, const ModelConfig& c, ModelWeights* w, const Encoder& e) {
  embedding_tensors_of_encoder(t, c, w);
  if (e.learned_positions) {
    t.add("position_embd.weight", {c.dim, c.n_ctx_train}, TensorRole::kEmbedding, &w->pos_embd);
  }
  classifier_tensors(t, c, w, e.cls_rows > 0 ? e.cls_rows : c.dim);
  for (int l = 0; l < c.n_layers; ++l) {
    LayerWeights& L = w->layers[l];
    qkv_tensors(t, c, l, &L);
    if (c.qk_norm) {
      t.add(layer_tensor(l, "attn_q_norm.weight"), {c.dim}, TensorRole::kNorm, &L.q_norm);
      t.add(layer_tensor(l, "attn_q_norm.bias"), {c.dim}, TensorRole::kBias, &L.q_norm_b);
      t.add(layer_tensor(l, "attn_k_norm.weight"), {c.dim}, TensorRole::kNorm, &L.k_norm);
      t.add(layer_tensor(l, "attn_k_norm.bias"), {c.dim}, TensorRole::kBias, &L.k_norm_b);
    }
    t.add(layer_tensor(l, "attn_output.weight"), {c.dim, c.dim}, TensorRole::kMatrix, &L.wo);
    t.add_optional(layer_tensor(l, "attn_output.bias"), {c.dim}, TensorRole::kBias, &L.bo);
    t.add(layer_tensor(l, "attn_output_norm.weight"), {c.dim}, TensorRole::kNorm, &L.attn_out_norm);
    t.add(layer_tensor(l, "attn_output_norm.bias"), {c.dim}, TensorRole::kBias, &L.attn_out_norm_b);
    if (c.attn_norm_2) {
      t.add(layer_tensor(l, "attn_norm_2.weight"), {c.dim}, TensorRole::kNorm, &L.attn_norm_2);
      t.add(layer_tensor(l, "attn_norm_2.bias"), {c.dim}, TensorRole::kBias, &L.attn_norm_2_b);
    }
    ffn_tensors(t, c, e, l, &L);
    t.add(layer_tensor(l, "layer_output_norm.weight"), {c.dim}, TensorRole::kNorm, &L.layer_out_norm);
    t.add(layer_tensor(l, "layer_output_norm.bias"), {c.dim}, TensorRole::kBias, &L.layer_out_norm_b);
  }
}

void encoder_forward(Forward& f, const Encoder& e) {
  const ModelConfig& c = f.config;
  const ModelWeights& w = f.weights;
  f.embed(w.token_embd);                                   // x = token_embd[token]
  if (w.type_embd.present()) f.add_row(w.type_embd, 0);   // x += token_types[0] (every token is of type 0)
  if (w.pos_embd.present()) f.add_positions(w.pos_embd);  // x += position_embd[position] (bert)
  f.layernorm(f.x, f.x, w.embd_norm, w.embd_norm_b);      // x = layernorm(x)·w + b
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& L = w.layers[l];
    f.qkv(L, f.x);                                          // q, k, v = Wq·x + bq, Wk·x + bk, Wv·x + bv
    if (c.qk_norm) {
      f.layernorm(f.q, f.q, L.q_norm, L.q_norm_b);          // q = layernorm(q)·w + b (jina-bert-v2)
      f.layernorm(f.k, f.k, L.k_norm, L.k_norm_b);          // k = layernorm(k)·w + b
    }
    if (e.rope) f.rope(l);                                  // rotate q and k by position (nomic-bert)
    f.attention(l);                                         // att = softmax(q·Kᵀ/√d [− ALiBi])·V over the text
    f.matmul(L.wo, f.att, f.xb);                            // xb = Wo·att + bo
    f.add_bias(f.xb, L.bo);
    f.add(f.xb, f.x);                                       // xb += x
    if (c.attn_norm_2) {
      f.layernorm(f.xb, f.xb, L.attn_out_norm, L.attn_out_norm_b);  // xb = layernorm(xb)·w + b
      f.add(f.xb, f.x);                                             // xb += x
      f.layernorm(f.x, f.xb, L.attn_norm_2, L.attn_norm_2_b);       // x = layernorm(xb)·w2 + b2
    } else {
      f.layernorm(f.x, f.xb, L.attn_out_norm, L.attn_out_norm_b);   // x = layernorm(xb)·w + b
    }
    if (c.gated_ffn) {
      f.gated_ffn(L, e.activation, f.x, f.xb);              // xb = W_down·(act(W_gate·x + bg) ⊙ (W_up·x + bu)) + bd
    } else {
      f.matmul(L.w_up, f.x, f.hb);                          // hb = gelu(W_up·x + b_up)
      f.add_bias(f.hb, L.b_up);
      f.gelu(f.hb, c.ffn_dim);
      f.matmul(L.w_down, f.hb, f.xb);                       // xb = W_down·hb + b_down
      f.add_bias(f.xb, L.b_down);
    }
    f.add(f.xb, f.x);                                       // xb += x
    f.layernorm(f.x, f.xb, L.layer_out_norm, L.layer_out_norm_b);  // x = layernorm(xb)·w + b
  }
}

// What `synth` writes beyond the shape: a bidirectional encoder with two
// token types, pooled as its real models are (bge: [CLS]; nomic, jina: mean).
void encoder_synth(ModelConfig* c, Pooling pooling) {
  c->causal = false;
  c->tied_output = false;  // no output layer: the embedding is only an input
  c->pooling = pooling;
  c->token_types = true;
  if (c->n_token_types == 0) c->n_token_types = 2;
  c->norm_eps = 1e-12f;
  c->rope_dims = 0;
  c->rope_freq_base = 0;
}

void bert_tensors(TensorList& t, const ModelConfig& c, ModelWeights* w) { encoder_tensors(t, c, w, kBertEncoder); }
void nomic_bert_tensors(TensorList& t, const ModelConfig& c, ModelWeights* w) {
  encoder_tensors(t, c, w, kNomicBertEncoder);
}
void jina_bert_v2_tensors(TensorList& t, const ModelConfig& c, ModelWeights* w) {
  encoder_tensors(t, c, w, kJinaBertV2Encoder);
}
void bert_forward(Forward& f) { encoder_forward(f, kBertEncoder); }
void nomic_bert_forward(Forward& f) { encoder_forward(f, kNomicBertEncoder); }
void jina_bert_v2_forward(Forward& f) { encoder_forward(f, kJinaBertV2Encoder); }

void bert_synth(ModelConfig* c) {
  encoder_synth(c, Pooling::kCls);
  c->qkv_bias = true;
}

void nomic_bert_synth(ModelConfig* c) {
  encoder_synth(c, Pooling::kMean);
  c->gated_ffn = true;
  c->fused_qkv = true;
  c->rope_neox = true;
  c->rope_dims = c->head_dim;
  c->rope_freq_base = 1000.0f;  // nomic-embed-text-v1.5's
}

void jina_bert_v2_synth(ModelConfig* c) {
  encoder_synth(c, Pooling::kMean);
  c->qkv_bias = true;
  c->gated_ffn = true;
  c->fused_gate_up = true;  // as today's converter writes it
}

}  // namespace

extern const Architecture kBert = {"bert", bert_config, bert_tensors, bert_forward, bert_synth, true};
extern const Architecture kNomicBert = {"nomic-bert", nomic_bert_config, nomic_bert_tensors, nomic_bert_forward,
                                        nomic_bert_synth, true};
extern const Architecture kJinaBertV2 = {"jina-bert-v2", jina_bert_v2_config, jina_bert_v2_tensors,
                                         jina_bert_v2_forward, jina_bert_v2_synth, true};

}  // namespace wllm
