// wasm-llm merge IN-00001-of-0000N.gguf OUT.gguf: joins the files of a split
// GGUF model (the others are found beside the first by their names) into one
// GGUF file, without the split.* keys: splitting a model and merging it
// again gives back the same file.
#include <cstdio>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/model_file.h"
#include "cli/model_writer.h"

namespace wllm::cli {
namespace {

Status run(const Args& args) {
  if (args.positionals().size() != 2) {
    return Status::error(ErrorCode::kInvalidArgument, "usage: wasm-llm merge IN-00001-of-0000N.gguf OUT.gguf");
  }
  const std::string in_path = args.positionals()[0];
  const std::string out_path = args.positionals()[1];
  WLLM_ASSIGN_OR_RETURN(const std::shared_ptr<ModelFiles> files, ModelFiles::open(in_path, ""));
  WLLM_ASSIGN_OR_RETURN(const ModelLayout layout, files->layout());
  if (layout.format != ModelFormat::kSplitGguf) {
    return Status::error(ErrorCode::kInvalidArgument, "'%s' is not the first file of a split GGUF model", in_path.c_str());
  }
  WLLM_RETURN_IF_ERROR(write_model_file(files, layout, out_path));
  std::fprintf(stderr, "merged %d files into %s: %zu tensors\n", files->file_count(), out_path.c_str(),
               layout.file.tensors().size());
  return {};
}

}  // namespace

const Command kMergeCommand = {
    .name = "merge",
    .synopsis = "merge IN-00001-of-0000N.gguf OUT.gguf",
    .summary = "join the files of a split model into one GGUF file",
    .details = [] {
      return std::string("The other files are found beside the first; split, then merged: the same bytes.\n");
    },
    .reads_model = false,
    .switches = {},
    .options = {},
    .run = run,
};

}  // namespace wllm::cli
