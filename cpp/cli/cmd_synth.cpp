// wasm-llm synth: writes a random-weight model of a real shape with a real
// tokenizer, for tests and benchmarks of shapes we have no weights for.
//
// Weights are a pure function of (--seed, tensor name, row, column), so the
// file is identical for any thread count. Values are N(0, 1/fan_in)-like
// (sum of four uniforms; sd 0.022 at TinyLlama's width), which keeps
// activations O(1) in every layer; norms are 1 ± 5% (but see tied output_norm
// in SynthTensors). Each 2-D weight is then converted to --type with the same
// rules and fallbacks as `quantize` (quant_plan.h).
//
// Tests compare next-token distributions between engines, so the model must
// be peaked like a real one: with i.i.d. random logits over 32000 tokens the
// top two are nearly tied at many positions, and the tiny rounding
// differences any two engines have (llama.cpp's own attention paths disagree
// in the 4th digit) flip the winner. So an untied output matrix is random
// (logit sd kLogitStd) plus a bigram: output row j also holds the embedding of
// token step·j+1 (mod vocab), so the current token, which the residual stream
// carries to the last layer, lifts one successor's logit well above the rest.
// At 256x4 that gives a top-1 probability around 0.9 (10% of the mass stays
// spread over the vocabulary, so KL still measures every logit) and a top-2
// gap above one logit at 99% of positions (measured against llama.cpp with
// tests/reference/logits.test.mjs).
#include <chrono>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/help.h"
#include "cli/model_file.h"
#include "cli/quant_plan.h"
#include "gguf/gguf_writer.h"
#include "model/architecture.h"
#include "model/config.h"
#include "model/weights.h"

namespace wllm::cli {
namespace {

// Untied output: sd of the random part of the logits, and the bigram bonus a
// hidden state equal to the current token's embedding would give its
// successor (the real bonus scales with their cosine, ~0.45 at 256x4).
constexpr float kLogitStd = 1.5f;
constexpr float kBigramLogit = 26.0f;
// Tied output (token_embd is the output matrix, so no bigram is possible):
// the peak comes from the current token itself. Its embedding, large beside
// what the blocks add, stays in the residual stream, and its own logit
// stands out (top-1 probability around 0.9 as with the bigram, so the model
// repeats tokens). kTiedLogitStd: the logit sd, set by output_norm;
// kTiedEmbedStd: the embedding's norm (elements of this / sqrt(dim)); the
// log-normal row scales make the top of the logits heavier-tailed than
// Gaussian, so near-ties are rarer.
constexpr float kTiedLogitStd = 5.0f;
constexpr float kTiedEmbedStd = 16.0f;
constexpr float kRowScaleSpread = 0.5f;

// The shape of a model: the architecture and its sizes. The rest of the
// config comes from the architecture's own defaults (its synth_defaults).
struct Shape {
  std::string name;
  const char* arch = "llama";
  int dim = 0, n_layers = 0, n_heads = 0, n_kv_heads = 0, ffn = 0, ctx = 2048;
  float rope_base = 10000.0f;
  bool tied = false;  // no output.weight: token_embd doubles as the output
  int head_dim = 0;   // 0: dim / n_heads
  int rope_dims = 0;  // dims of each head that rotate; 0: the architecture's default
};

// Real models' shapes, for benchmarks (one row per model).
const Shape kNamedShapes[] = {
    {"stories15M", "llama", 288, 6, 6, 6, 768, 256, 10000.0f, false},
    {"smollm2-135m", "llama", 576, 30, 9, 3, 1536, 8192, 100000.0f, true},
    {"tinyllama-1.1b", "llama", 2048, 22, 32, 4, 5632, 2048, 10000.0f, false},
    {"qwen3-0.6b", "qwen3", 1024, 28, 16, 8, 3072, 40960, 1000000.0f, true, 128},
    {"smollm3-3b", "smollm3", 2048, 36, 16, 4, 11008, 65536, 5000000.0f, true},
    {"gemma3-270m", "gemma3", 640, 18, 4, 1, 2048, 32768, 1000000.0f, true, 256},
    {"gemma3-1b", "gemma3", 1152, 26, 4, 1, 6912, 32768, 1000000.0f, true, 256},
    {"gemma2-2b", "gemma2", 2304, 26, 8, 4, 9216, 8192, 10000.0f, true, 256},
    {"gpt2-124m", "gpt2", 768, 12, 12, 12, 3072, 1024, 10000.0f, true},
    {"lfm2-350m", "lfm2", 1024, 16, 16, 8, 4608, 128000, 1000000.0f, true},
    {"lfm2-1.2b", "lfm2", 2048, 16, 32, 8, 8192, 128000, 1000000.0f, true},
    {"phi3.5-mini", "phi3", 3072, 32, 32, 32, 8192, 131072, 10000.0f, false, 96, 96},
    {"phi4-mini", "phi3", 3072, 32, 24, 8, 8192, 131072, 10000.0f, true, 128},
    {"granite-3.3-2b", "granite", 2048, 40, 32, 8, 8192, 131072, 10000000.0f, true},
    {"granite-4.0-micro", "granite", 2560, 40, 40, 8, 8192, 131072, 10000000.0f, true},
    // Embedding models (encoders have no output layer; `tied` is moot).
    {"all-minilm-l6", "bert", 384, 6, 12, 12, 1536, 512, 10000.0f, true},
    {"bge-small", "bert", 384, 12, 12, 12, 1536, 512, 10000.0f, true},
    {"bge-base", "bert", 768, 12, 12, 12, 3072, 512, 10000.0f, true},
    {"nomic-embed-v1.5", "nomic-bert", 768, 12, 12, 12, 3072, 2048, 1000.0f, true},
    {"jina-v2-small", "jina-bert-v2", 512, 4, 8, 8, 2048, 8192, 10000.0f, true},
    {"jina-v2-base", "jina-bert-v2", 768, 12, 12, 12, 3072, 8192, 10000.0f, true},
    {"qwen3-embedding-0.6b", "qwen3", 1024, 28, 16, 8, 3072, 32768, 1000000.0f, true, 128},
};

bool iequals(const std::string& a, const char* b) {
  if (a.size() != std::strlen(b)) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

std::string shape_names() {
  std::string names;
  for (const Shape& s : kNamedShapes) names += (names.empty() ? "" : ", ") + s.name;
  return names;
}

// Reads a positive decimal at *p and advances past it.
bool read_positive(const char** p, int* out) {
  if (**p < '0' || **p > '9') return false;
  long long v = 0;
  while (**p >= '0' && **p <= '9') {
    v = v * 10 + (**p - '0');
    if (v > (1 << 24)) return false;
    ++*p;
  }
  if (v == 0) return false;
  *out = static_cast<int>(v);
  return true;
}

Result<Shape> parse_shape(const std::string& spec) {
  for (const Shape& named : kNamedShapes) {
    if (iequals(spec, named.name.c_str())) return named;
  }
  Shape s;
  const Status bad = Status::error(ErrorCode::kInvalidArgument,
                                   "--shape '%s' is neither a known name (%s) nor DIMxLAYERS[:HEADS/KVHEADS[:FFN]]",
                                   spec.c_str(), shape_names().c_str());
  const char* p = spec.c_str();
  if (!read_positive(&p, &s.dim) || *p++ != 'x' || !read_positive(&p, &s.n_layers)) return bad;
  // Defaults: 64-wide heads, no grouping, a SwiGLU width of about 8/3·dim
  // rounded up to 256 so K-quants need no fallback.
  s.n_heads = s.dim % 64 == 0 ? s.dim / 64 : 1;
  s.n_kv_heads = s.n_heads;
  s.ffn = (s.dim * 8 / 3 + 255) / 256 * 256;
  if (*p == ':') {
    ++p;
    if (!read_positive(&p, &s.n_heads) || *p++ != '/' || !read_positive(&p, &s.n_kv_heads)) return bad;
    if (*p == ':') {
      ++p;
      if (!read_positive(&p, &s.ffn)) return bad;
    }
  }
  if (*p != '\0') return bad;
  s.name = spec;
  return s;
}

Status check_shape(const Shape& s) {
  if (s.dim > 65536 || s.n_layers > 1024 || s.ffn > (1 << 20)) {
    return Status::error(ErrorCode::kInvalidArgument, "--shape '%s' is too large", s.name.c_str());
  }
  const int head_dim = s.head_dim > 0 ? s.head_dim : s.dim / s.n_heads;
  if ((s.head_dim == 0 && s.dim % s.n_heads != 0) || head_dim % 2 != 0) {
    return Status::error(ErrorCode::kInvalidArgument, "--shape '%s': %d heads must divide dim %d into even widths",
                         s.name.c_str(), s.n_heads, s.dim);
  }
  if (s.n_heads % s.n_kv_heads != 0) {
    return Status::error(ErrorCode::kInvalidArgument, "--shape '%s': %d heads is not a multiple of %d kv heads",
                         s.name.c_str(), s.n_heads, s.n_kv_heads);
  }
  return {};
}

// splitmix64's finalizer: a cheap, well-mixed 64-bit hash.
uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t hash_name(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// exp(x) for |x| <= 4 by its Taylor series: plain IEEE operations in a fixed
// order, so every libm and platform gives the same weights.
double det_exp(double x) {
  double term = 1.0, sum = 1.0;
  for (int k = 1; k < 40; ++k) {
    term = term * x / k;
    sum += term;
  }
  return sum;
}

// Near-Gaussian N(0, 1) from 64 random bits: the sum of four 16-bit uniforms
// (Irwin-Hall), centred and scaled by its sd, 65536·sqrt(4/12).
float gauss(uint64_t z) {
  const int32_t sum = static_cast<int32_t>(z & 0xffff) + static_cast<int32_t>((z >> 16) & 0xffff) +
                      static_cast<int32_t>((z >> 32) & 0xffff) + static_cast<int32_t>(z >> 48) - 131070;
  return static_cast<float>(sum) * (1.0f / 37837.23f);
}

// One tensor's values: kind, scale, and a seed derived from its name.
struct Init {
  enum Kind { kGauss, kNorm } kind;
  float scale;  // standard deviation (kGauss) or relative spread (kNorm)
  uint64_t seed;
  int64_t row_len;
  float row_spread = 0;  // > 0: rows scaled by exp(row_spread·N(0,1)), mean square kept
  float center = 1;      // kNorm: values are center·(1 ± scale)
  // != 0: row r also gets bigram_gain × row (r·bigram_step + 1) mod
  // bigram_rows of bigram_source (a bijection: bigram_step is coprime).
  float bigram_gain = 0;
  std::shared_ptr<const Init> bigram_source;
  int64_t bigram_rows = 1, bigram_step = 1;

  int64_t bigram_row(int64_t r) const {
    return static_cast<int64_t>((static_cast<uint64_t>(r) % bigram_rows * static_cast<uint64_t>(bigram_step) + 1) %
                                static_cast<uint64_t>(bigram_rows));
  }

  // Row r: a counter-based stream, so any row can be made by any thread.
  void row(int64_t r, float* dst) const {
    const uint64_t row_seed = mix64(seed ^ mix64(static_cast<uint64_t>(r) + 0x9e3779b97f4a7c15ull));
    float s = scale;
    if (row_spread > 0) {
      const double x = row_spread * gauss(mix64(row_seed ^ 0x5851f42d4c957f2dull));
      s = static_cast<float>(scale * det_exp(x) * det_exp(-double(row_spread) * row_spread));
    }
    for (int64_t i = 0; i < row_len; ++i) {
      const uint64_t z = mix64(row_seed + static_cast<uint64_t>(i) * 0x9e3779b97f4a7c15ull);
      if (kind == kNorm) {
        // 1 + scale·u with u uniform in [-1, 1).
        const float u = static_cast<float>(static_cast<int32_t>(z >> 32) >> 8) * (1.0f / 8388608.0f);
        dst[i] = center * (1.0f + s * u);
      } else {
        dst[i] = gauss(z) * s;
      }
    }
    if (bigram_gain != 0) {
      std::vector<float> src(static_cast<size_t>(row_len));
      bigram_source->row(bigram_row(r), src.data());
      for (int64_t i = 0; i < row_len; ++i) dst[i] += bigram_gain * src[i];
    }
  }
};

// Each tensor the architecture lists, with the values its role calls for.
class SynthTensors : public TensorList {
 public:
  SynthTensors(const ModelConfig& c, uint64_t seed) : c_(c), seed_(seed) {}

  void add(const std::string& name, std::initializer_list<int64_t> ne, TensorRole role, Tensor*) override {
    Init init{};
    init.seed = mix64(seed_ ^ hash_name(name));
    init.row_len = *ne.begin();
    init.kind = Init::kGauss;
    const auto fan_in = [](int64_t n) { return 1.0f / std::sqrt(static_cast<float>(n)); };
    switch (role) {
      case TensorRole::kEmbedding:
        if (name != "token_embd.weight") {
          init.scale = 0.1f;  // learned positions, token types: small beside the token's
        } else if (c_.tied_output) {
          // The embedding is also the output matrix (see kTiedEmbedStd);
          // output_norm sets the logit scale (logit sd = kTiedLogitStd).
          init.scale = kTiedEmbedStd * fan_in(c_.dim);
          init.row_spread = kRowScaleSpread;
        } else {
          // Unit-RMS input embeddings; with granite's scales, as large
          // beside what the blocks add as other architectures' are.
          init.scale = c_.residual_scale / c_.embed_scale;
        }
        break;
      case TensorRole::kMatrix:
      case TensorRole::kConv:
        init.scale = fan_in(init.row_len);
        break;
      case TensorRole::kOutput: {
        // Logits the model divides by logit_scale (granite) are made that
        // much larger, for the same distribution; the bigram's embedding
        // rows are residual_scale / embed_scale of the hidden state's.
        init.scale = kLogitStd * c_.logit_scale / std::sqrt(static_cast<float>(c_.dim));
        // Embedding and hidden state both have norm ~sqrt(dim).
        init.bigram_source = std::make_shared<Init>(token_embd_);
        init.bigram_rows = c_.n_vocab;
        init.bigram_step = 7919;
        while (std::gcd(init.bigram_step, static_cast<int64_t>(c_.n_vocab)) != 1) init.bigram_step += 2;
        init.bigram_gain =
            kBigramLogit * c_.logit_scale * c_.embed_scale / c_.residual_scale / static_cast<float>(c_.dim);
        break;
      }
      case TensorRole::kNorm:
        init.kind = Init::kNorm;
        init.scale = 0.05f;
        if (name == "output_norm.weight" && c_.tied_output) {
          init.center = kTiedLogitStd * c_.logit_scale / kTiedEmbedStd;
        }
        break;
      case TensorRole::kBias:
        init.scale = 0.1f;
        break;
      case TensorRole::kFactors:  // frequency divisors in [1.05, 1.95]
        init.kind = Init::kNorm;
        init.center = 1.5f;
        init.scale = 0.3f;
        break;
    }
    if (name == "token_embd.weight") token_embd_ = init;
    specs.push_back({name, std::vector<int64_t>(ne), role, std::move(init)});
  }
  void part(Tensor*, const Tensor*, int64_t, int64_t) override {}

  struct Spec {
    std::string name;
    std::vector<int64_t> shape;  // ne[0] first
    TensorRole role;
    Init init;
  };
  std::vector<Spec> specs;

 private:
  const ModelConfig& c_;
  uint64_t seed_;
  Init token_embd_{};
};

// The config of a synthetic model: the shape, then the architecture's own
// defaults.
ModelConfig synth_config(const Shape& s, const Architecture* arch, int64_t n_vocab) {
  ModelConfig c;
  c.arch = arch;
  c.arch_name = arch->name;
  c.encoder = arch->encoder;
  c.name = "synth-" + s.name;
  c.n_vocab = static_cast<int>(n_vocab);
  c.dim = s.dim;
  c.n_layers = s.n_layers;
  c.n_heads = s.n_heads;
  c.n_kv_heads = s.n_kv_heads;
  c.head_dim = s.head_dim > 0 ? s.head_dim : s.dim / s.n_heads;
  c.ffn_dim = s.ffn;
  c.n_ctx_train = s.ctx;
  c.rope_dims = c.head_dim;
  c.rope_freq_base = s.rope_base;
  c.tied_output = s.tied;
  c.layers.assign(s.n_layers, LayerConfig{true, s.n_kv_heads, 0, true});
  arch->synth_defaults(&c);
  if (s.name == "qwen3-embedding-0.6b") c.pooling = Pooling::kLast;
  if (s.rope_dims > 0) c.rope_dims = s.rope_dims;
  return c;
}

// A reranker of the architecture's kind: rank pooling through a
// classification head, as llama.cpp reads them (bert: a dense layer and a
// one-score projection; jina-bert-v2: one dense layer to one score; qwen3:
// a projection to the "yes" and "no" scores, with a rerank template).
Status make_reranker(ModelConfig* c) {
  c->pooling = Pooling::kRank;
  if (c->arch_name == "bert" || c->arch_name == "nomic-bert") {
    c->cls_head = c->cls_out = true;
  } else if (c->arch_name == "jina-bert-v2") {
    c->cls_head = true;
  } else if (c->arch_name == "qwen3") {
    c->cls_out = true;
    c->n_cls_out = 2;
  } else {
    return Status::error(ErrorCode::kInvalidArgument, "--reranker: %s has no classification head",
                         c->arch_name.c_str());
  }
  return {};
}

// Qwen3-Reranker's template (llama.cpp's converter writes it).
constexpr const char* kQwen3RerankTemplate =
    "<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and the Instruct "
    "provided. Note that the answer can only be \"yes\" or \"no\".<|im_end|>\n<|im_start|>user\n<Instruct>: Given a web "
    "search query, retrieve relevant passages that answer the query\n<Query>: {query}\n<Document>: {document}"
    "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n";

Status run(const Args& args) {
  const std::string shape_spec = args.get_string({"--shape"});
  const std::string type_name = args.get_string({"--type"});
  const std::string vocab_path = args.get_string({"--vocab"});
  const std::string out_path = args.get_string({"-o", "--output"});
  if (shape_spec.empty() || type_name.empty() || vocab_path.empty() || out_path.empty() ||
      !args.positionals().empty()) {
    std::fputs(usage_text(kSynthCommand).c_str(), stderr);
    return Status::error(ErrorCode::kInvalidArgument, "synth needs --shape, --type, --vocab and -o (and nothing else)");
  }
  WLLM_ASSIGN_OR_RETURN(Shape shape, parse_shape(shape_spec));
  const QuantScheme* scheme = find_quant_scheme(type_name);
  if (!scheme) {
    return Status::error(ErrorCode::kInvalidArgument, "unknown --type '%s' (known: %s)", type_name.c_str(),
                         quant_scheme_names().c_str());
  }
  const std::string arch_name = args.get_string({"--arch"}, shape.arch);
  const Architecture* arch = find_architecture(arch_name);
  if (!arch) {
    return Status::error(ErrorCode::kInvalidArgument, "--arch '%s' is not one of %s", arch_name.c_str(),
                         architecture_names().c_str());
  }
  WLLM_ASSIGN_OR_RETURN(const int64_t head_dim, args.get_int({"--head-dim"}, shape.head_dim));
  if (head_dim < 0 || head_dim > 65536) return Status::error(ErrorCode::kInvalidArgument, "--head-dim must be 1 to 65536");
  shape.head_dim = static_cast<int>(head_dim);
  if (args.has("--tied")) shape.tied = true;  // no output.weight: the embedding is the output matrix
  WLLM_RETURN_IF_ERROR(check_shape(shape));
  WLLM_ASSIGN_OR_RETURN(const int64_t seed, args.get_int({"--seed"}, 1));
  WLLM_ASSIGN_OR_RETURN(const int64_t ctx, args.get_int({"--ctx"}, shape.ctx));
  if (ctx < 1 || ctx > (1 << 24)) return Status::error(ErrorCode::kInvalidArgument, "--ctx must be 1 to 2^24");
  shape.ctx = static_cast<int>(ctx);
  WLLM_ASSIGN_OR_RETURN(const int64_t threads, args.get_int({"-t", "--threads"}, ThreadPool::default_threads()));
  if (threads < 1 || threads > 256) return Status::error(ErrorCode::kInvalidArgument, "--threads must be 1 to 256");

  const auto t0 = std::chrono::steady_clock::now();
  WLLM_ASSIGN_OR_RETURN(const GgufFile vocab, read_gguf_header(vocab_path));
  WLLM_ASSIGN_OR_RETURN(const GgufArray* tokens, vocab.get_array("tokenizer.ggml.tokens"));
  const int64_t n_vocab = static_cast<int64_t>(tokens->size());
  if (n_vocab < 1 || n_vocab > (1 << 24)) {
    return Status::error(ErrorCode::kBadFile, "%s: vocabulary of %lld tokens is out of range", vocab_path.c_str(),
                         static_cast<long long>(n_vocab));
  }

  GgufWriter w;
  ModelConfig config = synth_config(shape, arch, n_vocab);
  // Token types as the vocabulary's model had them (an encoder's token_types rows).
  constexpr std::string_view kTokenTypeCount = "tokenizer.ggml.token_type_count";
  if (config.n_token_types > 0 && vocab.find(kTokenTypeCount)) {
    WLLM_ASSIGN_OR_RETURN(const uint64_t types, vocab.get_uint(kTokenTypeCount));
    if (types < 1 || types > 1024) return Status::error(ErrorCode::kBadFile, "%s: %llu token types", vocab_path.c_str(),
                                                        static_cast<unsigned long long>(types));
    config.n_token_types = static_cast<int>(types);
  }
  if (args.has("--pooling")) {
    const std::string name = args.get_string({"--pooling"});
    if (!parse_pooling(name, &config.pooling) || config.pooling == Pooling::kRank) {
      return Status::error(ErrorCode::kInvalidArgument, "--pooling '%s' is not one of none, mean, cls, last (a "
                           "reranker: --reranker)", name.c_str());
    }
  }
  if (args.has("--reranker")) WLLM_RETURN_IF_ERROR(make_reranker(&config));
  // The window of sliding-window layers (architectures that have them).
  WLLM_ASSIGN_OR_RETURN(const int64_t window, args.get_int({"--sliding-window"}, config.sliding_window));
  if (window < 0 || window > (1 << 24)) return Status::error(ErrorCode::kInvalidArgument, "--sliding-window must be 0 to 2^24");
  config.sliding_window = static_cast<int>(window);
  WLLM_RETURN_IF_ERROR(write_config(&config, &w));
  WLLM_RETURN_IF_ERROR(w.set_string("general.name", config.name));
  WLLM_RETURN_IF_ERROR(w.set_u32("general.file_type", scheme->ftype));
  WLLM_RETURN_IF_ERROR(w.set_u32("general.alignment", 32));
  if (type_traits(scheme->base).block_size > 1) WLLM_RETURN_IF_ERROR(w.set_u32("general.quantization_version", 2));
  for (const GgufKV& kv : vocab.kvs()) {
    if (kv.key.starts_with("tokenizer.") && !(kv.key == kTokenTypeCount && config.n_token_types > 0)) {
      WLLM_RETURN_IF_ERROR(w.copy_kv(kv));
    }
  }
  if (config.rank_softmax && config.pooling == Pooling::kRank) {
    WLLM_RETURN_IF_ERROR(w.set_string("tokenizer.chat_template.rerank", kQwen3RerankTemplate));
  }
  // A chat template (Jinja, as in real models) for tests of chat formatting.
  if (const std::string template_path = args.get_string({"--chat-template"}); !template_path.empty()) {
    WLLM_ASSIGN_OR_RETURN(const std::string chat_template, read_file(template_path));
    WLLM_RETURN_IF_ERROR(w.set_string("tokenizer.chat_template", chat_template));
  }

  SynthTensors list(config, static_cast<uint64_t>(seed));
  ModelWeights unused;
  unused.layers.resize(config.n_layers);
  arch->tensors(list, config, &unused);
  std::vector<std::string> names;
  for (const SynthTensors::Spec& t : list.specs) names.push_back(t.name);
  QuantPlanner planner(*scheme, args.has("--pure"), names);
  ThreadPool pool(static_cast<int>(threads));
  int n_fallback = 0;
  for (const SynthTensors::Spec& t : list.specs) {
    // Gains, biases and taps are read as floats: they stay f32.
    const bool floats = t.role != TensorRole::kMatrix && t.role != TensorRole::kOutput && t.role != TensorRole::kEmbedding;
    const TensorChoice c = planner.choose(t.name, floats ? 1 : static_cast<int>(t.shape.size()), t.shape[0]);
    const TypeTraits& to = type_traits(c.type);
    WLLM_RETURN_IF_ERROR(check_kernels(to, true, false));
    if (c.fell_back()) {
      ++n_fallback;
      std::fprintf(stderr, "fallback: %-28s row length %lld is not a multiple of %lld (%s) -> %s\n", t.name.c_str(),
                   static_cast<long long>(t.shape[0]), static_cast<long long>(type_traits(c.wanted).block_size),
                   type_traits(c.wanted).name, to.name);
    }
    int64_t n_rows = 1;
    for (size_t d = 1; d < t.shape.size(); ++d) n_rows *= t.shape[d];
    RowSource src;
    src.row = [init = t.init](int64_t r, float* dst) { init.row(r, dst); };
    WLLM_RETURN_IF_ERROR(
        w.add_tensor(t.name, to.type, t.shape, make_row_producer(to, t.shape[0], n_rows, std::move(src), &pool)));
  }
  WLLM_RETURN_IF_ERROR(w.write_file(out_path));

  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr,
               "synth %s (%s, dim %d, %d layers, %d/%d heads of %d, ffn %d, ctx %d, vocab %lld%s%s%s) as %s%s: %s "
               "in %.1f s, %d fallback tensors\n",
               out_path.c_str(), config.arch_name.c_str(), config.dim, config.n_layers, config.n_heads,
               config.n_kv_heads, config.head_dim, config.ffn_dim, config.n_ctx_train, static_cast<long long>(n_vocab),
               config.tied_output && !config.encoder ? ", tied" : "", config.pooling != Pooling::kNone ? ", pooling " : "",
               config.pooling != Pooling::kNone ? pooling_name(config.pooling) : "", scheme->name, args.has("--pure") ? " (pure)" : "",
               format_bytes(w.file_size()).c_str(), secs, n_fallback);
  return {};
}

}  // namespace

const Command kSynthCommand = {
    .name = "synth",
    .synopsis = "synth --shape NAME|DIMS --type TYPE --vocab VOCAB.gguf -o OUT.gguf\n"
                "      [--arch ARCH] [--head-dim N] [--sliding-window N] [--seed S] [--ctx N]\n"
                "      [--tied] [--pure] [--threads N]\n"
                "      [--chat-template FILE] [--pooling mean|cls|last] [--reranker]",
    .summary = "write a random-weight model of a real shape",
    .details = [] {
      return "NAME: " + shape_names() +
             "\n"
             "DIMS: DIMxLAYERS[:HEADS/KVHEADS[:FFN]], e.g. 256x2:4/2:512 (default heads dim/64,\n"
             "      FFN 8/3·dim rounded up to 256; head width dim/heads unless --head-dim)\n"
             "ARCH: " + architecture_names() + " (default: the NAME's, else llama)\n" +
             "TYPE: " + quant_scheme_names() + "\n" +
             "The weights are a function of --seed (default 1) alone.\n";
    },
    .reads_model = false,
    .switches = {"--pure", "--tied", "--reranker"},
    .options = {"--shape", "--type", "--vocab", "-o", "--output", "--arch", "--head-dim", "--sliding-window", "--seed",
                "--ctx", "-t", "--threads", "--chat-template", "--pooling"},
    .run = run,
};

}  // namespace wllm::cli
