#include "engine/engine.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <new>

namespace wllm {
namespace {

constexpr size_t kArenaAlignment = 64;  // a cache line; every SIMD width we use
constexpr int kDefaultMaxContext = 4096;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Emits generated text while holding back any tail that could be the start of
// a stop string, so a stop string is never partly printed.
class StopMatcher {
 public:
  StopMatcher(const std::vector<std::string>& stops, const TextCallback& out) : stops_(stops), out_(out) {}

  // Adds text; returns true when a stop string has been completed.
  bool push(std::string_view text) {
    pending_.append(text);
    size_t cut = std::string::npos;
    for (const std::string& s : stops_) {
      if (s.empty()) continue;
      const size_t at = pending_.find(s);
      if (at != std::string::npos) cut = std::min(cut, at);
    }
    if (cut != std::string::npos) {
      emit(cut);
      return true;
    }
    emit(pending_.size() - longest_stop_prefix_suffix());
    return false;
  }
  void flush() { emit(pending_.size()); }

 private:
  // Length of the longest suffix of pending_ that is a proper prefix of a stop string.
  size_t longest_stop_prefix_suffix() const {
    size_t best = 0;
    for (const std::string& s : stops_) {
      for (size_t len = std::min(s.size() - (s.empty() ? 0 : 1), pending_.size()); len > best; --len) {
        if (pending_.compare(pending_.size() - len, len, s, 0, len) == 0) {
          best = len;
          break;
        }
      }
    }
    return best;
  }
  void emit(size_t n) {
    if (n == 0) return;
    if (out_) out_(std::string_view(pending_).substr(0, n));
    pending_.erase(0, n);
  }

  const std::vector<std::string>& stops_;
  const TextCallback& out_;
  std::string pending_;
};

}  // namespace

const char* stop_reason_name(StopReason reason) {
  switch (reason) {
    case StopReason::kMaxTokens: return "max_tokens";
    case StopReason::kEndOfGeneration: return "end_of_generation";
    case StopReason::kStopString: return "stop_string";
    case StopReason::kContextFull: return "context_full";
  }
  return "unknown";
}

void Engine::ArenaDeleter::operator()(uint8_t* p) const { std::free(p); }

Engine::Engine() = default;
Engine::~Engine() = default;

Status Engine::begin_load(std::span<const uint8_t> prefix, uint64_t file_size, const LoadOptions& options,
                          uint64_t* needed_prefix_bytes) {
  model_.reset();
  weights_.reset();
  arena_.reset();
  file_.reset();
  WLLM_ASSIGN_OR_RETURN(GgufFile file, GgufFile::parse_header(prefix, file_size, needed_prefix_bytes));
  WLLM_ASSIGN_OR_RETURN(config_, load_config(file));
  WLLM_ASSIGN_OR_RETURN(Tokenizer tokenizer, Tokenizer::from_gguf(file));
  if (tokenizer.n_vocab() != config_.n_vocab) {
    return Status::error(ErrorCode::kBadFile, "tokenizer has %d tokens but the model has %d", tokenizer.n_vocab(),
                         config_.n_vocab);
  }
  if (options.n_ctx < 0 || options.n_threads < 0 || options.n_threads > 256) {
    return Status::error(ErrorCode::kInvalidArgument, "context size and thread count must be positive (thread count at most 256)");
  }
  options_ = options;
  n_ctx_ = options.n_ctx > 0 ? options.n_ctx : std::min(config_.n_ctx_train, kDefaultMaxContext);
  if (n_ctx_ > config_.n_ctx_train) {
    return Status::error(ErrorCode::kInvalidArgument, "context size %d exceeds the model's training context %d", n_ctx_,
                         config_.n_ctx_train);
  }
  const int threads = options.n_threads > 0 ? options.n_threads : ThreadPool::default_threads();

  // Refuse before allocating anything big if the model cannot fit.
  const uint64_t needed = file.data_size() + Transformer::plan_kv_cache_bytes(config_, n_ctx_) +
                          Transformer::plan_buffer_bytes(config_, n_ctx_, threads);
  if (options.memory_limit > 0 && needed > options.memory_limit) {
    return Status::error(ErrorCode::kOutOfMemory,
                         "the model needs %.1f MiB (weights %.1f MiB + context of %d) but only %.1f MiB are available",
                         needed / 1048576.0, file.data_size() / 1048576.0, n_ctx_, options.memory_limit / 1048576.0);
  }
  const size_t arena_bytes = (std::max<uint64_t>(file.data_size(), 1) + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
  uint8_t* arena = static_cast<uint8_t*>(std::aligned_alloc(kArenaAlignment, arena_bytes));
  if (!arena) {
    return Status::error(ErrorCode::kOutOfMemory, "could not allocate %.1f MiB for the weights",
                         arena_bytes / 1048576.0);
  }
  arena_.reset(arena);
  tokenizer_ = std::make_unique<Tokenizer>(std::move(tokenizer));
  file_ = std::make_unique<GgufFile>(std::move(file));
  if (!pool_ || pool_->size() != threads) pool_ = std::make_unique<ThreadPool>(threads);
  return {};
}

Status Engine::finish_load() {
  if (!file_ || !arena_) return Status::error(ErrorCode::kInvalidArgument, "finish_load() called before begin_load()");
  WLLM_ASSIGN_OR_RETURN(ModelWeights weights, bind_weights(*file_, config_, arena_.get()));
  weights_ = std::make_unique<ModelWeights>(std::move(weights));
  model_ = std::make_unique<Transformer>(config_, *weights_, n_ctx_, *pool_);
  return {};
}

MemoryReport Engine::memory() const {
  MemoryReport r;
  if (file_) r.weights = file_->data_size();
  if (model_) {
    r.kv_cache = model_->kv_cache_bytes();
    r.buffers = model_->buffer_bytes();
  }
  return r;
}

Status Engine::eval_logits(const std::vector<int32_t>& tokens, std::vector<float>* logits) {
  if (!model_) return Status::error(ErrorCode::kInvalidArgument, "no model is loaded");
  if (tokens.size() > static_cast<size_t>(n_ctx_)) {
    return Status::error(ErrorCode::kContextFull, "%zu tokens do not fit the context of %d", tokens.size(), n_ctx_);
  }
  const int n_vocab = config_.n_vocab;
  logits->resize(tokens.size() * n_vocab);
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= n_vocab) {
      return Status::error(ErrorCode::kInvalidArgument, "token id %d is outside the vocabulary (0..%d)", tokens[i],
                           n_vocab - 1);
    }
    const float* out = model_->forward(tokens[i], static_cast<int>(i));
    std::copy(out, out + n_vocab, logits->begin() + i * n_vocab);
  }
  return {};
}

Result<GenerateStats> Engine::generate(std::string_view prompt, const GenerateOptions& options,
                                       const TextCallback& on_text, const std::atomic<bool>* abort) {
  if (!model_) return Status::error(ErrorCode::kInvalidArgument, "no model is loaded");
  if (options.max_tokens < 0) return Status::error(ErrorCode::kInvalidArgument, "max tokens must not be negative");
  WLLM_ASSIGN_OR_RETURN(Sampler sampler, Sampler::create(options.sampling, config_.n_vocab));
  const auto aborted = [&] { return abort && abort->load(std::memory_order_relaxed); };

  const std::vector<int32_t> tokens = tokenizer_->encode(prompt, options.add_special, options.parse_special);
  if (tokens.empty()) return Status::error(ErrorCode::kInvalidArgument, "the prompt is empty");
  if (tokens.size() >= static_cast<size_t>(n_ctx_)) {
    return Status::error(ErrorCode::kContextFull, "the prompt has %zu tokens but the context holds %d", tokens.size(),
                         n_ctx_);
  }

  GenerateStats stats;
  stats.prompt_tokens = static_cast<int>(tokens.size());
  auto start = std::chrono::steady_clock::now();
  const float* logits = nullptr;
  int pos = 0;
  for (int32_t t : tokens) {
    if (aborted()) return Status::error(ErrorCode::kAborted, "generation aborted");
    logits = model_->forward(t, pos++);
    sampler.accept(t);
  }
  stats.prefill_seconds = seconds_since(start);

  start = std::chrono::steady_clock::now();
  StreamDecoder decoder(*tokenizer_);
  StopMatcher matcher(options.stop, on_text);
  std::string text;
  stats.stop_reason = StopReason::kMaxTokens;
  while (stats.generated_tokens < options.max_tokens) {
    if (aborted()) {
      matcher.flush();
      return Status::error(ErrorCode::kAborted, "generation aborted");
    }
    const int32_t next = sampler.sample(logits);
    if (tokenizer_->is_end_of_generation(next)) {
      stats.stop_reason = StopReason::kEndOfGeneration;
      break;
    }
    sampler.accept(next);
    ++stats.generated_tokens;
    text.clear();
    decoder.push(next, &text);
    if (matcher.push(text)) {
      stats.stop_reason = StopReason::kStopString;
      break;
    }
    if (stats.generated_tokens == options.max_tokens) break;
    if (pos >= n_ctx_) {
      stats.stop_reason = StopReason::kContextFull;
      break;
    }
    logits = model_->forward(next, pos++);
  }
  if (stats.stop_reason != StopReason::kStopString) {
    text.clear();
    decoder.finish(&text);
    if (!matcher.push(text)) matcher.flush();
  }
  stats.decode_seconds = seconds_since(start);
  return stats;
}

}  // namespace wllm
