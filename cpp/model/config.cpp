#include "model/config.h"

#include <string_view>

namespace wllm {
namespace {

// Reads "<arch>.<suffix>" as a positive int no larger than `max`.
Status read_count(const GgufFile& f, const std::string& arch, const char* suffix, int64_t max, int* out) {
  const std::string key = arch + "." + suffix;
  WLLM_ASSIGN_OR_RETURN(const uint64_t v, f.get_uint(key));
  if (v == 0 || v > static_cast<uint64_t>(max)) {
    return Status::error(ErrorCode::kBadFile, "metadata '%s': %llu is out of range (1 to %lld)", key.c_str(),
                         static_cast<unsigned long long>(v), static_cast<long long>(max));
  }
  *out = static_cast<int>(v);
  return {};
}

}  // namespace

Result<ModelConfig> load_config(const GgufFile& f) {
  ModelConfig c;
  WLLM_ASSIGN_OR_RETURN(const std::string_view arch, f.get_string("general.architecture"));
  c.arch_name = std::string(arch);
  if (arch == "llama") {
    c.arch = Architecture::kLlama;
  } else if (arch == "qwen2") {
    c.arch = Architecture::kQwen2;
    c.rope_neox = true;
  } else {
    return Status::error(ErrorCode::kUnsupported, "architecture '%s' is not supported (supported: llama, qwen2)",
                         c.arch_name.c_str());
  }
  WLLM_ASSIGN_OR_RETURN(const std::string_view name, f.get_string_or("general.name", ""));
  c.name = std::string(name);
  const std::string& a = c.arch_name;

  constexpr int64_t kMaxWidth = 1 << 16, kMaxLayers = 1024, kMaxCtx = 1 << 24;
  WLLM_RETURN_IF_ERROR(read_count(f, a, "embedding_length", kMaxWidth, &c.dim));
  WLLM_RETURN_IF_ERROR(read_count(f, a, "block_count", kMaxLayers, &c.n_layers));
  WLLM_RETURN_IF_ERROR(read_count(f, a, "feed_forward_length", 1 << 20, &c.ffn_dim));
  WLLM_RETURN_IF_ERROR(read_count(f, a, "attention.head_count", kMaxWidth, &c.n_heads));
  WLLM_RETURN_IF_ERROR(read_count(f, a, "context_length", kMaxCtx, &c.n_ctx_train));
  c.n_kv_heads = c.n_heads;
  if (f.find(a + ".attention.head_count_kv")) {
    WLLM_RETURN_IF_ERROR(read_count(f, a, "attention.head_count_kv", kMaxWidth, &c.n_kv_heads));
  }
  if (c.n_heads % c.n_kv_heads != 0) {
    return Status::error(ErrorCode::kBadFile, "metadata: %d attention heads is not a multiple of %d key-value heads",
                         c.n_heads, c.n_kv_heads);
  }
  c.head_dim = c.dim / c.n_heads;
  if (f.find(a + ".attention.key_length")) {
    WLLM_RETURN_IF_ERROR(read_count(f, a, "attention.key_length", kMaxWidth, &c.head_dim));
  } else if (c.dim % c.n_heads != 0) {
    return Status::error(ErrorCode::kBadFile, "metadata: embedding width %d is not a multiple of %d heads", c.dim,
                         c.n_heads);
  }
  if (f.find(a + ".attention.value_length")) {
    int value_dim = 0;
    WLLM_RETURN_IF_ERROR(read_count(f, a, "attention.value_length", kMaxWidth, &value_dim));
    if (value_dim != c.head_dim) {
      return Status::error(ErrorCode::kUnsupported, "metadata: value width %d differs from key width %d", value_dim,
                           c.head_dim);
    }
  }
  if (c.head_dim % 2 != 0) return Status::error(ErrorCode::kBadFile, "metadata: head width %d is odd", c.head_dim);

  WLLM_ASSIGN_OR_RETURN(c.rms_eps, f.get_float_or(a + ".attention.layer_norm_rms_epsilon", 1e-5f));
  if (!(c.rms_eps > 0.0f && c.rms_eps < 1.0f)) {
    return Status::error(ErrorCode::kBadFile, "metadata: rms epsilon %g is out of range", c.rms_eps);
  }
  uint64_t rope_dims = 0;
  WLLM_ASSIGN_OR_RETURN(rope_dims, f.get_uint_or(a + ".rope.dimension_count", static_cast<uint64_t>(c.head_dim)));
  if (rope_dims == 0 || rope_dims > static_cast<uint64_t>(c.head_dim) || rope_dims % 2 != 0) {
    return Status::error(ErrorCode::kBadFile, "metadata: rope dimension count %llu must be even and at most the head width %d",
                         static_cast<unsigned long long>(rope_dims), c.head_dim);
  }
  c.rope_dims = static_cast<int>(rope_dims);
  WLLM_ASSIGN_OR_RETURN(c.rope_freq_base, f.get_float_or(a + ".rope.freq_base", 10000.0f));
  if (!(c.rope_freq_base > 1.0f && c.rope_freq_base < 1e12f)) {
    return Status::error(ErrorCode::kBadFile, "metadata: rope frequency base %g is out of range", c.rope_freq_base);
  }
  // Rope scaling: "none" and "linear" are supported (linear divides positions).
  WLLM_ASSIGN_OR_RETURN(const std::string_view scaling, f.get_string_or(a + ".rope.scaling.type", "none"));
  if (scaling == "linear") {
    WLLM_ASSIGN_OR_RETURN(const float factor, f.get_float(a + ".rope.scaling.factor"));
    if (!(factor >= 1.0f && factor < 1e6f)) {
      return Status::error(ErrorCode::kBadFile, "metadata: rope scaling factor %g is out of range", factor);
    }
    c.rope_freq_scale = 1.0f / factor;
  } else if (scaling != "none") {
    return Status::error(ErrorCode::kUnsupported, "rope scaling '%.*s' is not supported (supported: none, linear)",
                         static_cast<int>(scaling.size()), scaling.data());
  } else if (f.find(a + ".rope.scale_linear")) {  // older converters
    WLLM_ASSIGN_OR_RETURN(const float factor, f.get_float(a + ".rope.scale_linear"));
    if (!(factor >= 1.0f && factor < 1e6f)) {
      return Status::error(ErrorCode::kBadFile, "metadata: rope linear scale %g is out of range", factor);
    }
    c.rope_freq_scale = 1.0f / factor;
  }

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

}  // namespace wllm
