// The engine end to end on the real stories260K model: loading through the
// streaming path, results independent of the thread count, clear errors for
// a prompt longer than the context, abort, stop strings, memory accounting.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "engine/bench.h"
#include "engine/engine.h"
#include "gguf/gguf_writer.h"

namespace wllm {
namespace {

const std::string kModel = std::string(WLLM_SHARED_MODELS) + "/stories260K.gguf";

std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// Loads through the three-step API, feeding the header in small prefixes to
// exercise kNeedMoreData, as the wasm loader does.
Status load(Engine* e, const std::vector<uint8_t>& file, LoadOptions options) {
  uint64_t want = 64;
  for (;;) {
    uint64_t needed = 0;
    const Status s = e->begin_load({file.data(), static_cast<size_t>(std::min<uint64_t>(want, file.size()))},
                                   file.size(), options, &needed);
    if (s.code() != ErrorCode::kNeedMoreData) {
      WLLM_RETURN_IF_ERROR(s);
      break;
    }
    EXPECT_GT(needed, want);
    want = needed;
  }
  std::copy(file.begin() + e->data_offset(), file.begin() + e->data_offset() + e->data_size(), e->data_destination());
  return e->finish_load();
}

class EngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { file_ = new std::vector<uint8_t>(read_all(kModel)); }
  static void TearDownTestSuite() { delete file_; }
  static std::vector<uint8_t>* file_;
};
std::vector<uint8_t>* EngineTest::file_ = nullptr;

OutputConstraint constraint(OutputConstraint::Kind kind, std::string text) {
  OutputConstraint c;
  c.kind = kind;
  c.text = std::move(text);
  return c;
}

std::string generate(Engine& e, const std::string& prompt, GenerateOptions g, GenerateStats* stats = nullptr) {
  std::string out;
  Result<GenerateStats> r = e.generate(prompt, g, [&](std::string_view t) { out.append(t); });
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (stats && r.ok()) *stats = *r;
  return out;
}

TEST_F(EngineTest, LoadsAndReportsMemoryAsPlanned) {
  Engine e;
  ASSERT_TRUE(load(&e, *file_, {.n_ctx = 256, .n_threads = 2}).ok());
  EXPECT_EQ(e.config().dim, 64);
  EXPECT_EQ(e.config().n_layers, 5);
  EXPECT_EQ(e.config().n_kv_heads, 4);
  const MemoryReport m = e.memory();
  EXPECT_EQ(m.kv_cache, static_cast<uint64_t>(Transformer::plan_kv_cache_bytes(e.config(), 256)));
  EXPECT_EQ(m.buffers, static_cast<uint64_t>(Transformer::plan_buffer_bytes(e.config(), 256, 2)));
  EXPECT_EQ(m.kv_cache, 2ull * 5 * 256 * 32 * 2);  // k and v, 5 layers, 256 positions, kv_dim 32, f16
}

TEST_F(EngineTest, LogitsDoNotDependOnThreadCount) {
  const std::vector<int32_t> tokens = {1, 403, 407, 261, 378, 286, 389, 300};
  std::vector<float> one, two, three;
  for (auto [threads, out] : {std::pair{1, &one}, {2, &two}, {3, &three}}) {
    Engine e;
    ASSERT_TRUE(load(&e, *file_, {.n_ctx = 64, .n_threads = threads}).ok());
    ASSERT_TRUE(e.eval_logits(tokens, out).ok());
  }
  ASSERT_EQ(one.size(), tokens.size() * 512);
  EXPECT_EQ(one, two);  // bit-identical, not merely close
  EXPECT_EQ(one, three);
}

TEST_F(EngineTest, BatchedEvaluationEqualsTokenByToken) {
  // Two full batches and a partial one.
  std::vector<int32_t> tokens;
  for (int i = 0; i < 2 * Transformer::kMaxBatch + 11; ++i) tokens.push_back(1 + (i * 37) % 500);
  Engine e;
  ASSERT_TRUE(load(&e, *file_, {.n_ctx = 256, .n_threads = 2}).ok());
  std::vector<float> batched;
  ASSERT_TRUE(e.eval_logits(tokens, &batched).ok());
  const int n_vocab = e.config().n_vocab;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const float* single = e.model().forward(tokens[i], static_cast<int>(i));
    ASSERT_EQ(std::memcmp(single, batched.data() + i * n_vocab, n_vocab * sizeof(float)), 0) << "position " << i;
  }
  // Only-the-last-logits mode returns the last row of the full one.
  const float* last = e.model().forward_batch(tokens.data(), 20, 0, false);
  EXPECT_EQ(std::memcmp(last, batched.data() + 19 * n_vocab, n_vocab * sizeof(float)), 0);
}

TEST_F(EngineTest, SameSeedSameText) {
  Engine e;
  ASSERT_TRUE(load(&e, *file_, {.n_ctx = 256, .n_threads = 2}).ok());
  GenerateOptions g;
  g.max_tokens = 40;
  g.sampling.temperature = 0.9f;
  g.sampling.seed = 42;
  const std::string a = generate(e, "Once upon a time", g);
  const std::string b = generate(e, "Once upon a time", g);
  g.sampling.seed = 43;
  const std::string c = generate(e, "Once upon a time", g);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_FALSE(a.empty());
}

TEST_F(EngineTest, SteppingGivesTheSameTextAsGenerate) {
  Engine e;
  ASSERT_TRUE(load(&e, *file_, {.n_ctx = 256, .n_threads = 2}).ok());
  GenerateOptions g;
  g.max_tokens = 30;
  g.sampling.temperature = 0.8f;
  g.sampling.seed = 7;
  g.stop = {"Lily"};
  GenerateStats whole_stats;
  const std::string whole = generate(e, "Once upon a time there was a girl. She", g, &whole_stats);

  ASSERT_TRUE(e.start_generation("Once upon a time there was a girl. She", g).ok());
  Generation* gen = e.generation();
  ASSERT_NE(gen, nullptr);
  std::string stepped, piece;
  int steps = 0, prefill_steps_with_text = 0;
  while (gen->step(&piece)) {
    if (steps++ == 0 && !piece.empty()) ++prefill_steps_with_text;
    stepped += piece;
    piece.clear();
  }
  stepped += piece;
  EXPECT_EQ(stepped, whole);
  EXPECT_EQ(prefill_steps_with_text, 0);
  EXPECT_EQ(gen->stats().generated_tokens, whole_stats.generated_tokens);
  EXPECT_EQ(gen->stats().stop_reason, whole_stats.stop_reason);
  EXPECT_FALSE(gen->step(&piece));  // finished stays finished
}

TEST_F(EngineTest, PromptLongerThanContextIsAClearError) {
  Engine e;
  ASSERT_TRUE(load(&e, *file_, {.n_ctx = 16, .n_threads = 1}).ok());
  std::string prompt;
  for (int i = 0; i < 20; ++i) prompt += "Once upon a time ";
  Result<GenerateStats> r = e.generate(prompt, {}, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kContextFull);
  EXPECT_NE(r.status().message().find("context holds 16"), std::string::npos) << r.status().message();
  // The engine stays usable.
  GenerateOptions g;
  g.max_tokens = 4;
  g.sampling.temperature = 0;
  EXPECT_FALSE(generate(e, "Once", g).empty());
}

TEST_F(EngineTest, GenerationStopsAtTheContextEnd) {
  Engine e;
  ASSERT_TRUE(load(&e, *file_, {.n_ctx = 24, .n_threads = 1}).ok());
  GenerateOptions g;
  g.max_tokens = 1000;
  g.sampling.temperature = 0;
  GenerateStats st;
  generate(e, "Once upon a time", g, &st);
  EXPECT_EQ(st.stop_reason, StopReason::kContextFull);
  // Every cache slot is used; the last token is predicted from the full
  // context but never needs a slot of its own.
  EXPECT_EQ(st.prompt_tokens + st.generated_tokens, 24 + 1);
}

TEST_F(EngineTest, AbortStopsGenerationAndKeepsTheEngineUsable) {
  Engine e;
  ASSERT_TRUE(load(&e, *file_, {.n_ctx = 256, .n_threads = 1}).ok());
  std::atomic<bool> abort{false};
  GenerateOptions g;
  g.max_tokens = 200;
  g.sampling.temperature = 0;
  int pieces = 0;
  Result<GenerateStats> r = e.generate("Once upon a time", g, [&](std::string_view) {
    if (++pieces == 5) abort.store(true);
  }, &abort);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kAborted);
  EXPECT_LE(pieces, 6);
  g.max_tokens = 5;
  EXPECT_FALSE(generate(e, "Once upon a time", g).empty());
}

TEST_F(EngineTest, StopStringEndsGenerationAndIsNotEmitted) {
  Engine e;
  ASSERT_TRUE(load(&e, *file_, {.n_ctx = 256, .n_threads = 1}).ok());
  GenerateOptions g;
  g.max_tokens = 200;
  g.sampling.temperature = 0;
  const std::string full = generate(e, "Once upon a time", g);
  ASSERT_NE(full.find("Lily"), std::string::npos) << full;
  g.stop = {"Lily"};
  GenerateStats st;
  const std::string cut = generate(e, "Once upon a time", g, &st);
  EXPECT_EQ(st.stop_reason, StopReason::kStopString);
  EXPECT_EQ(cut, full.substr(0, full.find("Lily")));
}

TEST_F(EngineTest, ConstrainedOutputFollowsTheGrammarAndEndsWithIt) {
  Engine e;
  ASSERT_TRUE(load(&e, *file_, {.n_ctx = 256, .n_threads = 1}).ok());
  GenerateOptions g;
  g.max_tokens = 100;
  g.sampling.seed = 7;
  g.constraint = constraint(OutputConstraint::Kind::kGrammar, "root ::= \"Tom \" [a-z]{1,8} \"s.\"\n");
  GenerateStats st;
  const std::string text = generate(e, "Once upon a time", g, &st);
  ASSERT_GE(text.size(), 6u);
  EXPECT_EQ(text.substr(0, 4), "Tom ");
  EXPECT_EQ(text.substr(text.size() - 2), "s.");
  // Complete and nothing may follow: it ends there (no end-of-generation token needed).
  EXPECT_EQ(st.stop_reason, StopReason::kEndOfGeneration);
  EXPECT_LT(st.generated_tokens, 12);
  EXPECT_GT(e.constraints().trie_bytes(), 0u);
  // The same grammar again reuses the compiled one (and gives the same text for the same seed).
  EXPECT_EQ(generate(e, "Once upon a time", g), text);
  // A grammar that matches only the empty string ends at once.
  g.constraint.text = "root ::= \"\"\n";
  EXPECT_EQ(generate(e, "Once upon a time", g, &st), "");
  EXPECT_EQ(st.generated_tokens, 0);
  EXPECT_EQ(st.stop_reason, StopReason::kEndOfGeneration);
}

TEST_F(EngineTest, LazyGrammarTakesOverAtItsTrigger) {
  Engine e;
  ASSERT_TRUE(load(&e, *file_, {.n_ctx = 256, .n_threads = 1}).ok());
  GenerateOptions g;
  g.max_tokens = 60;
  g.sampling.temperature = 0;
  const std::string free_text = generate(e, "Once upon a time", g);
  const size_t was = free_text.find(" was");
  ASSERT_NE(was, std::string::npos) << free_text;
  // Free until " was", then the grammar: the text before it is the free text's.
  g.constraint = constraint(OutputConstraint::Kind::kGrammar, "root ::= \" was \" [0-9]{3} \" cats.\"\n");
  g.constraint.triggers = {" was"};
  GenerateStats st;
  const std::string text = generate(e, "Once upon a time", g, &st);
  EXPECT_EQ(text.substr(0, was), free_text.substr(0, was));
  const std::string tail = text.substr(was);
  ASSERT_EQ(tail.size(), 14u) << text;
  EXPECT_EQ(tail.substr(0, 5), " was ");
  EXPECT_EQ(tail.substr(8), " cats.");
  EXPECT_EQ(st.stop_reason, StopReason::kEndOfGeneration);
  // A trigger the model completes with bytes the grammar rejects (" wa" by
  // " was"): that token is drawn again under the grammar.
  g.constraint.text = "root ::= \" wazoo.\"\n";
  g.constraint.triggers = {" wa"};
  EXPECT_EQ(generate(e, "Once upon a time", g), free_text.substr(0, was) + " wazoo.");
  // A start trigger holds only at the start of the output (after whitespace).
  ASSERT_EQ(free_text.substr(0, 6), ", ther");
  g.constraint.triggers = {};
  g.constraint.start_triggers = {", the"};
  g.constraint.text = "root ::= \", the end.\"\n";
  EXPECT_EQ(generate(e, "Once upon a time", g), ", the end.");
  g.constraint.start_triggers = {" was"};  // not at the start: never triggers
  EXPECT_EQ(generate(e, "Once upon a time", g), free_text);
}

TEST_F(EngineTest, BadGrammarOrSchemaFailsBeforeGenerating) {
  Engine e;
  ASSERT_TRUE(load(&e, *file_, {.n_ctx = 256, .n_threads = 1}).ok());
  GenerateOptions g;
  g.constraint = constraint(OutputConstraint::Kind::kGrammar, "root ::= [a-z\n");
  Status s = e.start_generation("Hi", g);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("grammar: line 1, column 10: the character set is not closed"), std::string::npos)
      << s.message();
  EXPECT_EQ(e.generation(), nullptr);
  g.constraint = constraint(OutputConstraint::Kind::kJsonSchema, R"({"type": "object", "propertyNames": {}})");
  s = e.start_generation("Hi", g);
  EXPECT_NE(s.message().find("JSON schema at the root: 'propertyNames' is not supported"), std::string::npos)
      << s.message();
  // Unconstrained generation still works after the errors.
  g.constraint = {};
  g.max_tokens = 3;
  EXPECT_FALSE(generate(e, "Once upon a time", g).empty());
}

TEST_F(EngineTest, GrammarTooAmbiguousToFollowIsAnError) {
  // Each "a" doubles the ways to read the output (it may close with "b" or
  // "c"); past GrammarMatcher::kMaxParses the generation fails instead of
  // taking time and memory without end.
  Engine e;
  ASSERT_TRUE(load(&e, *file_, {.n_ctx = 256, .n_threads = 1}).ok());
  GenerateOptions g;
  g.max_tokens = 60;
  g.sampling.temperature = 0;
  g.constraint = constraint(OutputConstraint::Kind::kGrammar, "root ::= \"a\" root \"b\" | \"a\" root \"c\"\n");
  const Result<GenerateStats> r = e.generate("Once upon a time", g, [](std::string_view) {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("grammar: the grammar is too ambiguous to follow: after "), std::string::npos)
      << r.status().message();
  g.constraint = {};
  g.max_tokens = 3;
  EXPECT_FALSE(generate(e, "Once upon a time", g).empty());
}

TEST_F(EngineTest, MemoryLimitIsCheckedBeforeAllocating) {
  Engine e;
  LoadOptions o{.n_ctx = 512, .n_threads = 1, .memory_limit = 100000};
  const Status s = load(&e, *file_, o);
  EXPECT_EQ(s.code(), ErrorCode::kOutOfMemory);
  EXPECT_NE(s.message().find("MiB"), std::string::npos);
}

TEST_F(EngineTest, ContextBeyondTrainingIsRejected) {
  Engine e;
  const Status s = load(&e, *file_, {.n_ctx = 4096, .n_threads = 1});
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("training context"), std::string::npos) << s.message();
}

// stories260K's metadata (no tensors) with some counts replaced.
std::vector<uint8_t> metadata_with(const std::vector<uint8_t>& model,
                                   const std::vector<std::pair<const char*, uint32_t>>& counts) {
  Result<GgufFile> file = GgufFile::parse(model);
  EXPECT_TRUE(file.ok()) << file.status().message();
  GgufWriter w;
  for (const GgufKV& kv : file->kvs()) EXPECT_TRUE(w.copy_kv(kv).ok());
  for (const auto& [key, value] : counts) EXPECT_TRUE(w.set_u32(key, value).ok());
  Result<std::vector<uint8_t>> bytes = w.write_to_memory();
  EXPECT_TRUE(bytes.ok()) << bytes.status().message();
  return std::move(bytes).value();
}

// loader_fuzz: 65536 heads of width 65536 (attention.key_length lifts the
// heads-divide-the-width check) made the query width 2^32, which overflowed
// int when begin_load planned the buffers. Attention no wider than the widest
// embedding accepted (65536) is refused, with or without an overflow.
TEST_F(EngineTest, AttentionWiderThanTheMaximumWidthIsRefused) {
  struct Case {
    uint32_t heads, kv_heads, key_length;
    const char* message;
  };
  for (const Case& c : {Case{65536, 65536, 65536, "65536 heads of width 65536"},
                        Case{64, 4, 2048, "64 heads of width 2048"}}) {
    const std::vector<uint8_t> file = metadata_with(*file_, {{"llama.attention.head_count", c.heads},
                                                             {"llama.attention.head_count_kv", c.kv_heads},
                                                             {"llama.attention.key_length", c.key_length}});
    Engine e;
    const Status s = e.begin_load(file, file.size(), {.n_ctx = 8, .n_threads = 1, .memory_limit = 64ull << 20});
    EXPECT_EQ(s.code(), ErrorCode::kBadFile) << s.message();
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s.message();
  }
}

TEST_F(EngineTest, BenchTimesPrefillAndDecodeWithinTheContext) {
  Engine e;
  ASSERT_TRUE(load(&e, *file_, {.n_ctx = 48, .n_threads = 2}).ok());
  const Result<BenchTimes> t = run_bench(e, 40, 8);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->prompt_tokens, 40);
  EXPECT_EQ(t->generated_tokens, 8);
  EXPECT_GT(t->prefill_seconds, 0);
  EXPECT_GT(t->decode_seconds, 0);
  EXPECT_GE(t->runs, 1);
  EXPECT_LE(t->runs, BenchRuns{}.max_runs);
  // Exactly min_runs when no time is asked for; up to max_runs while runs take under min_seconds.
  EXPECT_EQ(run_bench(e, 4, 2, {.min_runs = 3, .max_runs = 5, .min_seconds = 0}).value().runs, 3);
  EXPECT_EQ(run_bench(e, 4, 2, {.min_runs = 2, .max_runs = 4, .min_seconds = 1e9}).value().runs, 4);
  EXPECT_EQ(run_bench(e, 4, 2, {.min_runs = 0}).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(run_bench(e, 40, 9).status().code(), ErrorCode::kContextFull);
  EXPECT_EQ(run_bench(e, 0, 8).status().code(), ErrorCode::kInvalidArgument);
  Engine empty;
  EXPECT_EQ(run_bench(empty, 4, 4).status().code(), ErrorCode::kInvalidArgument);
}

// bench/bench-prompt.js makes the same ids for the engines fed from JS
// (tests/js/generate.test.mjs checks the same values).
TEST(BenchPromptTest, IsTheFixedPseudoRandomSequence) {
  EXPECT_EQ(bench_prompt(4, 32000), (std::vector<int32_t>{12868, 467, 4374, 12157}));
}

}  // namespace
}  // namespace wllm
