// granite (IBM Granite 3.x dense, and Granite 4.0 micro, the dense one of
// the 4.0 family): Llama's blocks and tensors with four scales from the
// file: the embedding is multiplied by embedding_scale, each block's output
// by residual_scale before it joins the residual stream, the queries by
// attention.scale (instead of 1/sqrt(head width)), and the logits by
// 1/logit_scale. rope.scaling.finetuned = false switches RoPE off in every
// layer. llama.cpp: src/models/granite.cpp. Not supported: the MoE models
// (granitemoe and expert_count > 0), the hybrid ones (granitehybrid), biases
// on the attention output or the feed-forward (no released model has them),
// and the vision models' deepstack inputs.
#include <string>

#include "model/architecture.h"
#include "model/architectures/llama.h"

namespace wllm {
namespace {

Status granite_config(ConfigKeys& keys, ModelConfig* c) {
  WLLM_RETURN_IF_ERROR(keys.number("attention.layer_norm_rms_epsilon", &c->norm_eps, 0.0f, 1.0f, true));
  WLLM_RETURN_IF_ERROR(keys.number("logit_scale", &c->logit_scale, 0.0f, 1e6f, true));
  WLLM_RETURN_IF_ERROR(keys.number("residual_scale", &c->residual_scale, 0.0f, 1e6f));
  WLLM_RETURN_IF_ERROR(keys.number("embedding_scale", &c->embed_scale, 0.0f, 1e6f));
  WLLM_RETURN_IF_ERROR(keys.number("attention.scale", &c->attn_scale, 0.0f, 1e6f));
  if (keys.reading()) {
    const GgufFile& f = *keys.file();
    const std::string& a = c->arch_name;
    WLLM_ASSIGN_OR_RETURN(const bool rope, f.get_bool_or(a + ".rope.scaling.finetuned", true));
    for (LayerConfig& layer : c->layers) layer.rope = rope;
    int experts = 0;
    WLLM_RETURN_IF_ERROR(keys.count("expert_count", &experts, 0, 1 << 16));
    if (experts > 0) {
      return Status::error(ErrorCode::kUnsupported, "granite with %d experts (MoE) is not supported", experts);
    }
    if (f.find(a + ".deepstack_mapping")) {
      return Status::error(ErrorCode::kUnsupported, "granite with deepstack (vision) inputs is not supported");
    }
    for (const char* bias : {"attn_output.bias", "ffn_gate.bias", "ffn_up.bias", "ffn_down.bias"}) {
      if (f.find_tensor(layer_tensor(0, bias))) {
        return Status::error(ErrorCode::kUnsupported, "granite with biases (tensor '%s') is not supported",
                             layer_tensor(0, bias).c_str());
      }
    }
  }
  return require_attention_layers(*c);
}

void granite_forward(Forward& f) {
  const ModelConfig& c = f.config;
  const ModelWeights& w = f.weights;
  f.embed(w.token_embd, c.embed_scale);            // x = token_embd[token]·embedding_scale
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& L = w.layers[l];
    f.rmsnorm(f.xb, f.x, L.attn_norm);             // xb = rmsnorm(x)·w
    f.qkv(L, f.xb);                                // q, k, v = Wq·xb, Wk·xb, Wv·xb (+ biases)
    if (c.layers[l].rope) f.rope(l);               // rotate q and k by position
    f.attention(l);                                // att = softmax(q·Kᵀ·attention_scale)·V over the cache
    f.matmul(L.wo, f.att, f.xb);                   // xb = Wo·att
    f.add(f.x, f.xb, c.residual_scale);            // x += xb·residual_scale
    f.rmsnorm(f.xb, f.x, L.ffn_norm);              // xb = rmsnorm(x)·w
    f.gated_ffn(L, Forward::Gate::kSilu);          // xb = W_down·(silu(W_gate·xb) ⊙ W_up·xb)
    f.add(f.x, f.xb, c.residual_scale);            // x += xb·residual_scale
  }
  f.output(w.output_norm, w.output);               // logits = W_out·rmsnorm(x)·w
  f.scale_logits(c.logit_scale);                   // logits = logits·(1/logit_scale)
}

// Granite 3.3 2B's multipliers.
void granite_synth(ModelConfig* c) {
  c->norm_eps = 1e-5f;
  c->embed_scale = 12.0f;
  c->residual_scale = 0.22f;
  c->attn_scale = 0.015625f;
  c->logit_scale = 8.0f;
}

}  // namespace

extern const Architecture kGranite = {"granite", granite_config, llama_tensors, granite_forward, granite_synth};

}  // namespace wllm
