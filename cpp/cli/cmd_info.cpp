// wasm-llm info: what a model holds (a GGUF file, a split GGUF model or a
// llama2.c checkpoint), read from its headers only.
#include <cstdio>
#include <map>
#include <string>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/model_file.h"
#include "model/transformer.h"
#include "quant/kernels.h"
#include "tokenizer/tokenizer.h"

namespace wllm::cli {
namespace {

double mib(uint64_t bytes) { return bytes / 1048576.0; }

Status run(const Args& args) {
  const std::string path = args.get_string({"-m", "--model"});
  if (path.empty()) return Status::error(ErrorCode::kInvalidArgument, "missing -m FILE");
  WLLM_ASSIGN_OR_RETURN(const std::shared_ptr<ModelFiles> files, ModelFiles::open(path, args.get_string({"--tokenizer"})));
  WLLM_ASSIGN_OR_RETURN(const ModelLayout layout, files->layout());
  const GgufFile& file = layout.file;

  std::printf("file:          %s\n", path.c_str());
  const std::string contents = str_printf("%zu metadata keys, %zu tensors", file.kvs().size(), file.tensors().size());
  switch (layout.format) {
    case ModelFormat::kGguf:
      std::printf("format:        GGUF v%u, %s, alignment %llu\n", file.version(), contents.c_str(),
                  static_cast<unsigned long long>(file.alignment()));
      std::printf("size:          %.2f MiB (header %.2f MiB, tensor data %.2f MiB)\n", mib(file.file_size()),
                  mib(file.data_offset()), mib(file.data_size()));
      break;
    case ModelFormat::kSplitGguf:
      std::printf("format:        GGUF v%u split into %d files (the last: %s), %s\n", file.version(),
                  files->file_count(), files->path(files->file_count() - 1).c_str(), contents.c_str());
      std::printf("size:          %.2f MiB in all (tensor data %.2f MiB)\n", mib(file.file_size()),
                  mib(file.data_size()));
      break;
    case ModelFormat::kLlama2c:
      std::printf("format:        llama2.c checkpoint, tokenizer %s (as GGUF: %s)\n", files->tokenizer_path().c_str(),
                  contents.c_str());
      std::printf("size:          tensor data %.2f MiB\n", mib(file.data_size()));
      break;
  }

  // Tensor types: how many tensors and bytes of each; then the weights' count,
  // which does not depend on the types (the size of a model as people name it).
  std::map<std::string, std::pair<int, uint64_t>> by_type;
  int64_t n_parameters = 0;
  for (const GgufTensorInfo& t : file.tensors()) {
    auto& e = by_type[type_traits(t.type).name];
    ++e.first;
    e.second += t.n_bytes;
    n_parameters += t.n_elements();
  }
  for (const auto& [name, e] : by_type) {
    std::printf("tensors:       %-5s %4d tensors, %.2f MiB\n", name.c_str(), e.first, mib(e.second));
  }
  std::printf("parameters:    %lld (%.2f M)\n", static_cast<long long>(n_parameters), n_parameters / 1e6);

  Result<ModelConfig> config = load_config(file);
  if (config.ok()) {
    const ModelConfig& c = *config;
    std::printf("architecture:  %s%s%s\n", c.arch_name.c_str(), c.name.empty() ? "" : " — ", c.name.c_str());
    std::printf("shape:         dim %d, %d layers, %d heads (%d kv heads, head dim %d), ffn %d, vocab %d\n", c.dim,
                c.n_layers, c.n_heads, c.n_kv_heads, c.head_dim, c.ffn_dim, c.n_vocab);
    std::printf("rope:          %s, %d dims, base %g, scale %g%s", c.rope_neox ? "neox" : "normal", c.rope_dims,
                c.rope_freq_base, c.rope_freq_scale, file.find_tensor("rope_freqs.weight") ? ", rope_freqs" : "");
    if (c.rope_long_short) {
      std::printf(", LongRoPE (long factors beyond %d positions, magnitude %g)", c.rope_orig_ctx, c.rope_attn_factor);
    }
    std::printf("\n");
    if (c.local_layers() > 0) {
      std::printf("attention:     sliding window of %d positions in %d of %d layers\n", c.sliding_window,
                  c.local_layers(), c.n_layers);
    }
    std::printf("context:       %d (training)\n", c.n_ctx_train);
    WLLM_ASSIGN_OR_RETURN(const int64_t ctx_arg, args.get_int({"-c", "--ctx"}, 0));
    const int ctx = ctx_arg > 0 ? static_cast<int>(std::min<int64_t>(ctx_arg, c.n_ctx_train)) : std::min(c.n_ctx_train, 4096);
    std::printf("memory:        weights %.2f MiB + KV cache %.2f MiB (f16, %d positions)\n", mib(file.data_size()),
                mib(Transformer::plan_kv_cache_bytes(c, ctx)), ctx);
    if (c.encoder) {
      std::printf("output:        none: an encoder (%s attention), embeddings pooled by %s%s\n",
                  c.causal ? "causal" : "bidirectional", pooling_name(c.pooling),
                  c.cls_head || c.cls_out ? ", with a reranker's classification head" : "");
    } else if (!file.find_tensor("output.weight")) {
      std::printf("output:        tied to token_embd\n");
    }
  } else {
    std::printf("architecture:  not loadable: %s\n", config.status().message().c_str());
  }

  Result<Tokenizer> tok = Tokenizer::from_gguf(file);
  const auto model = file.get_string_or("tokenizer.ggml.model", "?");
  const auto pre = file.get_string_or("tokenizer.ggml.pre", "default");
  if (tok.ok()) {
    std::printf("tokenizer:     %.*s (pre-tokenizer %.*s), %d tokens, bos %d, eos %d\n",
                static_cast<int>(model.ok() ? model->size() : 1), model.ok() ? model->data() : "?",
                static_cast<int>(pre.ok() ? pre->size() : 1), pre.ok() ? pre->data() : "?", tok->n_vocab(),
                tok->bos(), tok->eos());
  } else {
    std::printf("tokenizer:     not loadable: %s\n", tok.status().message().c_str());
  }
  // Not the file's: the kernels this build would run it with on this machine.
  std::printf("kernels:       %s\n", active_kernel_isa());
  return {};
}

}  // namespace

const Command kInfoCommand = {
    .name = "info",
    .synopsis = "info -m FILE [--ctx N]",
    .summary = "architecture, shapes, tensor types, tokenizer, sizes",
    .details = [] {
      return std::string(
          "Reads only the header. --ctx N: the KV cache size it shows is for N positions\n"
          "(default: min(the model's training context, 4096)).\n");
    },
    .reads_model = true,
    .switches = {},
    .options = {"-m", "--model", "-c", "--ctx", "--tokenizer"},
    .run = run,
};

}  // namespace wllm::cli
