#include "model/config.h"

#include <algorithm>
#include <cmath>

#include "gguf/gguf_writer.h"
#include "model/architecture.h"

namespace wllm {

const char* pooling_name(Pooling pooling) {
  switch (pooling) {
    case Pooling::kNone: return "none";
    case Pooling::kMean: return "mean";
    case Pooling::kCls: return "cls";
    case Pooling::kLast: return "last";
    case Pooling::kRank: return "rank";
  }
  return "unknown";
}

bool parse_pooling(std::string_view name, Pooling* pooling) {
  for (const Pooling p : {Pooling::kNone, Pooling::kMean, Pooling::kCls, Pooling::kLast, Pooling::kRank}) {
    if (name == pooling_name(p)) {
      *pooling = p;
      return true;
    }
  }
  return false;
}

float ModelConfig::query_scale() const {
  return attn_scale > 0.0f ? attn_scale : 1.0f / std::sqrt(static_cast<float>(head_dim));
}

int ModelConfig::local_layers() const {
  int n = 0;
  for (const LayerConfig& layer : layers) n += layer.window > 0;
  return n;
}

ConfigKeys ConfigKeys::reader(const GgufFile& file, std::string arch) { return ConfigKeys(&file, nullptr, std::move(arch)); }
ConfigKeys ConfigKeys::writer(GgufWriter* out, std::string arch) { return ConfigKeys(nullptr, out, std::move(arch)); }

std::string ConfigKeys::key(std::string_view suffix) const { return arch_ + "." + std::string(suffix); }

Status ConfigKeys::count(std::string_view suffix, int* value, int64_t lo, int64_t hi, bool required) {
  const std::string k = key(suffix);
  if (!reading()) {
    if (!required && *value == 0) return {};
    return out_->set_u32(k, static_cast<uint32_t>(*value));
  }
  if (!file_->find(k)) {
    if (!required) return {};
    return Status::error(ErrorCode::kBadFile, "metadata key '%s' is missing", k.c_str());
  }
  WLLM_ASSIGN_OR_RETURN(const int64_t v, file_->get_int(k));
  if (v < lo || v > hi) {
    return Status::error(ErrorCode::kBadFile, "metadata '%s': %lld is out of range (%lld to %lld)", k.c_str(),
                         static_cast<long long>(v), static_cast<long long>(lo), static_cast<long long>(hi));
  }
  *value = static_cast<int>(v);
  return {};
}

Status ConfigKeys::number(std::string_view suffix, float* value, float lo, float hi, bool required) {
  const std::string k = key(suffix);
  if (!reading()) {
    if (!required && *value == 0.0f) return {};
    return out_->set_f32(k, *value);
  }
  if (!file_->find(k)) {
    if (!required) return {};
    return Status::error(ErrorCode::kBadFile, "metadata key '%s' is missing", k.c_str());
  }
  WLLM_ASSIGN_OR_RETURN(const float v, file_->get_float(k));
  if (!(v > lo && v < hi)) {
    return Status::error(ErrorCode::kBadFile, "metadata '%s': %g is out of range (%g to %g)", k.c_str(), v, lo, hi);
  }
  *value = v;
  return {};
}

Status ConfigKeys::flag(std::string_view suffix, bool* value, bool fallback) {
  const std::string k = key(suffix);
  if (!reading()) return *value == fallback ? Status() : out_->set_bool(k, *value);
  if (!file_->find(k)) return {};
  WLLM_ASSIGN_OR_RETURN(*value, file_->get_bool(k));
  return {};
}

bool ConfigKeys::is_array(std::string_view suffix) const {
  const GgufKV* kv = reading() ? file_->find(key(suffix)) : nullptr;
  return kv && kv->value.type == GgufType::kArray;
}

Status ConfigKeys::per_layer(std::string_view suffix, int n_layers, std::vector<int>* values, int64_t lo, int64_t hi) {
  const std::string k = key(suffix);
  if (!reading()) {
    if (std::all_of(values->begin(), values->end(), [&](int v) { return v == values->front(); })) {
      return out_->set_u32(k, static_cast<uint32_t>(values->front()));
    }
    std::vector<int32_t> v(values->begin(), values->end());
    return out_->set_array_i32(k, v);
  }
  const GgufKV* kv = file_->find(k);
  if (!kv) return Status::error(ErrorCode::kBadFile, "metadata key '%s' is missing", k.c_str());
  values->assign(n_layers, 0);
  if (kv->value.type == GgufType::kArray) {
    const GgufArray& a = kv->value.array;
    if (a.size() != static_cast<uint64_t>(n_layers)) {
      return Status::error(ErrorCode::kBadFile, "metadata '%s' has %llu values for %d layers", k.c_str(),
                           static_cast<unsigned long long>(a.size()), n_layers);
    }
    for (int l = 0; l < n_layers; ++l) {
      const int64_t v = a.int_at(l);
      if (v < lo || v > hi) {
        return Status::error(ErrorCode::kBadFile, "metadata '%s'[%d]: %lld is out of range (%lld to %lld)", k.c_str(),
                             l, static_cast<long long>(v), static_cast<long long>(lo), static_cast<long long>(hi));
      }
      (*values)[l] = static_cast<int>(v);
    }
    return {};
  }
  int v = 0;
  WLLM_RETURN_IF_ERROR(count(suffix, &v, lo, hi, true));
  values->assign(n_layers, v);
  return {};
}

namespace {

constexpr int64_t kMaxWidth = 1 << 16, kMaxLayers = 1024, kMaxCtx = 1 << 24, kMaxFfn = 1 << 20;

// The keys every architecture has, read or written.
Status common_keys(ConfigKeys& k, ModelConfig* c) {
  WLLM_RETURN_IF_ERROR(k.count("embedding_length", &c->dim, 1, kMaxWidth, true));
  WLLM_RETURN_IF_ERROR(k.count("block_count", &c->n_layers, 1, kMaxLayers, true));
  WLLM_RETURN_IF_ERROR(k.count("feed_forward_length", &c->ffn_dim, 1, kMaxFfn, true));
  WLLM_RETURN_IF_ERROR(k.count("attention.head_count", &c->n_heads, 1, kMaxWidth, true));
  WLLM_RETURN_IF_ERROR(k.count("context_length", &c->n_ctx_train, 1, kMaxCtx, true));
  // Key-value heads per layer (lfm2 gives 0 for its convolution layers);
  // absent: as many as query heads.
  std::vector<int> kv_heads;
  if (!k.reading()) {
    for (const LayerConfig& layer : c->layers) kv_heads.push_back(layer.attention ? layer.n_kv_heads : 0);
  }
  if (k.reading() && !k.file()->find(c->arch_name + ".attention.head_count_kv")) {
    kv_heads.assign(c->n_layers, c->n_heads);
  } else {
    WLLM_RETURN_IF_ERROR(k.per_layer("attention.head_count_kv", c->n_layers, &kv_heads, 0, kMaxWidth));
  }
  c->layers.resize(c->n_layers);
  c->n_kv_heads = 0;
  for (int l = 0; l < c->n_layers; ++l) {
    c->layers[l].n_kv_heads = kv_heads[l];
    c->layers[l].attention = kv_heads[l] > 0;
    if (kv_heads[l] > 0 && c->n_heads % kv_heads[l] != 0) {
      return Status::error(ErrorCode::kBadFile, "metadata: %d attention heads is not a multiple of %d key-value heads",
                           c->n_heads, kv_heads[l]);
    }
    c->n_kv_heads = std::max(c->n_kv_heads, kv_heads[l]);
  }
  if (c->n_kv_heads == 0) return Status::error(ErrorCode::kBadFile, "metadata: no layer has attention heads");

  // The head width: attention.key_length, else dim / heads. Written only
  // where it is not dim / heads, as converters do.
  const bool head_dim_given = k.reading() ? k.file()->find(c->arch_name + ".attention.key_length") != nullptr
                                          : c->head_dim * c->n_heads != c->dim;
  if (k.reading()) c->head_dim = c->dim / c->n_heads;
  if (head_dim_given) {
    WLLM_RETURN_IF_ERROR(k.count("attention.key_length", &c->head_dim, 1, kMaxWidth, true));
  } else if (c->dim % c->n_heads != 0) {
    return Status::error(ErrorCode::kBadFile, "metadata: embedding width %d is not a multiple of %d heads", c->dim,
                         c->n_heads);
  }
  // The value width must equal the key width here; llama.cpp takes it as
  // dim / heads unless the file says otherwise, so it is written with it.
  if (k.reading() || head_dim_given) {
    int value_dim = c->head_dim;
    WLLM_RETURN_IF_ERROR(k.count("attention.value_length", &value_dim, 1, kMaxWidth));
    if (value_dim != c->head_dim) {
      return Status::error(ErrorCode::kUnsupported, "metadata: value width %d differs from key width %d", value_dim,
                           c->head_dim);
    }
  }
  if (c->head_dim % 2 != 0) return Status::error(ErrorCode::kBadFile, "metadata: head width %d is odd", c->head_dim);
  // The attention widths (q_dim, kv_dim <= q_dim) are products of two checked
  // counts: bound them like the embedding width, so no size derived from
  // them overflows an int.
  if (static_cast<int64_t>(c->n_heads) * c->head_dim > kMaxWidth) {
    return Status::error(ErrorCode::kBadFile, "metadata: %d heads of width %d exceed the maximum attention width %lld",
                         c->n_heads, c->head_dim, static_cast<long long>(kMaxWidth));
  }

  WLLM_RETURN_IF_ERROR(k.number("attention.layer_norm_rms_epsilon", &c->norm_eps, 0.0f, 1.0f));
  if (k.reading()) c->rope_dims = c->head_dim;
  WLLM_RETURN_IF_ERROR(k.count("rope.dimension_count", &c->rope_dims, 2, c->head_dim));
  if (c->rope_dims % 2 != 0) {
    return Status::error(ErrorCode::kBadFile, "metadata: rope dimension count %d must be even", c->rope_dims);
  }
  WLLM_RETURN_IF_ERROR(k.number("rope.freq_base", &c->rope_freq_base, 1.0f, 1e12f));

  // Embeddings: bidirectional attention, and how to pool.
  WLLM_RETURN_IF_ERROR(k.flag("attention.causal", &c->causal, true));
  int pooling = static_cast<int>(c->pooling);
  WLLM_RETURN_IF_ERROR(k.count("pooling_type", &pooling, 0, 4));
  c->pooling = static_cast<Pooling>(pooling);
  if (k.reading() && k.is_array("classifier.output_labels")) {
    WLLM_ASSIGN_OR_RETURN(const GgufArray* labels, k.file()->get_array(c->arch_name + ".classifier.output_labels"));
    if (labels->size() < 1 || labels->size() > 1024) {
      return Status::error(ErrorCode::kBadFile, "metadata: %llu classifier labels (1 to 1024 allowed)",
                           static_cast<unsigned long long>(labels->size()));
    }
    c->n_cls_out = static_cast<int>(labels->size());
  }
  // LongRoPE's keys (llama.cpp reads them for every architecture); written
  // only where a model has them.
  if (k.reading() || c->rope_attn_factor != 1.0f) {
    WLLM_RETURN_IF_ERROR(k.number("rope.scaling.attn_factor", &c->rope_attn_factor, 0.0f, 1e3f));
  }
  WLLM_RETURN_IF_ERROR(k.count("rope.scaling.original_context_length", &c->rope_orig_ctx, 1, kMaxCtx));
  if (k.reading() && c->rope_orig_ctx == 0) c->rope_orig_ctx = c->n_ctx_train;
  return {};
}

// Rope scaling: "none", "linear" (which divides positions) and "longrope"
// (per-frequency divisors, rope_factors_long/short: the same rotation with
// the factor of a linear scaling if the file gives one, as llama.cpp).
Status read_rope_scaling(const GgufFile& f, const std::string& a, ModelConfig* c) {
  WLLM_ASSIGN_OR_RETURN(const std::string_view scaling, f.get_string_or(a + ".rope.scaling.type", "none"));
  const char* factor_key = nullptr;
  if (scaling == "linear") {
    factor_key = ".rope.scaling.factor";
  } else if (scaling == "longrope") {
    if (f.find(a + ".rope.scaling.factor")) factor_key = ".rope.scaling.factor";
  } else if (scaling != "none") {
    return Status::error(ErrorCode::kUnsupported,
                         "rope scaling '%.*s' is not supported (supported: none, linear, longrope)",
                         static_cast<int>(scaling.size()), scaling.data());
  } else if (f.find(a + ".rope.scale_linear")) {  // older converters
    factor_key = ".rope.scale_linear";
  }
  if (!factor_key) return {};
  WLLM_ASSIGN_OR_RETURN(const float factor, f.get_float(a + factor_key));
  if (!(factor >= 1.0f && factor < 1e6f)) {
    return Status::error(ErrorCode::kBadFile, "metadata '%s%s': rope scaling factor %g is out of range", a.c_str(),
                         factor_key, factor);
  }
  c->rope_freq_scale = 1.0f / factor;
  return {};
}

// The tensor layouts the file uses, where an architecture allows several:
// the attention's, as the first layer with attention has them (lfm2's first
// layers are convolutions).
void detect_layouts(const GgufFile& f, ModelConfig* c) {
  int l = 0;
  while (l + 1 < c->n_layers && !c->layers[l].attention) ++l;
  const std::string blk = "blk." + std::to_string(l) + ".";
  c->tied_output = f.find_tensor("output.weight") == nullptr;
  c->fused_qkv = f.find_tensor(blk + "attn_qkv.weight") != nullptr;
  c->qkv_bias = f.find_tensor(blk + "attn_q.bias") != nullptr || f.find_tensor(blk + "attn_qkv.bias") != nullptr;
  c->rope_factors = f.find_tensor("rope_freqs.weight") != nullptr;
  c->token_types = f.find_tensor("token_types.weight") != nullptr;
  c->cls_head = f.find_tensor("cls.weight") != nullptr;
  c->cls_out = f.find_tensor("cls.output.weight") != nullptr;
  c->qk_norm = f.find_tensor(blk + "attn_q_norm.bias") != nullptr;  // LayerNorms (RMSNorm gains have no bias)
  c->attn_norm_2 = f.find_tensor(blk + "attn_norm_2.weight") != nullptr;
  // A feed-forward is gated where it has ffn_gate, or an ffn_up of twice its
  // width that holds both (jina-bert-v2; llama.cpp's up_contains_gate).
  const GgufTensorInfo* up = f.find_tensor(blk + "ffn_up.weight");
  const bool gate = f.find_tensor(blk + "ffn_gate.weight") != nullptr;
  c->fused_gate_up = !gate && up && up->ne[1] == 2LL * c->ffn_dim;
  c->gated_ffn = gate || c->fused_gate_up;
  c->rope_long_short = f.find_tensor("rope_factors_long.weight") != nullptr;
}

// The token-type count, a tokenizer key the encoders' token_types tensor
// is shaped by.
constexpr const char* kTokenTypeCount = "tokenizer.ggml.token_type_count";

}  // namespace

Result<ModelConfig> load_config(const GgufFile& f) {
  ModelConfig c;
  WLLM_ASSIGN_OR_RETURN(const std::string_view arch, f.get_string("general.architecture"));
  c.arch_name = std::string(arch);
  c.arch = find_architecture(arch);
  if (!c.arch) {
    const char* what = unsupported_architecture(arch);
    return Status::error(ErrorCode::kUnsupported, "architecture '%s'%s%s%s is not supported (supported: %s)",
                         c.arch_name.c_str(), what ? " (" : "", what ? what : "", what ? ")" : "",
                         architecture_names().c_str());
  }
  WLLM_ASSIGN_OR_RETURN(const std::string_view name, f.get_string_or("general.name", ""));
  c.name = std::string(name);
  c.encoder = c.arch->encoder;

  ConfigKeys keys = ConfigKeys::reader(f, c.arch_name);
  WLLM_RETURN_IF_ERROR(common_keys(keys, &c));
  detect_layouts(f, &c);
  WLLM_ASSIGN_OR_RETURN(const uint64_t token_types, f.get_uint_or(kTokenTypeCount, 0));
  if (token_types > 1024) {
    return Status::error(ErrorCode::kBadFile, "metadata '%s': %llu token types is out of range (0 to 1024)",
                         kTokenTypeCount, static_cast<unsigned long long>(token_types));
  }
  c.n_token_types = static_cast<int>(token_types);
  WLLM_RETURN_IF_ERROR(read_rope_scaling(f, c.arch_name, &c));
  WLLM_RETURN_IF_ERROR(c.arch->config(keys, &c));

  // The vocabulary size comes from the token list (checked again against the
  // embedding matrix when the weights are bound).
  WLLM_ASSIGN_OR_RETURN(const GgufArray* tokens, f.get_array("tokenizer.ggml.tokens"));
  if (tokens->size() == 0 || tokens->size() > (1u << 24)) {
    return Status::error(ErrorCode::kBadFile, "metadata: vocabulary of %llu tokens is out of range",
                         static_cast<unsigned long long>(tokens->size()));
  }
  c.n_vocab = static_cast<int>(tokens->size());
  return c;
}

Status require_attention_layers(const ModelConfig& c) {
  for (int l = 0; l < c.n_layers; ++l) {
    if (!c.layers[l].attention) {
      return Status::error(ErrorCode::kBadFile, "metadata: layer %d has no attention heads (a %s model has attention in "
                           "every layer)", l, c.arch_name.c_str());
    }
  }
  return {};
}

Status write_config(ModelConfig* c, GgufWriter* out) {
  WLLM_RETURN_IF_ERROR(out->set_string("general.architecture", c->arch_name));
  ConfigKeys keys = ConfigKeys::writer(out, c->arch_name);
  WLLM_RETURN_IF_ERROR(common_keys(keys, c));
  WLLM_RETURN_IF_ERROR(c->arch->config(keys, c));
  if (c->n_cls_out > 1) {
    std::vector<std::string> labels;
    for (int i = 0; i < c->n_cls_out; ++i) labels.push_back("label" + std::to_string(i));
    const std::vector<std::string_view> views(labels.begin(), labels.end());
    WLLM_RETURN_IF_ERROR(out->set_array_strings(c->arch_name + ".classifier.output_labels", views));
  }
  if (c->n_token_types > 0) WLLM_RETURN_IF_ERROR(out->set_u32(kTokenTypeCount, static_cast<uint32_t>(c->n_token_types)));
  return out->set_u32(c->arch_name + ".vocab_size", static_cast<uint32_t>(c->n_vocab));
}

}  // namespace wllm
