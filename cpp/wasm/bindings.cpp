// Embind bindings: the Engine as JS sees it from inside the worker.
//
// Nothing here throws into JS (design-notes §4): every call that can fail
// returns a plain object {code, message, ...} whose code is the ErrorCode's
// name ("ok", "bad_file", ...: core/error_codes.def); js/errors.js turns it
// into a typed error.
// Sizes and offsets cross as doubles (exact up to 2^53) and pointers as
// unsigned numbers, so a 4 GB heap never shows up as negative addresses.
#include <emscripten/bind.h>
#include <emscripten/heap.h>
#include <emscripten/val.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/checksum.h"
#include "core/sha256.h"
#include "engine/bench.h"
#include "engine/engine.h"
#include "gguf/gguf_split.h"
#include "quant/kernels.h"

namespace wllm::wasm {
namespace {

using emscripten::val;

// {code, message} of a Status; callers add their own fields.
val status_object(const Status& s) {
  val out = val::object();
  out.set("code", std::string(error_code_name(s.code())));
  out.set("message", s.message());
  return out;
}

val ok_object() { return status_object(Status()); }

// Reads a number property of a JS options object, or `fallback` when absent.
double number_or(const val& obj, const char* key, double fallback) {
  if (obj.isUndefined() || obj.isNull()) return fallback;
  const val v = obj[key];
  return v.isNumber() ? v.as<double>() : fallback;
}

// A JS number as an integer in [lo, hi], checked before any cast: casting a
// double outside an integer type's range is undefined behaviour (natively;
// in wasm it gives INT_MIN). The JS side checks first (js/options.js); this
// keeps the engine safe from any other caller.
Result<int64_t> integer_in(double v, int64_t lo, int64_t hi, const char* name) {
  if (!(v >= static_cast<double>(lo) && v <= static_cast<double>(hi)) || v != std::trunc(v)) {
    return Status::error(ErrorCode::kInvalidArgument, "%s must be an integer from %lld to %lld, got %.17g", name,
                         static_cast<long long>(lo), static_cast<long long>(hi), v);
  }
  return static_cast<int64_t>(v);
}

// An integer option of a JS options object in [lo, hi], or `fallback` when absent.
Result<int64_t> integer_or(const val& obj, const char* key, int64_t fallback, int64_t lo, int64_t hi) {
  return integer_in(number_or(obj, key, static_cast<double>(fallback)), lo, hi, key);
}

constexpr int64_t kIntMax = INT32_MAX;
constexpr int64_t kIntMin = INT32_MIN;
constexpr int64_t kMaxSafeInteger = (int64_t{1} << 53) - 1;  // JS numbers are exact integers up to here

bool bool_or(const val& obj, const char* key, bool fallback) {
  if (obj.isUndefined() || obj.isNull()) return fallback;
  const val v = obj[key];
  return v.isTrue() ? true : v.isFalse() ? false : fallback;
}

val stats_object(const GenerateStats& st) {
  val out = val::object();
  out.set("promptTokens", st.prompt_tokens);
  out.set("cachedTokens", st.cached_tokens);
  out.set("generatedTokens", st.generated_tokens);
  out.set("prefillSeconds", st.prefill_seconds);
  out.set("decodeSeconds", st.decode_seconds);
  out.set("grammarSeconds", st.grammar_seconds);
  out.set("stopReason", std::string(stop_reason_name(st.stop_reason)));
  return out;
}

// The strings of the array obj[key] (none if it is absent); other items are skipped.
std::vector<std::string> strings_of(const val& obj, const char* key) {
  std::vector<std::string> out;
  const val list = obj[key];
  if (!list.isArray()) return out;
  const int n = list["length"].as<int>();
  for (int i = 0; i < n; ++i) {
    if (list[i].isString()) out.push_back(list[i].as<std::string>());
  }
  return out;
}

// options.constraint: {kind: 'grammar' | 'json' | 'json_object' | 'json_schema', text}
// (js/options.js checks and builds it); a grammar may add {schemas: [{name, schema}],
// preservedTokens, triggers, startTriggers} (js/tool-calls.js); absent: no constraint.
Result<OutputConstraint> constraint_from(const val& options) {
  OutputConstraint c;
  if (options.isUndefined() || options.isNull()) return c;
  const val spec = options["constraint"];
  if (spec.isUndefined() || spec.isNull()) return c;
  const std::string kind = spec["kind"].isString() ? spec["kind"].as<std::string>() : "";
  if (kind == "grammar") {
    c.kind = OutputConstraint::Kind::kGrammar;
  } else if (kind == "json") {
    c.kind = OutputConstraint::Kind::kJson;
  } else if (kind == "json_object") {
    c.kind = OutputConstraint::Kind::kJsonObject;
  } else if (kind == "json_schema") {
    c.kind = OutputConstraint::Kind::kJsonSchema;
  } else {
    return Status::error(ErrorCode::kInvalidArgument, "unknown output constraint '%s'", kind.c_str());
  }
  if (spec["text"].isString()) c.text = spec["text"].as<std::string>();
  const val schemas = spec["schemas"];
  if (schemas.isArray()) {
    const int n = schemas["length"].as<int>();
    for (int i = 0; i < n; ++i) {
      const val s = schemas[i];
      if (!s["name"].isString() || !s["schema"].isString()) {
        return Status::error(ErrorCode::kInvalidArgument, "constraint schema %d must be {name, schema} strings", i);
      }
      c.schemas.push_back({s["name"].as<std::string>(), s["schema"].as<std::string>()});
    }
  }
  c.preserved_tokens = strings_of(spec, "preservedTokens");
  c.triggers = strings_of(spec, "triggers");
  c.start_triggers = strings_of(spec, "startTriggers");
  return c;
}

}  // namespace

class WasmEngine {
 public:
  // The single-threaded build has no pthreads: it always runs one thread.
  static bool threaded() {
#ifdef __EMSCRIPTEN_PTHREADS__
    return true;
#else
    return false;
#endif
  }

  // Scratch memory in the wasm heap for bytes JS hands the engine; 0 when
  // the heap cannot hold them (worker/wasm-heap.js turns that into an error),
  // including sizes a wasm32 size_t cannot express, which a cast would wrap.
  static double alloc(double bytes) {
    if (!(bytes <= static_cast<double>(std::numeric_limits<size_t>::max()))) return 0;
    void* p = std::malloc(static_cast<size_t>(bytes > 0 ? bytes : 1));
    return static_cast<double>(reinterpret_cast<uintptr_t>(p));
  }
  static void free_(double ptr) { std::free(reinterpret_cast<void*>(static_cast<uintptr_t>(ptr))); }

  // A Uint8Array over [ptr, ptr+bytes) of the current heap buffer: always
  // fresh, so it is valid even right after the memory has grown.
  static val heap_view(double ptr, double bytes) {
    return val(emscripten::typed_memory_view(static_cast<size_t>(bytes),
                                             reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(ptr))));
  }

  // files: [{ptr, length, size}], the first bytes of each of the model's
  // files (in the heap) and the file's size; options: {contextSize, threads,
  // memoryLimit, tokenizerPtr, tokenizerLength}. The result says what else
  // the engine needs (engine/model_layout.h's LayoutNeeds): on
  // need_more_data, neededBytes of file neededFile, or all neededFiles files
  // of a split model; on a llama2.c checkpoint without its tokenizer,
  // tokenizerFiles (names to look for beside it); tokenizerRejected: the
  // error is about the tokenizer file given.
  val begin_load(const val& files, const val& options) {
    const Result<int64_t> n_ctx = integer_or(options, "contextSize", 0, 0, kIntMax);
    const Result<int64_t> n_threads = integer_or(options, "threads", 1, 1, 256);
    const Result<int64_t> memory_limit = integer_or(options, "memoryLimit", 0, 0, kMaxSafeInteger);
    const Result<int64_t> tokenizer_length = integer_or(options, "tokenizerLength", 0, 0, kMaxSafeInteger);
    for (const Status& s : {n_ctx.status(), n_threads.status(), memory_limit.status(), tokenizer_length.status()}) {
      if (!s.ok()) return status_object(s);
    }
    std::vector<FilePrefix> prefixes;
    const int n_files = files["length"].as<int>();
    for (int i = 0; i < n_files; ++i) {
      const val f = files[i];
      const Result<int64_t> length = integer_or(f, "length", 0, 0, kMaxSafeInteger);
      const Result<int64_t> size = integer_or(f, "size", 0, 0, kMaxSafeInteger);
      if (!length.ok()) return status_object(length.status());
      if (!size.ok()) return status_object(size.status());
      prefixes.push_back({{heap_pointer(f["ptr"]), static_cast<size_t>(*length)}, static_cast<uint64_t>(*size)});
    }
    LoadOptions o;
    o.n_ctx = static_cast<int>(*n_ctx);
    o.n_threads = threaded() ? static_cast<int>(*n_threads) : 1;
    o.memory_limit = static_cast<uint64_t>(*memory_limit);
    o.tokenizer = {heap_pointer(options["tokenizerPtr"]), static_cast<size_t>(*tokenizer_length)};
    // Without a limit of the caller's, the model must fit what the wasm
    // memory can still grow to (4 GB in all): refuse before allocating.
    const uint64_t heap_left = emscripten_get_heap_max() - reinterpret_cast<uintptr_t>(sbrk(0));
    if (o.memory_limit == 0 || o.memory_limit > heap_left) o.memory_limit = heap_left;
    LayoutNeeds needs;
    const Status s = engine_.begin_load(prefixes, o, &needs);
    val out = status_object(s);
    out.set("neededFile", needs.file);
    out.set("neededBytes", static_cast<double>(needs.bytes));
    out.set("neededFiles", needs.files);
    val names = val::array();
    for (const std::string& name : needs.tokenizer_files) names.call<void>("push", name);
    out.set("tokenizerFiles", names);
    out.set("tokenizerRejected", needs.tokenizer_rejected);
    return out;
  }

  // [{file, fileOffset, size, arenaOffset}]: the bytes of the model's files
  // to copy into the arena (dataDestination() + arenaOffset).
  val data_ranges() const {
    val out = val::array();
    for (const DataRange& r : engine_.data_ranges()) {
      val range = val::object();
      range.set("file", r.file);
      range.set("fileOffset", static_cast<double>(r.file_offset));
      range.set("size", static_cast<double>(r.size));
      range.set("arenaOffset", static_cast<double>(r.arena_offset));
      out.call<void>("push", range);
    }
    return out;
  }

  double data_destination() { return static_cast<double>(reinterpret_cast<uintptr_t>(engine_.data_destination())); }

  // The name of file `index` of the `count` of a split model whose first
  // file is named `first` (a URL's path or a file path); "" if `first` is not
  // named as the first of `count` (gguf/gguf_split.h).
  static std::string split_file_name(const std::string& first, int index, int count) {
    return split_sibling_name(first, index, count);
  }

  val finish_load() { return status_object(engine_.finish_load()); }

  val info() const {
    val out = val::object();
    if (!engine_.loaded()) return out;
    const ModelConfig& c = engine_.config();
    out.set("architecture", c.arch_name);
    out.set("name", c.name);
    out.set("vocabSize", c.n_vocab);
    out.set("embeddingSize", c.dim);
    out.set("layers", c.n_layers);
    out.set("heads", c.n_heads);
    out.set("kvHeads", c.n_kv_heads);
    out.set("headSize", c.head_dim);
    out.set("feedForwardSize", c.ffn_dim);
    out.set("trainingContext", c.n_ctx_train);
    out.set("slidingWindow", c.local_layers() > 0 ? c.sliding_window : 0);
    // Embeddings: an encoder gives nothing else; how embed() pools by
    // default; whether rank() can score (a classification head).
    out.set("encoder", c.encoder);
    out.set("pooling", std::string(pooling_name(engine_.embedding_pooling(std::nullopt))));
    out.set("reranker", engine_.is_reranker());
    out.set("contextSize", engine_.n_ctx());
    out.set("threads", engine_.n_threads());
    // The kernels' ISA: "relaxed" in the relaxed-SIMD build, else "simd128".
    out.set("kernels", std::string(active_kernel_isa()));
    // Tensor count per type name, e.g. {f32: 9, q8_0: 48}.
    val types = val::object();
    for (const GgufTensorInfo& t : engine_.file().tensors()) {
      const std::string name = type_traits(t.type).name;
      types.set(name, number_or(types, name.c_str(), 0) + 1);
    }
    out.set("tensorTypes", types);
    // What chat templates need: the template (null if the model has none)
    // and the text of its BOS and EOS tokens.
    const Result<std::string_view> chat_template = engine_.file().get_string_or("tokenizer.chat_template", "");
    out.set("chatTemplate", chat_template.ok() && !chat_template.value().empty() ? val(std::string(chat_template.value()))
                                                                                 : val::null());
    const Tokenizer& tok = engine_.tokenizer();
    out.set("bosToken", tok.bos() >= 0 ? std::string(tok.token_text(tok.bos())) : std::string());
    out.set("eosToken", tok.eos() >= 0 ? std::string(tok.token_text(tok.eos())) : std::string());
    const MemoryReport m = engine_.memory();
    val memory = val::object();
    memory.set("weights", static_cast<double>(m.weights));
    memory.set("kvCache", static_cast<double>(m.kv_cache));
    memory.set("buffers", static_cast<double>(m.buffers));
    memory.set("total", static_cast<double>(m.total()));
    out.set("memory", memory);
    return out;
  }

  // Tasks each engine thread has run so far: [caller's thread, pool thread 1, ...].
  val thread_tasks_run() const {
    val out = val::array();
    for (int i = 0; i < engine_.n_threads(); ++i) {
      out.call<void>("push", static_cast<double>(engine_.thread_tasks_run(i)));
    }
    return out;
  }

  // {code, message, tokens: number[]}
  val tokenize(const std::string& text, bool add_special, bool parse_special) const {
    if (!engine_.loaded()) return status_object(not_loaded());
    val out = ok_object();
    val tokens = val::array();
    for (const int32_t id : engine_.tokenizer().encode(text, add_special, parse_special)) tokens.call<void>("push", id);
    out.set("tokens", tokens);
    return out;
  }

  // {code, message, text}; ids outside the vocabulary are an error.
  val detokenize(const val& ids) const {
    if (!engine_.loaded()) return status_object(not_loaded());
    const int n_vocab = engine_.config().n_vocab;
    std::vector<int32_t> tokens;
    const int n = ids["length"].as<int>();
    tokens.reserve(n);
    for (int i = 0; i < n; ++i) {
      const double id = ids[i].as<double>();
      if (!(id >= 0 && id < n_vocab) || id != static_cast<int32_t>(id)) {
        return status_object(Status::error(ErrorCode::kInvalidArgument, "token id %g is outside the vocabulary (0..%d)",
                                           id, n_vocab - 1));
      }
      tokens.push_back(static_cast<int32_t>(id));
    }
    val out = ok_object();
    out.set("text", engine_.tokenizer().decode(tokens));
    return out;
  }

  // options: {maxTokens, temperature, topK, topP, minP, repeatPenalty,
  // repeatLastN, frequencyPenalty, presencePenalty, seed, stop: string[],
  // addSpecial, parseSpecial, cachePrompt, constraint}; absent fields keep the
  // engine defaults.
  val start_generation(const std::string& prompt, const val& options) {
    if (!engine_.loaded()) return status_object(not_loaded());
    GenerateOptions g;
    SamplerParams& s = g.sampling;
    const Result<int64_t> max_tokens = integer_or(options, "maxTokens", g.max_tokens, 0, kIntMax);
    const Result<int64_t> top_k = integer_or(options, "topK", s.top_k, kIntMin, kIntMax);
    const Result<int64_t> last_n = integer_or(options, "repeatLastN", s.penalty_last_n, 0, Sampler::kMaxPenaltyLastN);
    const Result<int64_t> seed = integer_or(options, "seed", 0, 0, kMaxSafeInteger);
    for (const Status& st : {max_tokens.status(), top_k.status(), last_n.status(), seed.status()}) {
      if (!st.ok()) return status_object(st);
    }
    g.max_tokens = static_cast<int>(*max_tokens);
    s.top_k = static_cast<int>(*top_k);
    s.penalty_last_n = static_cast<int>(*last_n);
    s.seed = static_cast<uint64_t>(*seed);
    // Doubles beyond float's range become ±inf (defined for IEEE floats); the sampler refuses those.
    s.temperature = static_cast<float>(number_or(options, "temperature", s.temperature));
    s.top_p = static_cast<float>(number_or(options, "topP", s.top_p));
    s.min_p = static_cast<float>(number_or(options, "minP", s.min_p));
    s.repeat_penalty = static_cast<float>(number_or(options, "repeatPenalty", s.repeat_penalty));
    s.frequency_penalty = static_cast<float>(number_or(options, "frequencyPenalty", s.frequency_penalty));
    s.presence_penalty = static_cast<float>(number_or(options, "presencePenalty", s.presence_penalty));
    g.add_special = bool_or(options, "addSpecial", g.add_special);
    g.parse_special = bool_or(options, "parseSpecial", g.parse_special);
    g.reuse_cache = bool_or(options, "cachePrompt", g.reuse_cache);
    if (!options.isUndefined() && !options.isNull() && options["stop"].isArray()) {
      const val stop = options["stop"];
      const int n = stop["length"].as<int>();
      for (int i = 0; i < n; ++i) {
        std::string one = stop[i].as<std::string>();
        if (!one.empty()) g.stop.push_back(std::move(one));
      }
    }
    Result<OutputConstraint> constraint = constraint_from(options);
    if (!constraint.ok()) return status_object(constraint.status());
    g.constraint = std::move(*constraint);
    state_reader_.reset();  // a restore left unfinished stays so: the cache holds nothing
    return status_object(engine_.start_generation(prompt, g));
  }

  // One bounded step: {code, message, more, text, stats}. `more` false:
  // finished (code not OK: failed, e.g. no token could continue the grammar).
  val step() {
    Generation* gen = engine_.generation();
    std::string text;
    const bool more = gen && gen->step(&text);
    val out = status_object(gen ? gen->status() : Status());  // after the step, which may have failed
    out.set("more", more);
    out.set("text", text);
    out.set("stats", gen ? stats_object(gen->stats()) : val::null());
    return out;
  }

  // The speed benchmark (engine/bench.h, as `wasm-llm bench` runs it):
  // {code, message, promptTokens, generatedTokens, prefillSeconds, decodeSeconds, runs}
  // (the median of `runs` measured runs, BenchRuns' defaults).
  val bench(double n_prompt, double n_gen) {
    const Result<int64_t> prompt_tokens = integer_in(n_prompt, 1, kIntMax, "promptTokens");
    const Result<int64_t> generate_tokens = integer_in(n_gen, 1, kIntMax, "generateTokens");
    if (!prompt_tokens.ok()) return status_object(prompt_tokens.status());
    if (!generate_tokens.ok()) return status_object(generate_tokens.status());
    const Result<BenchTimes> times = run_bench(engine_, *prompt_tokens, *generate_tokens);
    if (!times.ok()) return status_object(times.status());
    val out = ok_object();
    out.set("promptTokens", static_cast<double>(times->prompt_tokens));
    out.set("generatedTokens", static_cast<double>(times->generated_tokens));
    out.set("prefillSeconds", times->prefill_seconds);
    out.set("decodeSeconds", times->decode_seconds);
    out.set("runs", times->runs);
    return out;
  }

  // Starts embedding `texts` (strings); options: {pooling: 'mean' | 'cls' |
  // 'last' | 'rank', normalize}. Then embeddingStep() until `more` is false.
  val start_embedding(const val& texts, const val& options) {
    if (!engine_.loaded()) return status_object(not_loaded());
    EmbedOptions o;
    o.normalize = bool_or(options, "normalize", o.normalize);
    if (!options.isUndefined() && !options.isNull() && options["pooling"].isString()) {
      const std::string name = options["pooling"].as<std::string>();
      Pooling pooling;
      if (!parse_pooling(name, &pooling) || pooling == Pooling::kNone) {
        return status_object(Status::error(ErrorCode::kInvalidArgument, "pooling '%s' is not one of mean, cls, last, "
                                           "rank", name.c_str()));
      }
      o.pooling = pooling;
    }
    return status_object(engine_.start_embedding(strings_of(texts), o));
  }

  // Starts scoring each of `documents` (strings) against `query` (a reranker).
  val start_ranking(const std::string& query, const val& documents) {
    if (!engine_.loaded()) return status_object(not_loaded());
    return status_object(engine_.start_ranking(query, strings_of(documents)));
  }

  // One forward pass of the embedding or ranking job: {code, message, more, tokens}.
  val embedding_step() {
    EmbeddingJob* job = engine_.embedding();
    val out = ok_object();
    out.set("more", job != nullptr && job->step());
    out.set("tokens", job ? job->tokens_done() : 0);
    return out;
  }

  // The finished job's results: an array of Float32Array (copies, outside the heap).
  val embedding_results() {
    val out = val::array();
    EmbeddingJob* job = engine_.embedding();
    if (!job) return out;
    const val float32_array = val::global("Float32Array");
    for (const std::vector<float>& r : job->results()) {
      const val view(emscripten::typed_memory_view(r.size(), r.data()));
      out.call<void>("push", float32_array.new_(view));
    }
    return out;
  }

  // The state of the tokens the cache holds (engine/state_file.h):
  // {code, message, size, pieces}, pieces a Float64Array of (address, bytes)
  // pairs in the heap, to copy out in order before the engine next runs.
  val save_state() {
    if (!engine_.loaded()) return status_object(not_loaded());
    Result<StateWriter> state = engine_.save_state();
    if (!state.ok()) return status_object(state.status());
    saving_.emplace(std::move(*state));  // its header and checksum pieces live in it
    pieces_.clear();
    for (const std::span<const uint8_t> piece : saving_->pieces()) {
      pieces_.push_back(static_cast<double>(reinterpret_cast<uintptr_t>(piece.data())));
      pieces_.push_back(static_cast<double>(piece.size()));
    }
    val out = ok_object();
    out.set("size", static_cast<double>(saving_->size()));
    out.set("pieces", val(emscripten::typed_memory_view(pieces_.size(), pieces_.data())));
    return out;
  }

  // Restoring a saved state of `size` bytes: begin, then its bytes in order
  // (each piece at [ptr, ptr + bytes) in the heap), then finish; each returns
  // {code, message}. A failure leaves the cache empty.
  val begin_load_state(double size) {
    if (!engine_.loaded()) return status_object(not_loaded());
    const Result<int64_t> bytes = integer_in(size, 0, kMaxSafeInteger, "the state's size");
    if (!bytes.ok()) return status_object(bytes.status());
    Result<StateReader> reader = engine_.load_state(static_cast<uint64_t>(*bytes));
    if (!reader.ok()) return status_object(reader.status());
    state_reader_.emplace(std::move(*reader));
    return ok_object();
  }
  val load_state_piece(double ptr, double bytes) {
    if (!state_reader_) return status_object(no_state_load());
    const auto* data = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(ptr));
    return status_object(state_reader_->write(std::span<const uint8_t>(data, static_cast<size_t>(bytes))));
  }
  val finish_load_state() {
    if (!state_reader_) return status_object(no_state_load());
    const Status s = state_reader_->finish();
    state_reader_.reset();
    return status_object(s);
  }

  // Abort: {text (what was held back), stats}.
  val cancel() {
    Generation* gen = engine_.generation();
    val out = val::object();
    std::string text;
    if (gen) gen->cancel(&text);
    out.set("text", text);
    out.set("stats", gen ? stats_object(gen->stats()) : val::null());
    return out;
  }

 private:
  static Status not_loaded() { return Status::error(ErrorCode::kInvalidArgument, "no model is loaded"); }
  static const uint8_t* heap_pointer(const val& ptr) {
    return reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(ptr.isNumber() ? ptr.as<double>() : 0));
  }

  // A JS array of strings (js/embed.js has checked it).
  static std::vector<std::string> strings_of(const val& array) {
    std::vector<std::string> out;
    const int n = array["length"].as<int>();
    out.reserve(n);
    for (int i = 0; i < n; ++i) out.push_back(array[i].as<std::string>());
    return out;
  }

  static Status no_state_load() {
    return Status::error(ErrorCode::kInvalidArgument, "no state is being restored (beginLoadState first)");
  }

  Engine engine_;
  std::optional<StateWriter> saving_;        // the last saveState()'s state
  std::vector<double> pieces_;               // and its pieces' (address, bytes) pairs
  std::optional<StateReader> state_reader_;  // the state being restored
};

// A hash (Sha256, Checksum64) over bytes already in the wasm heap: the loader
// hashes each chunk where it lands, so checking a download costs no extra copy.
template <class Hash>
class HeapHash {
 public:
  void update(double ptr, double bytes) {
    hash_.update(reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(ptr)), static_cast<size_t>(bytes));
  }
  std::string hex_digest() { return hash_.hex_digest(); }

 private:
  Hash hash_;
};

}  // namespace wllm::wasm

EMSCRIPTEN_BINDINGS(wasm_llm) {
  using wllm::wasm::WasmEngine;
  emscripten::class_<WasmEngine>("WasmEngine")
      .constructor<>()
      .class_function("threaded", &WasmEngine::threaded)
      .class_function("alloc", &WasmEngine::alloc)
      .class_function("free", &WasmEngine::free_)
      .class_function("heapView", &WasmEngine::heap_view)
      .class_function("splitFileName", &WasmEngine::split_file_name)
      .function("beginLoad", &WasmEngine::begin_load)
      .function("dataRanges", &WasmEngine::data_ranges)
      .function("dataDestination", &WasmEngine::data_destination)
      .function("finishLoad", &WasmEngine::finish_load)
      .function("info", &WasmEngine::info)
      .function("threadTasksRun", &WasmEngine::thread_tasks_run)
      .function("tokenize", &WasmEngine::tokenize)
      .function("detokenize", &WasmEngine::detokenize)
      .function("startGeneration", &WasmEngine::start_generation)
      .function("step", &WasmEngine::step)
      .function("cancel", &WasmEngine::cancel)
      .function("startEmbedding", &WasmEngine::start_embedding)
      .function("startRanking", &WasmEngine::start_ranking)
      .function("embeddingStep", &WasmEngine::embedding_step)
      .function("embeddingResults", &WasmEngine::embedding_results)
      .function("saveState", &WasmEngine::save_state)
      .function("beginLoadState", &WasmEngine::begin_load_state)
      .function("loadStatePiece", &WasmEngine::load_state_piece)
      .function("finishLoadState", &WasmEngine::finish_load_state)
      .function("bench", &WasmEngine::bench);
  using Sha256 = wllm::wasm::HeapHash<wllm::Sha256>;
  emscripten::class_<Sha256>("Sha256")
      .constructor<>()
      .function("update", &Sha256::update)
      .function("hexDigest", &Sha256::hex_digest);
  using Checksum64 = wllm::wasm::HeapHash<wllm::Checksum64>;
  emscripten::class_<Checksum64>("Checksum64")
      .constructor<>()
      .function("update", &Checksum64::update)
      .function("hexDigest", &Checksum64::hex_digest);
}
