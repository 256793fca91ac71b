#include "engine/engine.h"

#include <algorithm>
#include <cstdlib>
#include <new>

#include "core/large_alloc.h"

namespace wllm {
namespace {

constexpr int kDefaultMaxContext = 4096;

}  // namespace

void Engine::ArenaDeleter::operator()(uint8_t* p) const { std::free(p); }

Engine::Engine() = default;
Engine::~Engine() = default;

Status Engine::begin_load(std::span<const uint8_t> prefix, uint64_t file_size, const LoadOptions& options,
                          uint64_t* needed_prefix_bytes) {
  const FilePrefix file{prefix, file_size};
  LayoutNeeds needs;
  Status s = begin_load({&file, 1}, options, &needs);
  if (s.code() == ErrorCode::kNeedMoreData && needs.files > 0) {
    return Status::error(ErrorCode::kInvalidArgument, "the model is split into %d files; this loader reads one file",
                         needs.files);
  }
  if (s.code() == ErrorCode::kNeedMoreData && needed_prefix_bytes) *needed_prefix_bytes = needs.bytes;
  return s;
}

Status Engine::begin_load(std::span<const FilePrefix> files, const LoadOptions& options, LayoutNeeds* needs) {
  generation_.reset();  // it refers to the model
  embedding_.reset();
  constraints_.clear();  // it refers to the tokenizer
  model_.reset();
  weights_.reset();
  arena_.reset();
  repacked_tensors_ = 0;
  file_.reset();
  ranges_.clear();
  WLLM_ASSIGN_OR_RETURN(ModelLayout layout, read_model_layout(files, options.tokenizer, needs));
  GgufFile& file = layout.file;
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
  options_.tokenizer = {};  // the caller's bytes, read above
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
  const size_t arena_bytes = std::max<uint64_t>(file.data_size(), 1);
  uint8_t* arena = allocate_large(arena_bytes);  // huge pages natively
  if (!arena) {
    return Status::error(ErrorCode::kOutOfMemory, "could not allocate %.1f MiB for the weights",
                         arena_bytes / 1048576.0);
  }
  arena_.reset(arena);
  tokenizer_ = std::make_unique<Tokenizer>(std::move(tokenizer));
  file_ = std::make_unique<GgufFile>(std::move(file));
  ranges_ = std::move(layout.ranges);
  if (!pool_ || pool_->size() != threads) pool_ = std::make_unique<ThreadPool>(threads);
  return {};
}

Status Engine::finish_load() {
  if (!file_ || !arena_) return Status::error(ErrorCode::kInvalidArgument, "finish_load() called before begin_load()");
  WLLM_ASSIGN_OR_RETURN(ModelWeights weights, bind_weights(*file_, config_, arena_.get()));
  model_id_.reset();
  repacked_tensors_ = repack_weights(config_, &weights, arena_.get());
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
  if (config_.encoder) {
    return Status::error(ErrorCode::kUnsupported, "%s is an embedding model: it gives no logits",
                         config_.arch_name.c_str());
  }
  if (tokens.size() > static_cast<size_t>(n_ctx_)) {
    return Status::error(ErrorCode::kContextFull, "%zu tokens do not fit the context of %d", tokens.size(), n_ctx_);
  }
  const int n_vocab = config_.n_vocab;
  for (int32_t t : tokens) {
    if (t < 0 || t >= n_vocab) {
      return Status::error(ErrorCode::kInvalidArgument, "token id %d is outside the vocabulary (0..%d)", t, n_vocab - 1);
    }
  }
  logits->resize(tokens.size() * n_vocab);
  for (size_t i = 0; i < tokens.size(); i += Transformer::kMaxBatch) {
    const int n = static_cast<int>(std::min<size_t>(Transformer::kMaxBatch, tokens.size() - i));
    const float* out = model_->forward_batch(tokens.data() + i, n, static_cast<int>(i), true);
    std::copy(out, out + static_cast<size_t>(n) * n_vocab, logits->begin() + i * n_vocab);
  }
  return {};
}

Status Engine::start_generation(std::string_view prompt, const GenerateOptions& options) {
  generation_.reset();
  embedding_.reset();
  if (!model_) return Status::error(ErrorCode::kInvalidArgument, "no model is loaded");
  if (config_.encoder) {
    return Status::error(ErrorCode::kUnsupported, "%s is an embedding model: it has no output layer to generate text "
                         "with (use embed)", config_.arch_name.c_str());
  }
  if (options.max_tokens < 0) return Status::error(ErrorCode::kInvalidArgument, "max tokens must not be negative");
  WLLM_ASSIGN_OR_RETURN(Sampler sampler, Sampler::create(options.sampling, config_.n_vocab));
  std::vector<int32_t> tokens = tokenizer_->encode(prompt, options.add_special, options.parse_special);
  if (tokens.empty()) return Status::error(ErrorCode::kInvalidArgument, "the prompt is empty");
  if (tokens.size() >= static_cast<size_t>(n_ctx_)) {
    return Status::error(ErrorCode::kContextFull, "the prompt has %zu tokens but the context holds %d", tokens.size(),
                         n_ctx_);
  }
  TokenMasker* masker = nullptr;
  if (options.constraint.active()) {
    WLLM_ASSIGN_OR_RETURN(masker, constraints_.masker_for(options.constraint, *tokenizer_));
  }
  // The prompt's prefix the cache holds, short of its last token (whose
  // logits the first sample needs), back to where the cache can continue.
  const std::vector<int32_t>& held = model_->sequence();
  const size_t most = options.reuse_cache ? std::min(held.size(), tokens.size() - 1) : 0;
  const size_t shared = std::mismatch(tokens.begin(), tokens.begin() + most, held.begin()).first - tokens.begin();
  const int cached = model_->rewind_point(static_cast<int>(shared));
  generation_ = std::make_unique<Generation>(*model_, *tokenizer_, n_ctx_, std::move(tokens), cached, options,
                                             std::move(sampler), masker);
  return {};
}

Result<GenerateStats> Engine::generate(std::string_view prompt, const GenerateOptions& options,
                                       const TextCallback& on_text, const std::atomic<bool>* abort,
                                       const std::function<Status()>& on_prefilled) {
  WLLM_RETURN_IF_ERROR(start_generation(prompt, options));
  std::string text;
  const auto deliver = [&] {
    if (!text.empty() && on_text) on_text(text);
    text.clear();
  };
  bool more = true;
  while (more) {
    if (abort && abort->load(std::memory_order_relaxed)) {
      generation_->cancel(&text);
      deliver();
      generation_.reset();
      return Status::error(ErrorCode::kAborted, "generation aborted");
    }
    const bool prefilling = !generation_->prefilled();
    more = generation_->step(&text);
    deliver();
    if (prefilling && generation_->prefilled() && on_prefilled) {
      const Status saved = on_prefilled();
      if (!saved.ok()) {
        generation_.reset();
        return saved;
      }
    }
  }
  const GenerateStats stats = generation_->stats();
  const Status status = generation_->status();
  generation_.reset();
  if (!status.ok()) return status;
  return stats;
}

uint64_t Engine::model_id() {
  if (!model_id_) model_id_ = file_checksum(*file_, config_, weights_.get(), arena_.get());
  return *model_id_;
}

Result<StateWriter> Engine::save_state() {
  if (!model_) return Status::error(ErrorCode::kInvalidArgument, "no model is loaded");
  return StateWriter(*model_, model_id());
}

Result<StateReader> Engine::load_state(uint64_t size) {
  if (!model_) return Status::error(ErrorCode::kInvalidArgument, "no model is loaded");
  generation_.reset();
  return StateReader(*model_, model_id(), config_.n_vocab, size);
}

}  // namespace wllm

namespace wllm {

Pooling Engine::embedding_pooling(std::optional<Pooling> requested) const {
  if (requested) return *requested;
  if (config_.pooling != Pooling::kNone) return config_.pooling;
  return config_.causal ? Pooling::kLast : Pooling::kMean;
}

Status Engine::start_job(std::vector<std::vector<int32_t>> inputs, Pooling pooling, EmbeddingJob::Output output) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].empty()) return Status::error(ErrorCode::kInvalidArgument, "text %zu has no tokens", i);
    if (inputs[i].size() > static_cast<size_t>(n_ctx_)) {
      return Status::error(ErrorCode::kContextFull, "text %zu has %zu tokens but the context holds %d", i,
                           inputs[i].size(), n_ctx_);
    }
  }
  generation_.reset();  // the job may use the KV cache
  embedding_ = std::make_unique<EmbeddingJob>(*model_, *weights_, *pool_, std::move(inputs), pooling, output);
  return {};
}

Status Engine::start_embedding(const std::vector<std::string>& texts, const EmbedOptions& options) {
  embedding_.reset();
  if (!model_) return Status::error(ErrorCode::kInvalidArgument, "no model is loaded");
  if (has_conv_layers()) {
    return Status::error(ErrorCode::kUnsupported, "%s embeddings are not supported", config_.arch_name.c_str());
  }
  const Pooling pooling = embedding_pooling(options.pooling);
  if (pooling == Pooling::kNone) {
    return Status::error(ErrorCode::kInvalidArgument, "pooling 'none' gives no embedding per text");
  }
  if (pooling == Pooling::kRank && !options.pooling) {
    return Status::error(ErrorCode::kInvalidArgument, "this model is a reranker: score documents with rank(), or "
                         "choose a pooling to embed with");
  }
  if (pooling == Pooling::kRank && !is_reranker()) {
    return Status::error(ErrorCode::kUnsupported, "rank pooling needs a classification head, which this model lacks");
  }
  std::vector<std::vector<int32_t>> inputs;
  inputs.reserve(texts.size());
  for (const std::string& text : texts) inputs.push_back(tokenizer_->encode(text, true, true));
  const auto output = pooling == Pooling::kRank  ? EmbeddingJob::Output::kRawEmbedding
                      : options.normalize        ? EmbeddingJob::Output::kEmbedding
                                                 : EmbeddingJob::Output::kRawEmbedding;
  return start_job(std::move(inputs), pooling, output);
}

Status Engine::start_ranking(std::string_view query, const std::vector<std::string>& documents) {
  embedding_.reset();
  if (!model_) return Status::error(ErrorCode::kInvalidArgument, "no model is loaded");
  if (!is_reranker()) {
    return Status::error(ErrorCode::kUnsupported, "this model has no classification head: it is not a reranker "
                         "(embed the query and the documents and compare them instead)");
  }
  const Tokenizer& tok = *tokenizer_;
  WLLM_ASSIGN_OR_RETURN(const std::string_view rerank_template,
                        file_->get_string_or("tokenizer.chat_template.rerank", ""));
  const std::vector<int32_t> query_ids = tok.encode(query, false, false);
  std::vector<std::vector<int32_t>> inputs;
  for (const std::string& document : documents) {
    std::vector<int32_t> ids;
    if (!rerank_template.empty()) {
      // The model's own format: {query} and {document} replaced, the text
      // tokenized with its special tokens' text parsed.
      std::string text(rerank_template);
      for (const auto& [name, value] : {std::pair<std::string_view, std::string_view>{"{query}", query},
                                        std::pair<std::string_view, std::string_view>{"{document}", document}}) {
        for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + value.size())) {
          text.replace(at, name.size(), value);
        }
      }
      ids = tok.encode(text, false, true);
    } else {
      // BOS query EOS SEP document EOS, as the vocabulary adds them (EOS
      // falls back to SEP).
      const int32_t eos = tok.eos() >= 0 ? tok.eos() : tok.sep();
      const std::vector<int32_t> doc_ids = tok.encode(document, false, false);
      if (tok.add_bos() && tok.bos() >= 0) ids.push_back(tok.bos());
      ids.insert(ids.end(), query_ids.begin(), query_ids.end());
      if (tok.add_eos() && eos >= 0) ids.push_back(eos);
      if (tok.add_sep() && tok.sep() >= 0) ids.push_back(tok.sep());
      ids.insert(ids.end(), doc_ids.begin(), doc_ids.end());
      if (tok.add_eos() && eos >= 0) ids.push_back(eos);
    }
    inputs.push_back(std::move(ids));
  }
  return start_job(std::move(inputs), Pooling::kRank, EmbeddingJob::Output::kRelevance);
}

Result<std::vector<std::vector<float>>> Engine::embed(const std::vector<std::string>& texts,
                                                      const EmbedOptions& options) {
  WLLM_RETURN_IF_ERROR(start_embedding(texts, options));
  while (embedding_->step()) {
  }
  std::vector<std::vector<float>> out = embedding_->results();
  embedding_.reset();
  return out;
}

Result<std::vector<float>> Engine::rank(std::string_view query, const std::vector<std::string>& documents) {
  WLLM_RETURN_IF_ERROR(start_ranking(query, documents));
  while (embedding_->step()) {
  }
  std::vector<float> scores;
  for (const std::vector<float>& r : embedding_->results()) scores.push_back(r[0]);
  embedding_.reset();
  return scores;
}

bool Engine::is_reranker() const { return weights_ && (weights_->cls.present() || weights_->cls_out.present()); }

bool Engine::has_conv_layers() const {
  return std::any_of(config_.layers.begin(), config_.layers.end(), [](const LayerConfig& l) { return !l.attention; });
}

}  // namespace wllm
