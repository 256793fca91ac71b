// Every architecture of the table (cpp/model/architecture.h), on a small
// synthetic model that `wasm-llm synth` writes in its structure: a batch gives
// the bits of token-by-token evaluation (an encoder's packed texts, the bits
// of each text alone), the thread count changes nothing,
// sliding windows are crossed, the KV cache of local layers is the window's,
// the buffers (convolution state included) are what was planned, and a
// missing or misshapen tensor is an error that names it. A new row of the
// table is tested here without edits. Then the keys and variants of some.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "synthetic_model.h"
#include "engine/engine.h"
#include "gguf/gguf_writer.h"
#include "model/architecture.h"

namespace wllm {
namespace {

using testing::remove_scratch_files;

// Changes a tensor's name or shape (ne[0] first); false drops it.
using TensorEdit = std::function<bool(std::string* name, std::vector<int64_t>* ne)>;

// The file in a writer, to change and write again: metadata key `drop_key`
// dropped and `set` applied, each tensor passed through `edit`.
GgufWriter rewriter(const std::vector<uint8_t>& bytes, const std::string& drop_key,
                    const std::function<void(GgufWriter&)>& set, const TensorEdit& edit) {
  const GgufFile file = GgufFile::parse(bytes).value();
  GgufWriter w;
  for (const GgufKV& kv : file.kvs()) {
    if (kv.key == drop_key) continue;
    EXPECT_TRUE(w.copy_kv(kv).ok());
  }
  if (set) set(w);
  for (const GgufTensorInfo& t : file.tensors()) {
    const uint8_t* data = bytes.data() + file.data_offset() + t.offset;
    std::string name(t.name);
    std::vector<int64_t> ne(t.ne, t.ne + t.n_dims);
    if (edit && !edit(&name, &ne)) continue;
    EXPECT_TRUE(w.add_tensor(name, t.type, ne, std::span<const uint8_t>(data, t.n_bytes)).ok());
  }
  return w;
}

// The file rewritten: metadata key `drop_key` dropped and `set` applied, then
// tensor `tensor` dropped (shape empty) or reshaped.
std::vector<uint8_t> rewritten(const std::vector<uint8_t>& bytes, const std::string& drop_key,
                               const std::function<void(GgufWriter&)>& set, const std::string& tensor,
                               std::vector<int64_t> shape) {
  return rewriter(bytes, drop_key, set, [&](std::string* name, std::vector<int64_t>* ne) {
           if (*name != tensor) return true;
           *ne = shape;
           return !shape.empty();
         })
      .write_to_memory()
      .value();
}

constexpr int kWindow = 8;     // crossed many times by kTokens
constexpr int kTokens = 150;   // more than two batches, past the ring of local layers
constexpr int kContext = 256;

std::string synth_model(const std::string& arch) { return testing::synth_model(arch, kWindow, kContext); }

Status load(Engine* e, const std::vector<uint8_t>& file, int threads) {
  return testing::load_engine(e, file, threads, kContext);
}

std::vector<int32_t> test_tokens() {
  std::vector<int32_t> tokens;
  for (int i = 0; i < kTokens; ++i) tokens.push_back(1 + (i * 37) % 500);
  return tokens;
}

// The file with one tensor dropped (shape empty) or reshaped.
std::vector<uint8_t> with_tensor_changed(const std::vector<uint8_t>& bytes, const std::string& name,
                                         std::vector<int64_t> shape) {
  return rewritten(bytes, "", {}, name, std::move(shape));
}

// The file with metadata key `key` dropped, then `set` applied to the writer.
std::vector<uint8_t> with_metadata_changed(const std::vector<uint8_t>& bytes, const std::string& key,
                                           const std::function<void(GgufWriter&)>& set = {}) {
  return rewritten(bytes, key, set, "", {});
}

class Architectures : public ::testing::TestWithParam<std::string> {
 protected:
  void TearDown() override { remove_scratch_files(); }
};

// An encoder's embeddings of texts packed in one pass are each text's alone,
// and the same with one thread and two; they are finite and differ.
void expect_encoder_bits(Engine& e1, Engine& e2) {
  std::string long_text;
  for (int i = 0; i < 18; ++i) long_text += "Once upon a time there was a girl. ";
  const std::vector<std::string> texts = {"Once upon a time", "Hi", long_text, "She liked to play in the park."};
  const Result<std::vector<std::vector<float>>> one_thread = e1.embed(texts, {});
  const Result<std::vector<std::vector<float>>> two_threads = e2.embed(texts, {});
  ASSERT_TRUE(one_thread.ok()) << one_thread.status().message();
  ASSERT_TRUE(two_threads.ok()) << two_threads.status().message();
  EXPECT_EQ(*one_thread, *two_threads);
  for (size_t i = 0; i < texts.size(); ++i) {
    const Result<std::vector<std::vector<float>>> alone = e2.embed({texts[i]}, {});
    ASSERT_TRUE(alone.ok());
    EXPECT_EQ(alone->at(0), two_threads->at(i)) << "text " << i;
    for (const float v : alone->at(0)) ASSERT_TRUE(std::isfinite(v));
  }
  EXPECT_NE(two_threads->at(0), two_threads->at(1));
}

TEST_P(Architectures, BatchesThreadsAndTokenByTokenGiveTheSameBits) {
  const std::vector<uint8_t> file = testing::read_file_bytes(synth_model(GetParam()));
  ASSERT_FALSE(file.empty());
  const std::vector<int32_t> tokens = test_tokens();
  std::vector<float> one_thread, two_threads;
  Engine e1, e2;
  ASSERT_TRUE(load(&e1, file, 1).ok());
  ASSERT_TRUE(load(&e2, file, 2).ok());
  EXPECT_EQ(e1.config().arch_name, GetParam());
  if (e1.config().encoder) return expect_encoder_bits(e1, e2);
  ASSERT_TRUE(e1.eval_logits(tokens, &one_thread).ok());
  ASSERT_TRUE(e2.eval_logits(tokens, &two_threads).ok());
  EXPECT_EQ(one_thread, two_threads);  // bit-identical, not merely close
  const int n_vocab = e1.config().n_vocab;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const float* single = e2.model().forward(tokens[i], static_cast<int>(i));
    ASSERT_EQ(std::memcmp(single, two_threads.data() + i * n_vocab, n_vocab * sizeof(float)), 0) << "position " << i;
  }
  // The logits are a real distribution: finite, and not all equal.
  float lo = one_thread[0], hi = one_thread[0];
  for (const float v : one_thread) {
    ASSERT_TRUE(std::isfinite(v));
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_GT(hi - lo, 1.0f);
}

TEST_P(Architectures, LocalLayersKeepOnlyTheirWindowInTheCache) {
  const std::vector<uint8_t> file = testing::read_file_bytes(synth_model(GetParam()));
  Engine e;
  ASSERT_TRUE(load(&e, file, 1).ok());
  const ModelConfig& c = e.config();
  int64_t expected = 0;
  for (int l = 0; l < c.n_layers && !c.encoder; ++l) {  // an encoder has no cache
    if (!c.layers[l].attention) continue;
    const int slots = c.layers[l].window > 0 ? std::min(kContext, c.layers[l].window + Transformer::kMaxBatch - 1)
                                             : kContext;
    expected += 2LL * slots * c.layer_kv_dim(l) * 2;
  }
  EXPECT_EQ(e.memory().kv_cache, static_cast<uint64_t>(expected));
  EXPECT_EQ(e.memory().kv_cache, static_cast<uint64_t>(Transformer::plan_kv_cache_bytes(c, kContext)));
}

TEST_P(Architectures, AMissingOrMisshapenTensorIsNamed) {
  const std::vector<uint8_t> file = testing::read_file_bytes(synth_model(GetParam()));
  const GgufFile parsed = GgufFile::parse(file).value();
  // The last tensor of layer 1, and the first matrix of layer 2.
  std::string last_of_layer1, matrix_of_layer2;
  for (const GgufTensorInfo& t : parsed.tensors()) {
    if (t.name.starts_with("blk.1.")) last_of_layer1 = std::string(t.name);
    if (matrix_of_layer2.empty() && t.name.starts_with("blk.2.") && t.n_dims == 2) matrix_of_layer2 = t.name;
  }
  ASSERT_FALSE(last_of_layer1.empty());
  ASSERT_FALSE(matrix_of_layer2.empty());
  {
    Engine e;
    const Status s = load(&e, with_tensor_changed(file, last_of_layer1, {}), 1);
    EXPECT_EQ(s.code(), ErrorCode::kBadFile);
    EXPECT_NE(s.message().find("'" + last_of_layer1 + "' is missing"), std::string::npos) << s.message();
  }
  {
    const GgufTensorInfo* t = parsed.find_tensor(matrix_of_layer2);
    Engine e;
    const Status s = load(&e, with_tensor_changed(file, matrix_of_layer2, {t->ne[0], t->ne[1] / 2, 2}), 1);
    EXPECT_EQ(s.code(), ErrorCode::kBadFile);
    EXPECT_NE(s.message().find("'" + matrix_of_layer2 + "' has shape"), std::string::npos) << s.message();
  }
}

TEST_P(Architectures, BuffersTakeWhatWasPlanned) {
  const std::vector<uint8_t> file = testing::read_file_bytes(synth_model(GetParam()));
  for (const int threads : {1, 2}) {
    Engine e;
    ASSERT_TRUE(load(&e, file, threads).ok());
    EXPECT_EQ(e.memory().buffers, static_cast<uint64_t>(Transformer::plan_buffer_bytes(e.config(), kContext, threads)));
  }
}

INSTANTIATE_TEST_SUITE_P(Table, Architectures, ::testing::ValuesIn(testing::architecture_list()),
                         testing::architecture_test_name);

// Status of loading `arch`'s synthetic model with metadata key `key` dropped
// and `set` applied.
Status load_with_metadata(const std::string& arch, const std::string& key,
                          const std::function<void(GgufWriter&)>& set = {}) {
  const std::vector<uint8_t> file = testing::read_file_bytes(synth_model(arch));
  Engine e;
  const Status s = load(&e, with_metadata_changed(file, key, set), 1);
  remove_scratch_files();
  return s;
}

TEST(ArchitectureKeys, TheOnesLlamaCppRequiresAreRequired) {
  for (const std::string key : {"gpt2.attention.layer_norm_epsilon", "lfm2.shortconv.l_cache",
                                "lfm2.attention.layer_norm_rms_epsilon", "phi3.attention.layer_norm_rms_epsilon",
                                "granite.attention.layer_norm_rms_epsilon", "granite.logit_scale"}) {
    const Status s = load_with_metadata(key.substr(0, key.find('.')), key);
    EXPECT_EQ(s.code(), ErrorCode::kBadFile) << key;
    EXPECT_NE(s.message().find("metadata key '" + key + "' is missing"), std::string::npos) << s.message();
  }
}

// lfm2's sliding-window and bidirectional files (an audio tokenizer, embedding
// models) compute something else: refused, not run as the text model.
TEST(Lfm2, VariantsThatAreNotTextGeneratorsAreRefused) {
  Status s = load_with_metadata("lfm2", "", [](GgufWriter& w) {
    ASSERT_TRUE(w.set_u32("lfm2.attention.sliding_window", 4).ok());
  });
  EXPECT_EQ(s.code(), ErrorCode::kUnsupported);
  EXPECT_NE(s.message().find("sliding-window"), std::string::npos) << s.message();
  s = load_with_metadata("lfm2", "", [](GgufWriter& w) {
    ASSERT_TRUE(w.set_bool("lfm2.attention.causal", false).ok());
  });
  EXPECT_EQ(s.code(), ErrorCode::kUnsupported);
  EXPECT_NE(s.message().find("bidirectional"), std::string::npos) << s.message();
  // A causal flag that says causal changes nothing.
  s = load_with_metadata("lfm2", "", [](GgufWriter& w) {
    ASSERT_TRUE(w.set_bool("lfm2.attention.causal", true).ok());
  });
  EXPECT_TRUE(s.ok()) << s.message();
}

// Logits of test_tokens() from `file` at kContext positions of context.
std::vector<float> logits_of(const std::vector<uint8_t>& file) {
  Engine e;
  std::vector<float> logits;
  EXPECT_TRUE(load(&e, file, 1).ok());
  EXPECT_TRUE(e.eval_logits(test_tokens(), &logits).ok());
  return logits;
}

// LongRoPE (phi3's synth model: 256 positions of context from 8 pretrained):
// a context beyond the pretrained one rotates with rope_factors_long, one
// within it with rope_factors_short, as llama.cpp chooses them.
TEST(Phi3, TheContextChoosesTheLongOrShortFactors) {
  const std::vector<uint8_t> file = testing::read_file_bytes(synth_model("phi3"));
  remove_scratch_files();
  const auto pretrained = [](uint32_t n) {
    return [n](GgufWriter& w) { ASSERT_TRUE(w.set_u32("phi3.rope.scaling.original_context_length", n).ok()); };
  };
  const std::vector<float> long_factors = logits_of(file);
  EXPECT_EQ(logits_of(with_metadata_changed(file, "", pretrained(kContext - 1))), long_factors);
  const std::vector<float> short_factors = logits_of(with_metadata_changed(file, "", pretrained(kContext)));
  EXPECT_NE(short_factors, long_factors);
  // The file with the two sets swapped, long chosen: the short set's logits.
  const std::vector<uint8_t> swapped =
      rewriter(file, "", {}, [](std::string* name, std::vector<int64_t>*) {
        if (*name == "rope_factors_long.weight") {
          *name = "rope_factors_short.weight";
        } else if (*name == "rope_factors_short.weight") {
          *name = "rope_factors_long.weight";
        }
        return true;
      }).write_to_memory().value();
  EXPECT_EQ(logits_of(swapped), short_factors);
}

// rope.scaling.finetuned = false switches Granite's RoPE off; its MoE,
// vision and biased variants are refused, not run as the dense text model.
TEST(Granite, RopeSwitchAndRefusedVariants) {
  const std::vector<uint8_t> file = testing::read_file_bytes(synth_model("granite"));
  remove_scratch_files();
  const std::vector<float> rotated = logits_of(file);
  const auto finetuned = [](bool on) {
    return [on](GgufWriter& w) { ASSERT_TRUE(w.set_bool("granite.rope.scaling.finetuned", on).ok()); };
  };
  EXPECT_EQ(logits_of(with_metadata_changed(file, "", finetuned(true))), rotated);
  EXPECT_NE(logits_of(with_metadata_changed(file, "", finetuned(false))), rotated);

  const auto refused = [](const std::vector<uint8_t>& bytes, const std::string& what) {
    Engine e;
    const Status s = load(&e, bytes, 1);
    EXPECT_EQ(s.code(), ErrorCode::kUnsupported) << what;
    EXPECT_NE(s.message().find(what), std::string::npos) << s.message();
  };
  refused(with_metadata_changed(file, "",
                                [](GgufWriter& w) { ASSERT_TRUE(w.set_u32("granite.expert_count", 8).ok()); }),
          "8 experts");
  refused(with_metadata_changed(file, "", [](GgufWriter& w) {
            const int32_t mapping[] = {-1, 1, -1};
            ASSERT_TRUE(w.set_array_i32("granite.deepstack_mapping", mapping).ok());
          }),
          "deepstack");
  GgufWriter biased = rewriter(file, "", {}, {});
  const std::vector<float> bias(64, 0.5f);
  const int64_t shape[] = {64};
  ASSERT_TRUE(biased.add_tensor("blk.0.ffn_down.bias", TensorType::kF32, shape,
                                std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bias.data()), 256)).ok());
  refused(biased.write_to_memory().value(), "'blk.0.ffn_down.bias'");
}

TEST(ArchitectureTable, AnUnknownArchitectureIsNamedWithTheSupportedOnes) {
  GgufWriter w;
  ASSERT_TRUE(w.set_string("general.architecture", "bogus").ok());
  ASSERT_TRUE(w.set_array_strings("tokenizer.ggml.tokens", {"a", "b"}).ok());
  const std::vector<uint8_t> file = w.write_to_memory().value();
  Engine e;
  const Status s = e.begin_load(file, file.size(), {});
  EXPECT_EQ(s.code(), ErrorCode::kUnsupported);
  EXPECT_NE(s.message().find("architecture 'bogus' is not supported (supported: " + architecture_names() + ")"),
            std::string::npos)
      << s.message();
  for (const std::string& name : testing::architecture_list()) EXPECT_NE(find_architecture(name), nullptr) << name;
}

TEST(ArchitectureTable, AKnownUnsupportedEncoderSaysWhatItIs) {
  GgufWriter w;
  ASSERT_TRUE(w.set_string("general.architecture", "nomic-bert-moe").ok());
  ASSERT_TRUE(w.set_array_strings("tokenizer.ggml.tokens", {"a", "b"}).ok());
  const std::vector<uint8_t> file = w.write_to_memory().value();
  Engine e;
  const Status s = e.begin_load(file, file.size(), {});
  EXPECT_EQ(s.code(), ErrorCode::kUnsupported);
  EXPECT_NE(s.message().find("architecture 'nomic-bert-moe' (nomic-embed-text-v2, a mixture-of-experts encoder) is "
                             "not supported"), std::string::npos) << s.message();
}

// An encoder has no output layer: it neither generates nor gives logits,
// and its rerankers score, its others refuse to.
TEST(Encoders, GenerateOnlyEmbeddings) {
  const std::vector<uint8_t> file = testing::read_file_bytes(synth_model("bert"));
  Engine e;
  ASSERT_TRUE(load(&e, file, 1).ok());
  std::vector<float> logits;
  EXPECT_EQ(e.eval_logits({1, 2, 3}, &logits).code(), ErrorCode::kUnsupported);
  EXPECT_EQ(e.start_generation("Hi", {}).code(), ErrorCode::kUnsupported);
  EXPECT_EQ(e.rank("query", {"document"}).status().code(), ErrorCode::kUnsupported);
  EXPECT_EQ(e.embedding_pooling(std::nullopt), Pooling::kCls);
  const Result<std::vector<std::vector<float>>> v = e.embed({"a text"}, {});
  ASSERT_TRUE(v.ok());
  double norm = 0;
  for (const float x : v->at(0)) norm += double{x} * x;
  EXPECT_NEAR(norm, 1.0, 1e-6);  // L2-normalised by default
  std::string too_long;
  for (int i = 0; i < 300; ++i) too_long += "a ";
  const Status full = e.embed({"fine", too_long}, {}).status();
  EXPECT_EQ(full.code(), ErrorCode::kContextFull);
  EXPECT_NE(full.message().find("text 1"), std::string::npos) << full.message();
  remove_scratch_files();
}

// bert files name their token types (llama.cpp refuses them otherwise).
TEST(Encoders, BertNeedsItsTokenTypeCount) {
  const Status s = load_with_metadata("bert", "tokenizer.ggml.token_type_count");
  EXPECT_EQ(s.code(), ErrorCode::kBadFile);
  EXPECT_NE(s.message().find("token_type_count"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace wllm
