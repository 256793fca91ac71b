#include "llama2c/as_gguf.h"

#include <string_view>
#include <vector>

namespace wllm {
namespace {

constexpr uint32_t kNoToken = 0xFFFFFFFFu;  // LLAMA_TOKEN_NULL as the converter stores it
constexpr float kRmsNormEps = 1e-5f;        // run.c's rmsnorm

}  // namespace

Status describe_llama2c_as_gguf(const Llama2cConfig& c, const Llama2cVocab& vocab, GgufWriter* out) {
  // The converter's keys, in its order.
  const std::vector<std::string_view> texts(vocab.texts.begin(), vocab.texts.end());
  WLLM_RETURN_IF_ERROR(out->set_array_strings("tokenizer.ggml.tokens", texts));
  WLLM_RETURN_IF_ERROR(out->set_array_f32("tokenizer.ggml.scores", vocab.scores));
  WLLM_RETURN_IF_ERROR(out->set_array_i32("tokenizer.ggml.token_type", vocab.types));
  WLLM_RETURN_IF_ERROR(out->set_string("tokenizer.ggml.model", "llama"));
  WLLM_RETURN_IF_ERROR(out->set_string("general.architecture", "llama"));
  WLLM_RETURN_IF_ERROR(out->set_string("general.name", "llama"));
  WLLM_RETURN_IF_ERROR(out->set_u32("tokenizer.ggml.unknown_token_id", 0));
  WLLM_RETURN_IF_ERROR(out->set_u32("tokenizer.ggml.bos_token_id", 1));
  WLLM_RETURN_IF_ERROR(out->set_u32("tokenizer.ggml.eos_token_id", 2));
  WLLM_RETURN_IF_ERROR(out->set_u32("tokenizer.ggml.seperator_token_id", kNoToken));  // llama.cpp's spelling
  WLLM_RETURN_IF_ERROR(out->set_u32("tokenizer.ggml.padding_token_id", kNoToken));
  WLLM_RETURN_IF_ERROR(out->set_u32("llama.context_length", c.seq_len));
  WLLM_RETURN_IF_ERROR(out->set_u32("llama.embedding_length", c.dim));
  WLLM_RETURN_IF_ERROR(out->set_u32("llama.feed_forward_length", c.hidden_dim));
  WLLM_RETURN_IF_ERROR(out->set_u32("llama.attention.head_count", c.n_heads));
  WLLM_RETURN_IF_ERROR(out->set_u32("llama.attention.head_count_kv", c.n_kv_heads));
  WLLM_RETURN_IF_ERROR(out->set_u32("llama.block_count", c.n_layers));
  WLLM_RETURN_IF_ERROR(out->set_u32("llama.rope.dimension_count", c.head_size()));
  WLLM_RETURN_IF_ERROR(out->set_f32("llama.attention.layer_norm_rms_epsilon", kRmsNormEps));
  for (const Llama2cTensor& t : llama2c_tensors(c)) {
    WLLM_RETURN_IF_ERROR(out->add_tensor_info(t.name, TensorType::kF32, t.shape));
  }
  return {};
}

}  // namespace wllm
