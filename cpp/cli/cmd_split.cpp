// wasm-llm split [--split-max-tensors N | --split-max-size SIZE] IN OUT:
// writes a model as the files of a split GGUF model, OUT-00001-of-0000N.gguf
// and on, as llama.cpp's gguf-split does (the same options, the same file
// names and split.* keys; its default of 128 tensors per file). SIZE is
// bytes of tensor data per file, with K, M or G for 10^3, 10^6, 10^9.
#include <cstdio>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/help.h"
#include "cli/model_file.h"
#include "cli/model_writer.h"

namespace wllm::cli {
namespace {

constexpr int kDefaultMaxTensors = 128;  // gguf-split's default

Result<uint64_t> parse_size(const std::string& text) {
  uint64_t unit = 1;
  std::string digits = text;
  if (!digits.empty()) {
    const char last = digits.back();
    unit = last == 'K' ? 1000ull : last == 'M' ? 1000000ull : last == 'G' ? 1000000000ull : 1;
    if (unit > 1) digits.pop_back();
  }
  if (digits.empty() || digits.size() > 12 || digits.find_first_not_of("0123456789") != std::string::npos) {
    return Status::error(ErrorCode::kInvalidArgument, "--split-max-size '%s' is not a size (e.g. 500M, 2G)", text.c_str());
  }
  const uint64_t size = std::stoull(digits) * unit;
  if (size == 0) return Status::error(ErrorCode::kInvalidArgument, "--split-max-size must be positive");
  return size;
}

Status run(const Args& args) {
  if (args.positionals().size() != 2) {
    std::fputs(usage_text(kSplitCommand).c_str(), stderr);
    return Status::error(ErrorCode::kInvalidArgument, "split takes IN and OUT");
  }
  SplitLimits limits;
  if (args.has("--split-max-size")) {
    if (args.has("--split-max-tensors")) {
      return Status::error(ErrorCode::kInvalidArgument, "--split-max-tensors and --split-max-size exclude each other");
    }
    WLLM_ASSIGN_OR_RETURN(limits.max_bytes, parse_size(args.get_string({"--split-max-size"})));
  } else {
    WLLM_ASSIGN_OR_RETURN(const int64_t n, args.get_int({"--split-max-tensors"}, kDefaultMaxTensors));
    if (n < 1 || n > INT32_MAX) return Status::error(ErrorCode::kInvalidArgument, "--split-max-tensors must be positive");
    limits.max_tensors = static_cast<int>(n);
  }
  const std::string in_path = args.positionals()[0];
  WLLM_ASSIGN_OR_RETURN(const std::shared_ptr<ModelFiles> files, ModelFiles::open(in_path, args.get_string({"--tokenizer"})));
  WLLM_ASSIGN_OR_RETURN(const ModelLayout layout, files->layout());
  WLLM_ASSIGN_OR_RETURN(const std::vector<std::string> names,
                        write_split_files(files, layout, limits, args.positionals()[1]));
  for (const std::string& name : names) std::printf("%s\n", name.c_str());
  std::fprintf(stderr, "split %s into %zu files: %zu tensors\n", in_path.c_str(), names.size(),
               layout.file.tensors().size());
  return {};
}

}  // namespace

const Command kSplitCommand = {
    .name = "split",
    .synopsis = "split [--split-max-tensors N | --split-max-size SIZE] IN OUT",
    .summary = "write OUT-00001-of-0000N.gguf, ... as llama.cpp's gguf-split does",
    .details = [] {
      return std::string(
          "Default: 128 tensors per file. SIZE: bytes of tensor data per file, or with K, M or G\n"
          "(10^3, 10^6, 10^9), e.g. 500M.\n");
    },
    .reads_model = true,
    .switches = {},
    .options = {"--split-max-tensors", "--split-max-size", "--tokenizer"},
    .run = run,
};

}  // namespace wllm::cli
