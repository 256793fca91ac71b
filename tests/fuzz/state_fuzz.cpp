// Fuzzes restoring a saved state (engine/state_file.h) the way the wasm
// worker feeds one: in pieces, into a model that held other tokens. The
// models are loaded once from $WLLM_STATE_FUZZ_MODELS (tools/fuzz.sh points
// it at the models tests/fuzz/seed-corpus.mjs writes: stories260K, and
// small gemma3 and lfm2 models whose sliding-window ring and convolution
// state have their own parts in a state); the seeds are their states after
// prompts of several lengths.
//
// Input: byte 0 picks the model, byte 1 the piece size (1 to 256 bytes, or
// all at once); bit 0 of byte 2 rewrites the state's last 8 bytes with the
// checksum of the rest, so mutations get past it to the checks and the
// memory behind it. The rest is the state. Checked besides the sanitizers:
//  - an error has the code kBadState and a message, and the model then holds
//    what it held (a refusal by the header) or nothing (by the body), and
//    still generates;
//  - a restored state holds the tokens it names, generates, and saves again
//    into bytes that restore the same tokens.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/checksum.h"
#include "engine/engine.h"

namespace {

constexpr int kContext = 96;  // past lfm2's first checkpoint and gemma3's ring of 4 + 63 slots

std::vector<std::unique_ptr<wllm::Engine>>* engines = nullptr;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "state_fuzz: %s\n", what);
    std::abort();
  }
}

std::unique_ptr<wllm::Engine> load(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto engine = std::make_unique<wllm::Engine>();
  const wllm::LoadOptions options{.n_ctx = kContext, .n_threads = 1};
  check(engine->begin_load(file, file.size(), options).ok(), "a model of $WLLM_STATE_FUZZ_MODELS does not load");
  std::copy(file.begin() + engine->data_offset(), file.begin() + engine->data_offset() + engine->data_size(),
            engine->data_destination());
  check(engine->finish_load().ok(), "a model of $WLLM_STATE_FUZZ_MODELS does not load");
  return engine;
}

// Restores `state` into e in pieces of `piece` bytes.
wllm::Status restore(wllm::Engine& e, std::span<const uint8_t> state, size_t piece) {
  wllm::Result<wllm::StateReader> reader = e.load_state(state.size());
  if (!reader.ok()) return reader.status();
  for (size_t at = 0; at < state.size(); at += piece) {
    const wllm::Status s = reader->write(state.subspan(at, std::min(piece, state.size() - at)));
    if (!s.ok()) return s;
  }
  return reader->finish();
}

// A short greedy generation after the tokens the model holds, which must not fail but for a full context.
void generate_after(wllm::Engine& e) {
  wllm::GenerateOptions g;
  g.max_tokens = 3;
  g.sampling.temperature = 0;
  const std::string prompt = e.tokenizer().decode(e.model().sequence()) + " and";
  const auto result = e.generate(prompt, g, nullptr);
  check(result.ok() || result.status().code() == wllm::ErrorCode::kContextFull, "generation after a restore failed");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* dir = std::getenv("WLLM_STATE_FUZZ_MODELS");
  check(dir != nullptr, "set WLLM_STATE_FUZZ_MODELS to the models' folder (tools/fuzz.sh does)");
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) paths.push_back(entry.path());
  std::sort(paths.begin(), paths.end());  // byte 0's meaning stays fixed
  engines = new std::vector<std::unique_ptr<wllm::Engine>>();
  for (const auto& path : paths) engines->push_back(load(path));
  check(!engines->empty(), "no models in $WLLM_STATE_FUZZ_MODELS");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  wllm::Engine& e = *(*engines)[data[0] % engines->size()];
  const size_t piece = data[1] == 0 ? size : data[1];
  std::vector<uint8_t> state(data + 3, data + size);
  if ((data[2] & 1) && state.size() >= 8) {
    wllm::Checksum64 sum;
    sum.update(state.data(), state.size() - 8);
    const uint64_t digest = sum.digest();
    for (int i = 0; i < 8; ++i) state[state.size() - 8 + i] = static_cast<uint8_t>(digest >> (8 * i));
  }

  const std::vector<int32_t> before = e.model().sequence();
  const wllm::Status s = restore(e, state, piece);
  if (!s.ok()) {
    check(s.code() == wllm::ErrorCode::kBadState && !s.message().empty(), "a refusal without kBadState or a message");
    // Refused by its header, the cache is as it was; by its body, empty (engine.h).
    const std::vector<int32_t>& after = e.model().sequence();
    check(after.empty() || after == before, "a refused state left other tokens in the cache");
    generate_after(e);
    return 0;
  }
  const std::vector<int32_t> tokens = e.model().sequence();
  // Saved again, the state restores the same tokens.
  std::vector<uint8_t> saved;
  {
    wllm::Result<wllm::StateWriter> writer = e.save_state();
    check(writer.ok(), "a restored state does not save");
    for (const std::span<const uint8_t> p : writer->pieces()) saved.insert(saved.end(), p.begin(), p.end());
  }
  check(restore(e, saved, saved.size()).ok(), "a saved state does not restore");
  check(e.model().sequence() == tokens, "a saved state restores other tokens");
  generate_after(e);
  return 0;
}
