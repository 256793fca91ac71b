// wasm-llm convert IN --tokenizer TOKENIZER -o OUT.gguf: writes a model the
// engine reads (a llama2.c checkpoint with its tokenizer file, or a split
// GGUF model, or a GGUF file) as one GGUF file that llama.cpp loads too.
// A llama2.c checkpoint becomes what llama.cpp's convert-llama2c-to-ggml
// makes of it (llama2c/as_gguf.h says where the two differ); tensor data is
// copied byte for byte.
#include <cstdio>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/model_file.h"
#include "cli/model_writer.h"

namespace wllm::cli {
namespace {

Status run(const Args& args) {
  const std::string out_path = args.get_string({"-o", "--output"});
  if (args.positionals().size() != 1 || out_path.empty()) {
    return Status::error(ErrorCode::kInvalidArgument, "usage: wasm-llm convert IN [--tokenizer FILE] -o OUT.gguf");
  }
  const std::string in_path = args.positionals()[0];
  WLLM_ASSIGN_OR_RETURN(const std::shared_ptr<ModelFiles> files, ModelFiles::open(in_path, args.get_string({"--tokenizer"})));
  WLLM_ASSIGN_OR_RETURN(const ModelLayout layout, files->layout());
  WLLM_RETURN_IF_ERROR(write_model_file(files, layout, out_path));
  std::fprintf(stderr, "wrote %s: %zu tensors, %zu metadata keys\n", out_path.c_str(), layout.file.tensors().size(),
               layout.file.kvs().size());
  return {};
}

}  // namespace

const Command kConvertCommand = {
    .name = "convert",
    .synopsis = "convert IN [--tokenizer FILE] -o OUT.gguf",
    .summary = "write a llama2.c checkpoint (or a split model) as one GGUF file",
    .details = [] {
      return std::string("As llama.cpp's convert-llama2c-to-ggml does; llama.cpp loads the result.\n");
    },
    .reads_model = true,
    .switches = {},
    .options = {"--tokenizer", "-o", "--output"},
    .run = run,
};

}  // namespace wllm::cli
