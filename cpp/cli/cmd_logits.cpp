// wasm-llm logits: evaluates a token sequence and writes every position's
// next-token logits as raw little-endian f32 (n_tokens x n_vocab), for the
// parity tests against llama.cpp.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/model_file.h"
#include "core/file_io.h"

namespace wllm::cli {
namespace {

Result<std::vector<int32_t>> parse_ids(const std::string& list) {
  std::vector<int32_t> ids;
  const char* p = list.c_str();
  while (*p) {
    char* end = nullptr;
    const long v = std::strtol(p, &end, 10);
    if (end == p || v < 0 || v > INT32_MAX) {
      return Status::error(ErrorCode::kInvalidArgument, "--tokens expects comma-separated ids, got '%s'", list.c_str());
    }
    ids.push_back(static_cast<int32_t>(v));
    p = *end == ',' ? end + 1 : end;
    if (*end != ',' && *end != '\0') {
      return Status::error(ErrorCode::kInvalidArgument, "--tokens expects comma-separated ids, got '%s'", list.c_str());
    }
  }
  if (ids.empty()) return Status::error(ErrorCode::kInvalidArgument, "--tokens is empty");
  return ids;
}

Status run(const Args& args) {
  const std::string model = args.get_string({"-m", "--model"});
  const std::string out_path = args.get_string({"-o"});
  if (model.empty() || out_path.empty()) return Status::error(ErrorCode::kInvalidArgument, "usage: logits -m FILE --tokens IDS -o OUT.f32");
  WLLM_ASSIGN_OR_RETURN(const std::vector<int32_t> ids, parse_ids(args.get_string({"--tokens"})));
  WLLM_ASSIGN_OR_RETURN(LoadOptions load, load_options_from(args));
  Engine engine;
  WLLM_RETURN_IF_ERROR(load_model(model, args.get_string({"--tokenizer"}), load, &engine));
  std::vector<float> logits;
  WLLM_RETURN_IF_ERROR(engine.eval_logits(ids, &logits));
  std::FILE* f = std::fopen(out_path.c_str(), "wb");
  if (!f) return Status::error(ErrorCode::kIo, "cannot write '%s'", out_path.c_str());
  const bool written = write_fully(f, logits.data(), logits.size() * sizeof(float));
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed) return Status::error(ErrorCode::kIo, "writing '%s' failed", out_path.c_str());
  return {};
}

}  // namespace

const Command kLogitsCommand = {
    .name = "logits",
    .synopsis = "logits -m FILE --tokens ID,ID,... -o OUT.f32 [--threads N] [--ctx N]",
    .summary = "write every position's next-token logits (for parity tests)",
    .details = [] { return std::string("OUT.f32: raw f32, one row of vocabulary size per token.\n"); },
    .reads_model = true,
    .switches = {},
    .options = {"-m", "--model", "--tokens", "-o", "-t", "--threads", "-c", "--ctx", "--tokenizer"},
    .run = run,
};

}  // namespace wllm::cli
