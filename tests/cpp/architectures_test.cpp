// Every architecture of the table (cpp/model/architecture.h), on a small
// synthetic model that `wasm-llm synth` writes in its structure: a batch gives
// the bits of token-by-token evaluation, the thread count changes nothing,
// sliding windows are crossed, the KV cache of local layers is the window's,
// the buffers (convolution state included) are what was planned, and a
// missing or misshapen tensor is an error that names it. A new row of the
// table is tested here without edits. Then the keys and variants of some.
#include <gtest/gtest.h>

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

// The file rewritten: metadata key `drop_key` dropped and `set` applied, then
// tensor `tensor` dropped (shape empty) or reshaped.
std::vector<uint8_t> rewritten(const std::vector<uint8_t>& bytes, const std::string& drop_key,
                               const std::function<void(GgufWriter&)>& set, const std::string& tensor,
                               std::vector<int64_t> shape) {
  const GgufFile file = GgufFile::parse(bytes).value();
  GgufWriter w;
  for (const GgufKV& kv : file.kvs()) {
    if (kv.key != drop_key) EXPECT_TRUE(w.copy_kv(kv).ok());
  }
  if (set) set(w);
  for (const GgufTensorInfo& t : file.tensors()) {
    const uint8_t* data = bytes.data() + file.data_offset() + t.offset;
    std::vector<int64_t> ne(t.ne, t.ne + t.n_dims);
    if (t.name == tensor) {
      if (shape.empty()) continue;
      ne = shape;
    }
    EXPECT_TRUE(w.add_tensor(t.name, t.type, ne, std::span<const uint8_t>(data, t.n_bytes)).ok());
  }
  return w.write_to_memory().value();
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

TEST_P(Architectures, BatchesThreadsAndTokenByTokenGiveTheSameBits) {
  const std::vector<uint8_t> file = testing::read_file_bytes(synth_model(GetParam()));
  ASSERT_FALSE(file.empty());
  const std::vector<int32_t> tokens = test_tokens();
  std::vector<float> one_thread, two_threads;
  Engine e1, e2;
  ASSERT_TRUE(load(&e1, file, 1).ok());
  ASSERT_TRUE(load(&e2, file, 2).ok());
  EXPECT_EQ(e1.config().arch_name, GetParam());
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
  for (int l = 0; l < c.n_layers; ++l) {
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
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

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
                                "lfm2.attention.layer_norm_rms_epsilon"}) {
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

}  // namespace
}  // namespace wllm
