// Fuzzes model loading the way the wasm worker streams a model: the header
// is parsed from growing prefixes (begin_load's kNeedMoreData loop), the
// tensor data copied into the arena, the weights bound and repacked
// (finish_load), and a loaded model generates a few tokens and embeds (a
// reranker also ranks).
//
// An input is one model file (a GGUF file), or a bundle of files:
//   "WLLMFILE" | then, to the end, u32 length + that many bytes, per file
// where the files are those of a split GGUF model (the first is offered
// alone until the engine asks for the others), or a llama2.c checkpoint and
// its tokenizer file.
// Seeds: tools/fuzz.sh builds them (stories260K as GGUF, as a llama2.c
// checkpoint and split in 3; small `synth` models of several types;
// vocab-only files; broken and lying variants).
//
// Besides the sanitizers, it checks the loader's contract: an error always
// has a code and a message, the loader always asks for more than it has and
// no more than there is, and data ranges lie inside their files.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "../cpp/memory_model.h"
#include "engine/engine.h"
#include "llama2c/checkpoint.h"

namespace {

// Refuses anything bigger than a small model before allocating it, so a
// header that claims gigabytes costs nothing.
constexpr uint64_t kMemoryLimit = 64ull << 20;
constexpr int kContext = 8;
constexpr uint64_t kFirstPrefix = 64;
constexpr char kBundleMagic[] = "WLLMFILE";

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "loader_fuzz: %s\n", what);
    std::abort();
  }
}

void check_error(const wllm::Status& s) {
  check(s.code() != wllm::ErrorCode::kOk && !s.message().empty(), "an error without a code or message");
  check(s.code() != wllm::ErrorCode::kInternal, s.message().c_str());  // the loader's contract broke
}

// The files of the input (see the top of the file).
std::vector<std::span<const uint8_t>> files_of(std::span<const uint8_t> input) {
  const size_t magic = sizeof kBundleMagic - 1;
  if (input.size() < magic || std::memcmp(input.data(), kBundleMagic, magic) != 0) return {input};
  std::vector<std::span<const uint8_t>> files;
  for (size_t at = magic; at + 4 <= input.size();) {
    uint32_t length = 0;
    std::memcpy(&length, input.data() + at, 4);
    at += 4;
    const size_t n = std::min<size_t>(length, input.size() - at);
    files.push_back(input.subspan(at, n));
    at += n;
  }
  return files;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::span<const uint8_t>> files = files_of({data, size});
  if (files.empty()) return 0;
  wllm::LoadOptions options;
  options.n_ctx = kContext;
  // One thread: the pool's threads spin while they wait for work, which on a
  // busy machine costs more than the work (the C++ tests cover thread counts).
  options.n_threads = 1;
  options.memory_limit = kMemoryLimit;
  // A checkpoint's second file is its tokenizer.
  const bool gguf = files[0].size() >= 4 && std::memcmp(files[0].data(), "GGUF", 4) == 0;
  if (!gguf && files.size() == 2) {
    options.tokenizer = files[1];
    files.pop_back();
  }

  wllm::Engine engine;
  wllm::Status s = wllm::testing::load_files(&engine, files, options, kFirstPrefix);
  if (s.code() == wllm::ErrorCode::kInvalidArgument) {
    options.n_ctx = 0;  // a training context under kContext: take the model's own
    s = wllm::testing::load_files(&engine, files, options, kFirstPrefix);
  }
  if (!s.ok()) return check_error(s), 0;

  wllm::GenerateOptions generate;
  generate.sampling.temperature = 0;
  generate.max_tokens = 3;
  generate.stop = {"\n\n"};
  std::string text;
  const auto result = engine.generate("Once upon a", generate, [&](std::string_view t) { text.append(t); });
  if (!result.ok()) check_error(result.status());

  // eval_logits' own path, on the vocabulary's first and last ids.
  std::vector<float> logits;
  s = engine.eval_logits({0, engine.config().n_vocab - 1}, &logits);
  if (!s.ok()) check_error(s);

  // Embeddings: two texts in one pass (an encoder), or one after the other.
  const auto embedded = engine.embed({"Once upon a", "time"}, {});
  if (!embedded.ok()) check_error(embedded.status());
  const auto ranked = engine.rank("Once", {"upon a time"});
  if (!ranked.ok()) check_error(ranked.status());
  return 0;
}
