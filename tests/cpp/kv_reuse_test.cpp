// Reusing what the KV cache holds (Transformer::rewind_point, Engine::
// start_generation), on every architecture of the table: evaluation that
// continues from a rewind point gives the bits of a fresh evaluation from 0,
// whatever the batch boundaries; the rewind points are the ones each kind of
// layer allows (any position; a convolution checkpoint; 0 once a sliding-
// window ring has lost the window); and generate() gives, greedy and seeded,
// exactly the text an engine with an empty cache gives for every way a prompt
// can share a prefix with the cache: the same prompt, an extension, a
// divergence in the middle, a shorter prompt, nothing in common, after the
// context filled up.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "synthetic_model.h"

namespace wllm {
namespace {

constexpr int kWindow = 8;
constexpr int kContext = 256;
constexpr int kInterval = ConvState::kCheckpointInterval;

std::vector<int32_t> tokens_from(int seed, int n) {
  std::vector<int32_t> tokens;
  for (int i = 0; i < n; ++i) tokens.push_back(1 + (i * 37 + seed * 101) % 500);
  return tokens;
}

bool has_conv_layers(const ModelConfig& c) {
  for (const LayerConfig& l : c.layers) {
    if (!l.attention) return true;
  }
  return false;
}

// Whether some layer keeps only a ring of kWindow + a batch positions.
bool has_rings(const ModelConfig& c) {
  for (const LayerConfig& l : c.layers) {
    if (l.attention && l.window > 0 && l.window + Transformer::kMaxBatch - 1 < kContext) return true;
  }
  return false;
}

class KvReuse : public testing::ArchitectureModelTest<kWindow, kContext> {};

// Evaluates tokens[from..] in passes of the lengths in `passes` (cycled),
// and returns every position's logits from `from` on.
std::vector<float> evaluate_from(Transformer& m, const std::vector<int32_t>& tokens, int from,
                                 const std::vector<int>& passes) {
  const int n_vocab = m.config().n_vocab;
  std::vector<float> logits;
  for (size_t i = 0, p = static_cast<size_t>(from); p < tokens.size(); ++i) {
    const int n = std::min<int>(passes[i % passes.size()], static_cast<int>(tokens.size() - p));
    const float* out = m.forward_batch(tokens.data() + p, n, static_cast<int>(p), true);
    logits.insert(logits.end(), out, out + static_cast<size_t>(n) * n_vocab);
    p += n;
  }
  return logits;
}

TEST_P(KvReuse, ContinuingFromARewindPointGivesTheBitsOfAFreshEvaluation) {
  Engine e, fresh;
  ASSERT_TRUE(testing::load_engine(&e, file_, 2, kContext).ok());
  ASSERT_TRUE(testing::load_engine(&fresh, file_, 1, kContext).ok());
  const ModelConfig& c = e.config();
  const int n_vocab = c.n_vocab;
  const std::vector<int32_t> first = tokens_from(1, 150);
  Transformer& m = e.model();
  for (const int p : {0, 1, 7, 9, 63, 64, 65, 90, 127, 128, 149, 150}) {
    std::vector<float> logits;
    ASSERT_TRUE(e.eval_logits(first, &logits).ok());
    ASSERT_EQ(m.sequence(), first);
    const int point = m.rewind_point(p);
    // What each kind of layer allows. The recent convolution inputs are
    // those of positions 150 - 64 = 86 on, and position p's rows need those
    // from p - (taps - 1). A ring of window + 63 slots holds positions
    // 150 - 71 = 79 on, and position p needs those from p - 7.
    int expected = p;
    if (has_conv_layers(c) && p - (c.shortconv_l_cache - 1) < 150 - ConvState::kRecentInputs) {
      expected = p / kInterval * kInterval;
    }
    if (has_rings(c) && expected > 0 && expected - kWindow + 1 < 79) expected = 0;
    EXPECT_EQ(point, expected) << "p " << p;
    // The first p tokens, then others: evaluated from the rewind point in
    // passes whose boundaries differ from a fresh evaluation's.
    std::vector<int32_t> second(first.begin(), first.begin() + p);
    const std::vector<int32_t> rest = tokens_from(2, 40);
    second.insert(second.end(), rest.begin(), rest.end());
    const std::vector<float> continued = evaluate_from(m, second, point, {5, 1, 64, 3});
    EXPECT_EQ(m.sequence(), second);
    std::vector<float> reference;
    ASSERT_TRUE(fresh.eval_logits(second, &reference).ok());
    ASSERT_EQ(continued.size(), reference.size() - static_cast<size_t>(point) * n_vocab);
    for (size_t q = point; q < second.size(); ++q) {
      ASSERT_EQ(std::memcmp(continued.data() + (q - point) * n_vocab, reference.data() + q * n_vocab,
                            n_vocab * sizeof(float)),
                0)
          << "p " << p << ", position " << q;
    }
  }
}

struct Call {
  std::string text;
  GenerateStats stats;
};

Call generate(Engine& e, const std::string& prompt, const GenerateOptions& g) {
  Call call;
  Result<GenerateStats> r = e.generate(prompt, g, [&](std::string_view t) { call.text.append(t); });
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (r.ok()) call.stats = *r;
  return call;
}

// Token count of `text` as a prompt.
int prompt_tokens(Engine& e, const std::string& text) {
  return static_cast<int>(e.tokenizer().encode(text, true, true).size());
}

TEST_P(KvReuse, GenerationGivesTheTextOfAnEmptyCacheForEveryPrefix) {
  Engine e;
  ASSERT_TRUE(testing::load_engine(&e, file_, 2, kContext).ok());
  const ModelConfig& c = e.config();
  const std::string story = "Once upon a time there was a little girl. She liked to play in the park with her dog.";
  // A prompt 2 to 6 tokens short of the context: generation runs into its end.
  std::string long_story = story;
  for (size_t i = 0; prompt_tokens(e, long_story) < kContext - 6; i = (i + 1) % story.size()) {
    long_story += story[i];
  }
  ASSERT_LT(prompt_tokens(e, long_story), kContext - 1);
  for (const bool seeded : {false, true}) {
    GenerateOptions g;
    g.max_tokens = 24;
    g.sampling.temperature = seeded ? 0.9f : 0.0f;
    g.sampling.seed = 7;
    g.sampling.repeat_penalty = 1.1f;  // the penalties see the cached part of the prompt too
    // Each prompt after the first shares some prefix with what the cache then holds.
    const std::string first = story + " One day";
    const std::string first_reply = generate(e, first, g).text;
    struct Case {
      const char* name;
      std::string prompt;
    };
    const Case cases[] = {
        {"same prompt", first},
        {"extension (the reply and more)", first + first_reply + " Then the sun came out and"},
        {"divergence in the middle", story.substr(0, 40) + " a big red ball rolled away"},
        {"shorter prompt", story.substr(0, 20)},
        {"nothing in common", "The cat sat on the mat."},
        {"long prompt", long_story},
        {"after the context filled up", long_story.substr(0, long_story.size() / 2)},
    };
    for (const Case& k : cases) {
      GenerateOptions options = g;
      if (k.prompt == long_story) options.max_tokens = kContext;  // runs into the context's end
      const Call reused = generate(e, k.prompt, options);
      Engine empty;
      ASSERT_TRUE(testing::load_engine(&empty, file_, 1, kContext).ok());
      const Call reference = generate(empty, k.prompt, options);
      EXPECT_EQ(reused.text, reference.text) << k.name << (seeded ? ", seeded" : ", greedy");
      EXPECT_EQ(reused.stats.generated_tokens, reference.stats.generated_tokens) << k.name;
      EXPECT_EQ(reused.stats.stop_reason, reference.stats.stop_reason) << k.name;
      EXPECT_EQ(reference.stats.cached_tokens, 0);
      EXPECT_EQ(reused.stats.prompt_tokens, reference.stats.prompt_tokens);
      if (k.prompt == long_story) {
        EXPECT_EQ(reference.stats.stop_reason, StopReason::kContextFull);
      }
      // Reuse where each kind of layer allows it (a ring model may not
      // rewind far; a convolution model goes back to a checkpoint).
      const int n = reused.stats.prompt_tokens, cached = reused.stats.cached_tokens;
      EXPECT_LT(cached, n) << k.name;
      if (std::string(k.name) == "same prompt" && !has_conv_layers(c) && !has_rings(c)) {
        EXPECT_EQ(cached, n - 1) << k.name;
      }
      if (std::string(k.name).starts_with("extension")) {
        EXPECT_GT(cached, prompt_tokens(e, first) - 1) << k.name;
      }
      if (std::string(k.name) == "nothing in common") {
        EXPECT_LE(cached, 1) << k.name;  // BOS at most
      }
      if (std::string(k.name) == "after the context filled up" && !has_rings(c)) {
        EXPECT_GE(cached, n - 1 - (has_conv_layers(c) ? kInterval - 1 : 0)) << k.name;
      }
    }
  }
}

TEST_P(KvReuse, ReuseCanBeTurnedOff) {
  Engine e;
  ASSERT_TRUE(testing::load_engine(&e, file_, 1, kContext).ok());
  GenerateOptions g;
  g.max_tokens = 4;
  g.sampling.temperature = 0;
  const std::string prompt = "Once upon a time there was a little girl.";
  const Call first = generate(e, prompt, g);
  g.reuse_cache = false;
  const Call again = generate(e, prompt, g);
  EXPECT_EQ(again.text, first.text);
  EXPECT_EQ(again.stats.cached_tokens, 0);
}

INSTANTIATE_TEST_SUITE_P(Table, KvReuse, ::testing::ValuesIn(testing::architecture_list(/*decoders_only=*/true)),
                         testing::architecture_test_name);

}  // namespace
}  // namespace wllm
