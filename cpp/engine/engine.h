// The engine: one loaded model plus its tokenizer, and the generation loop.
// This is the API the CLI and the wasm binding call.
//
// Loading follows one path on every platform (design-notes §1), in three steps
// so the caller can stream the file without holding it twice:
//   1. begin_load(files): parse and check the header from the first bytes of
//      the model's files (kNeedMoreData => call again with what LayoutNeeds
//      asks for: a longer prefix, or all the files of a split model), check
//      the memory the model needs, allocate the arena for the tensor data;
//   2. the caller copies the bytes data_ranges() names into
//      data_destination() — from fetch, OPFS, fread or mmap;
//   3. finish_load(): bind the tensors and allocate the runtime buffers.
// The model's files (engine/model_layout.h): one GGUF file, the files of a
// split GGUF, or a llama2.c checkpoint (with LoadOptions::tokenizer).
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
#include "engine/embedding.h"
#include "engine/generation.h"
#include "engine/model_layout.h"
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
  // A llama2.c checkpoint's tokenizer file, whole (read during begin_load only).
  std::span<const uint8_t> tokenizer = {};
};

// Receives generated text as it is produced: only whole UTF-8 characters.
using TextCallback = std::function<void(std::string_view text)>;

struct EmbedOptions {
  // How to pool: the model's pooling_type by default; where that is none, a
  // decoder's last token and an encoder's mean. kRank: a reranker's scores.
  std::optional<Pooling> pooling;
  bool normalize = true;  // L2-normalise each embedding
};

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

  Status begin_load(std::span<const FilePrefix> files, const LoadOptions& options, LayoutNeeds* needs = nullptr);
  // The same for a model in one file (a split model is then an error).
  Status begin_load(std::span<const uint8_t> prefix, uint64_t file_size, const LoadOptions& options,
                    uint64_t* needed_prefix_bytes = nullptr);
  // What to copy into the arena, file by file.
  const std::vector<DataRange>& data_ranges() const { return ranges_; }
  // One GGUF file: the bytes [data_offset(), data_offset() + data_size()) go to
  // data_destination() (its only range; other layouts: data_ranges()).
  uint64_t data_offset() const { return ranges_.empty() ? 0 : ranges_[0].file_offset; }
  uint64_t data_size() const { return ranges_.empty() ? 0 : ranges_[0].size; }
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

  // Starts embedding `texts` (replacing any unfinished job; the caller then
  // runs embedding()->step()): each is tokenized with the vocabulary's
  // special tokens (BERT: [CLS] text [SEP]) and must fit the context
  // (kContextFull names the text). A model whose pooling is rank (a
  // reranker) needs options.pooling. Results: one vector of dim floats each.
  Status start_embedding(const std::vector<std::string>& texts, const EmbedOptions& options);
  // Starts scoring how relevant each of `documents` is to `query` (a
  // reranker: a model with a classification head), each pair formatted as
  // llama.cpp's server does (the model's rerank template, else BOS query
  // EOS SEP document EOS as the vocabulary adds them). Results: one
  // probability in [0, 1] each.
  Status start_ranking(std::string_view query, const std::vector<std::string>& documents);
  // The current embedding or ranking job, or nullptr.
  EmbeddingJob* embedding() { return embedding_.get(); }
  // Both, run to the end.
  Result<std::vector<std::vector<float>>> embed(const std::vector<std::string>& texts, const EmbedOptions& options);
  Result<std::vector<float>> rank(std::string_view query, const std::vector<std::string>& documents);
  // The pooling an embedding with `requested` uses (EmbedOptions::pooling).
  Pooling embedding_pooling(std::optional<Pooling> requested) const;
  // Whether the model has a classification head to rank with.
  bool is_reranker() const;
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
  bool has_conv_layers() const;  // lfm2's short convolutions (not embedded)
  // Checks that each token sequence fits the context, then starts the job.
  Status start_job(std::vector<std::vector<int32_t>> inputs, Pooling pooling, EmbeddingJob::Output output);
  std::unique_ptr<GgufFile> file_;
  std::vector<DataRange> ranges_;
  ModelConfig config_;
  LoadOptions options_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<uint8_t, ArenaDeleter> arena_;
  int repacked_tensors_ = 0;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<ModelWeights> weights_;
  std::unique_ptr<Transformer> model_;
  std::unique_ptr<Generation> generation_;
  std::unique_ptr<EmbeddingJob> embedding_;
  ConstraintCache constraints_;
  int n_ctx_ = 0;
  std::optional<uint64_t> model_id_;
};

}  // namespace wllm
