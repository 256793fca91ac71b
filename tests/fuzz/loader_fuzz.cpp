// Fuzzes model loading the way the wasm worker streams a file: the input is a
// whole GGUF file. The header is parsed from a growing prefix (begin_load's
// kNeedMoreData loop), the tensor data copied into the arena, the weights
// bound and repacked (finish_load), and a loaded model generates a few tokens
// and embeds (a reranker also ranks).
// Seeds: tools/fuzz.sh builds them (stories260K, small `synth` models of
// several types, vocab-only files).
//
// Besides the sanitizers, it checks the loader's contract: an error always
// has a code and a message, and the prefix loop always makes progress.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace {

// Refuses anything bigger than a small model before allocating it, so a
// header that claims gigabytes costs nothing.
constexpr uint64_t kMemoryLimit = 64ull << 20;
constexpr int kContext = 8;
constexpr uint64_t kFirstPrefix = 64;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "loader_fuzz: %s\n", what);
    std::abort();
  }
}

void check_error(const wllm::Status& s) {
  check(s.code() != wllm::ErrorCode::kOk && !s.message().empty(), "an error without a code or message");
}

// begin_load() from the first kFirstPrefix bytes, reading more as it asks.
wllm::Status begin_load(wllm::Engine& engine, std::span<const uint8_t> file, const wllm::LoadOptions& options) {
  uint64_t prefix = std::min<uint64_t>(kFirstPrefix, file.size());
  for (;;) {
    uint64_t needed = 0;
    wllm::Status s = engine.begin_load(file.first(prefix), file.size(), options, &needed);
    if (s.code() != wllm::ErrorCode::kNeedMoreData) return s;
    check(needed > prefix && needed <= file.size(), "kNeedMoreData asks for no more bytes, or beyond the file");
    prefix = needed;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> file(data, size);
  wllm::LoadOptions options;
  options.n_ctx = kContext;
  // One thread: the pool's threads spin while they wait for work, which on a
  // busy machine costs more than the work (the C++ tests cover thread counts).
  options.n_threads = 1;
  options.memory_limit = kMemoryLimit;

  wllm::Engine engine;
  wllm::Status s = begin_load(engine, file, options);
  if (s.code() == wllm::ErrorCode::kInvalidArgument) {
    options.n_ctx = 0;  // a training context under kContext: take the model's own
    s = begin_load(engine, file, options);
  }
  if (!s.ok()) return check_error(s), 0;

  check(engine.data_offset() + engine.data_size() <= size, "tensor data beyond the end of the file");
  std::copy(data + engine.data_offset(), data + engine.data_offset() + engine.data_size(),
            engine.data_destination());
  s = engine.finish_load();
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
