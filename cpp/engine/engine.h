// The engine: one loaded model plus its tokenizer, and the generation loop.
// This is the API the CLI and the wasm binding call.
//
// Loading follows one path on every platform (design-notes §1), in three steps
// so the caller can stream the file without holding it twice:
//   1. begin_load(prefix, file_size): parse and check the header from the
//      first bytes (kNeedMoreData => call again with a longer prefix), check
//      the memory the model needs, allocate the arena for the tensor data;
//   2. the caller copies file bytes [data_offset(), data_offset()+data_size())
//      into data_destination() — from fetch, OPFS, fread or mmap;
//   3. finish_load(): bind the tensors and allocate the runtime buffers.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "engine/generation.h"
#include "engine/state_file.h"
#include "gguf/gguf.h"
#include "grammar/constraint_cache.h"
#include "model/config.h"
#include "model/transformer.h"
#include "runtime/thread_pool.h"
#include "sampler/sampler.h"
#include "tokenizer/tokenizer.h"

namespace wllm {

struct LoadOptions {
  int n_ctx = 0;               // KV cache positions; 0: min(training context, 4096)
  int n_threads = 0;           // 0: ThreadPool::default_threads()
  uint64_t memory_limit = 0;   // bytes the model may use in all; 0: no limit
};

// Receives generated text as it is produced: only whole UTF-8 characters.
using TextCallback = std::function<void(std::string_view text)>;

struct MemoryReport {
  uint64_t weights = 0;    // the tensor-data arena
  uint64_t kv_cache = 0;
  uint64_t buffers = 0;    // activations and scratch
  uint64_t total() const { return weights + kv_cache + buffers; }
};

class Engine {
 public:
  Engine();
  ~Engine();

  Status begin_load(std::span<const uint8_t> prefix, uint64_t file_size, const LoadOptions& options,
                    uint64_t* needed_prefix_bytes = nullptr);
  uint64_t data_offset() const { return file_ ? file_->data_offset() : 0; }
  uint64_t data_size() const { return file_ ? file_->data_size() : 0; }
  uint8_t* data_destination() { return arena_.get(); }
  Status finish_load();
  bool loaded() const { return model_ != nullptr; }

  const GgufFile& file() const { return *file_; }
  const ModelConfig& config() const { return config_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  Transformer& model() { return *model_; }
  int n_ctx() const { return n_ctx_; }
  int n_threads() const { return pool_ ? pool_->size() : 0; }
  // Weight matrices repacked at load for the active kernels (repack.h).
  int repacked_tensors() const { return repacked_tensors_; }
  // Tasks engine thread i has run so far (ThreadPool::tasks_run).
  uint64_t thread_tasks_run(int thread_index) const { return pool_ ? pool_->tasks_run(thread_index) : 0; }
  MemoryReport memory() const;
  // Constrained generation's memory: the token trie (built on the first
  // constrained request) and the last grammar's caches.
  const ConstraintCache& constraints() const { return constraints_; }

  // Starts a step-by-step generation (replacing any unfinished one): checks
  // and tokenizes the prompt, compiles options.constraint (kInvalidArgument
  // names the grammar rule or schema keyword at fault); the caller then runs
  // generation()->step(). Returns kContextFull if the prompt does not fit.
  //
  // The model keeps the tokens its cache holds (Transformer::sequence()):
  // the prompt's prefix they share is not evaluated again (unless
  // options.reuse_cache is false), from the latest point the cache can
  // continue from exactly; the rest overwrites what followed. At least the
  // prompt's last token is evaluated, for its logits. The output is the
  // same, bit for bit, as with an empty cache.
  Status start_generation(std::string_view prompt, const GenerateOptions& options);
  // The current generation, or nullptr.
  Generation* generation() { return generation_.get(); }

  // Generates a continuation of `prompt`. Returns kContextFull if the prompt
  // does not fit, kAborted if *abort became true (text produced so far has
  // already been passed to on_text). on_prefilled (optional) runs once the
  // prompt has been evaluated, before the first token is sampled (to save
  // the state then); an error it returns ends the generation with it.
  Result<GenerateStats> generate(std::string_view prompt, const GenerateOptions& options, const TextCallback& on_text,
                                 const std::atomic<bool>* abort = nullptr,
                                 const std::function<Status()>& on_prefilled = {});

  // Evaluates `tokens` from position 0 and stores every position's
  // next-token logits (tokens.size() x n_vocab) in *logits.
  Status eval_logits(const std::vector<int32_t>& tokens, std::vector<float>* logits);

  // Names the model for saved states: a checksum (core/checksum.h) of its
  // GGUF header (tensor names, types and shapes; the metadata its config
  // comes from) and its tensor data as the file has them, so every build
  // computes the same id (model/weights.h: file_checksum). Computed on first
  // use (a pass over the weights), not at load: only states need it.
  uint64_t model_id();
  // The tokens the cache holds and their state, as a saved state's bytes
  // (engine/state_file.h).
  Result<StateWriter> save_state();
  // Restores a saved state of `size` bytes, fed to the reader in order; ends
  // any unfinished generation. A state its header refuses leaves the cache as
  // it was; once its body is being read, the cache holds nothing until the
  // reader's finish() succeeds (after a failure the next prompt is evaluated
  // in full).
  Result<StateReader> load_state(uint64_t size);

 private:
  struct ArenaDeleter {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<GgufFile> file_;
  ModelConfig config_;
  LoadOptions options_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<uint8_t, ArenaDeleter> arena_;
  int repacked_tensors_ = 0;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<ModelWeights> weights_;
  std::unique_ptr<Transformer> model_;
  std::unique_ptr<Generation> generation_;
  ConstraintCache constraints_;
  int n_ctx_ = 0;
  std::optional<uint64_t> model_id_;
};

}  // namespace wllm
