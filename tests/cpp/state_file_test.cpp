// Saved states (cpp/engine/state_file.h), on every architecture of the table:
// a state saved by one engine and restored into another (other threads,
// another context size, its bytes fed in pieces of any size) continues with
// exactly the text the first engine gives, for an extension, the same prompt
// and a divergent one; then what the reader refuses, with kBadState and a
// message that says why: another model, a context too small, a truncated, a
// damaged or an extended state, another magic or version, tokens outside the
// vocabulary; and after a refusal the engine generates as with an empty cache.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/checksum.h"
#include "engine/engine.h"
#include "model/weights.h"
#include "quant/repack.h"
#include "synthetic_model.h"

namespace wllm {
namespace {

constexpr int kWindow = 8;
constexpr int kContext = 256;

// The state's bytes, its pieces joined.
std::vector<uint8_t> saved(Engine& e) {
  Result<StateWriter> w = e.save_state();
  EXPECT_TRUE(w.ok()) << w.status().message();
  std::vector<uint8_t> out;
  for (const std::span<const uint8_t> piece : w->pieces()) out.insert(out.end(), piece.begin(), piece.end());
  EXPECT_EQ(out.size(), w->size());
  return out;
}

// Restores `bytes` into e, fed in pieces of the lengths in `pieces` (cycled).
Status restore(Engine& e, const std::vector<uint8_t>& bytes, const std::vector<size_t>& pieces = {1 << 20}) {
  WLLM_ASSIGN_OR_RETURN(StateReader reader, e.load_state(bytes.size()));
  for (size_t at = 0, i = 0; at < bytes.size(); ++i) {
    const size_t n = std::min(pieces[i % pieces.size()], bytes.size() - at);
    WLLM_RETURN_IF_ERROR(reader.write(std::span<const uint8_t>(bytes.data() + at, n)));
    at += n;
  }
  return reader.finish();
}

struct Call {
  std::string text;
  GenerateStats stats;
};

Call generate(Engine& e, const std::string& prompt, int max_tokens = 16) {
  GenerateOptions g;
  g.max_tokens = max_tokens;
  g.sampling.temperature = 0.8f;
  g.sampling.seed = 5;
  Call call;
  Result<GenerateStats> r = e.generate(prompt, g, [&](std::string_view t) { call.text.append(t); });
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (r.ok()) call.stats = *r;
  return call;
}

const std::string kStory = "Once upon a time there was a little girl. She liked to play in the park with her dog.";

class StateFile : public testing::ArchitectureModelTest<kWindow, kContext> {};

TEST_P(StateFile, ARestoredStateContinuesWithTheSavingEnginesText) {
  // A prompt and its reply longer than a batch, past the sliding windows'
  // rings and a convolution checkpoint.
  std::string prompt;
  while (prompt.size() < 400) prompt += kStory + " ";
  const std::string extension = " Then the sun came out and";
  const std::string divergent = prompt.substr(0, 150) + " a big red ball";
  Engine saver;
  ASSERT_TRUE(testing::load_engine(&saver, file_, 2, kContext).ok());
  const Call first = generate(saver, prompt, 40);
  const std::vector<uint8_t> state = saved(saver);
  const int held = static_cast<int>(saver.model().sequence().size());
  ASSERT_GT(held, 64 + 8);
  // What the saving engine gives next, for three kinds of prompt.
  const std::string next_prompts[] = {prompt + first.text + extension, prompt, divergent};
  std::vector<Call> expected;
  for (const std::string& next : next_prompts) {
    Engine again;
    ASSERT_TRUE(testing::load_engine(&again, file_, 1, kContext).ok());
    ASSERT_TRUE(restore(again, state).ok());
    expected.push_back(generate(again, next));
    Engine empty;
    ASSERT_TRUE(testing::load_engine(&empty, file_, 1, kContext).ok());
    EXPECT_EQ(expected.back().text, generate(empty, next).text) << next;
  }
  // The extension reuses the prompt and the reply up to where its text,
  // tokenized again, takes other tokens.
  EXPECT_GE(expected[0].stats.cached_tokens, first.stats.prompt_tokens);
  // Restored into engines of other thread counts and context sizes, in
  // pieces of odd sizes: the same text, from the same cached prefix.
  for (const int context : {kContext, held + 60}) {
    for (const std::vector<size_t>& pieces : std::vector<std::vector<size_t>>{{1}, {7, 1000, 3}, {1 << 20}}) {
      if (pieces.size() == 1 && pieces[0] == 1 && context != kContext) continue;  // byte by byte once is enough
      for (size_t i = 0; i < expected.size(); ++i) {
        Engine restored;
        ASSERT_TRUE(testing::load_engine(&restored, file_, 2, context).ok());
        const Status s = restore(restored, state, pieces);
        ASSERT_TRUE(s.ok()) << s.message();
        EXPECT_EQ(restored.model().sequence(), saver.model().sequence());
        const Call call = generate(restored, next_prompts[i]);
        EXPECT_EQ(call.text, expected[i].text) << "context " << context << ", prompt " << i;
        EXPECT_EQ(call.stats.cached_tokens, expected[i].stats.cached_tokens) << "context " << context;
      }
    }
  }
}

TEST_P(StateFile, AnEmptyStateRestoresAnEmptyCache) {
  Engine e;
  ASSERT_TRUE(testing::load_engine(&e, file_, 1, kContext).ok());
  const std::vector<uint8_t> empty = saved(e);
  generate(e, kStory);
  ASSERT_TRUE(restore(e, empty).ok());
  EXPECT_TRUE(e.model().sequence().empty());
  EXPECT_EQ(generate(e, kStory).stats.cached_tokens, 0);
}

INSTANTIATE_TEST_SUITE_P(Table, StateFile, ::testing::ValuesIn(testing::architecture_list(/*decoders_only=*/true)),
                         testing::architecture_test_name);

class StateFileRefusals : public ::testing::Test {
 protected:
  void SetUp() override {
    file_ = testing::read_file_bytes(testing::synth_model("llama", kWindow, kContext));
    ASSERT_TRUE(testing::load_engine(&saver_, file_, 1, kContext).ok());
    generate(saver_, kStory + " " + kStory);
    state_ = saved(saver_);
    n_tokens_ = static_cast<int>(saver_.model().sequence().size());
  }
  void TearDown() override { testing::remove_scratch_files(); }

  // Restores `bytes` into a fresh engine (context `context`) and expects
  // kBadState with `words` in the message; then the engine generates what an
  // empty cache gives.
  void expect_refused(const std::vector<uint8_t>& bytes, const std::string& words, int context = kContext) {
    Engine e;
    ASSERT_TRUE(testing::load_engine(&e, file_, 1, context).ok());
    generate(e, kStory);  // something in the cache to lose
    const Status s = restore(e, bytes, {1000});
    EXPECT_EQ(s.code(), ErrorCode::kBadState) << words;
    EXPECT_NE(s.message().find(words), std::string::npos) << s.message();
    Engine empty;
    ASSERT_TRUE(testing::load_engine(&empty, file_, 1, context).ok());
    const std::string prompt = "The dog ran";
    const Call after = generate(e, prompt);
    EXPECT_EQ(after.text, generate(empty, prompt).text) << words;
  }

  std::vector<uint8_t> file_;
  Engine saver_;
  std::vector<uint8_t> state_;
  int n_tokens_ = 0;
};

TEST_F(StateFileRefusals, AnotherModel) {
  const std::vector<uint8_t> other = testing::read_file_bytes(testing::synth_model("llama", kWindow, kContext, 4));
  Engine e;
  ASSERT_TRUE(testing::load_engine(&e, other, 1, kContext).ok());
  EXPECT_NE(e.model_id(), saver_.model_id());
  const Status s = restore(e, state_);
  EXPECT_EQ(s.code(), ErrorCode::kBadState);
  EXPECT_NE(s.message().find("saved from another model"), std::string::npos) << s.message();
}

TEST_F(StateFileRefusals, AContextTooSmall) {
  expect_refused(state_, "the state holds " + std::to_string(n_tokens_) + " tokens but the context holds 32", 32);
}

TEST_F(StateFileRefusals, TruncatedDamagedOrExtended) {
  for (const size_t size : {size_t{0}, size_t{5}, size_t{31}, size_t{40}, state_.size() / 2, state_.size() - 1}) {
    const std::vector<uint8_t> cut(state_.begin(), state_.begin() + size);
    expect_refused(cut, "truncated");
  }
  std::vector<uint8_t> longer = state_;
  longer.push_back(0);
  expect_refused(longer, "but its header describes");
  for (const size_t at : {state_.size() - 300, state_.size() - 1}) {  // in the keys, in the checksum
    std::vector<uint8_t> damaged = state_;
    damaged[at] ^= 0x10;
    expect_refused(damaged, "the state is damaged");
  }
}

TEST_F(StateFileRefusals, AnotherMagicVersionOrVocabulary) {
  std::vector<uint8_t> bytes = state_;
  bytes[0] = 'X';
  expect_refused(bytes, "not a saved state");
  bytes = state_;
  bytes[8] = 2;
  expect_refused(bytes, "format version 2");
  bytes = state_;
  bytes[32 + 4 * 3 + 1] = 0x7f;  // token 3 becomes a large id
  expect_refused(bytes, "token 3 of the state is id");
}

// Wasm builds repack weights at load (quant/repack.h); the id is the file's
// checksum all the same: each repacked tensor is read back unpacked.
TEST(ModelId, IsTheFilesChecksumWhateverWasRepacked) {
  const std::string path = testing::scratch_file("q4_0.gguf");
  ASSERT_EQ(testing::run_cli("synth --shape 64x2:4/2:128 --type q4_0 --ctx 64 --vocab " + testing::shared_models() +
                             "/stories260K.gguf -o " + path).exit_code, 0);
  const std::vector<uint8_t> bytes = testing::read_file_bytes(path);
  const GgufFile file = GgufFile::parse(bytes).value();
  const ModelConfig c = load_config(file).value();
  std::vector<uint8_t> arena(bytes.begin() + file.data_offset(), bytes.begin() + file.data_offset() + file.data_size());
  ModelWeights w = bind_weights(file, c, arena.data()).value();
  Checksum64 whole;
  whole.update(file.header_bytes().data(), file.header_bytes().size());
  whole.update(arena.data(), arena.size());
  const uint64_t expected = whole.digest();
  EXPECT_EQ(file_checksum(file, c, &w, arena.data()), expected);
  // Repack two of layer 0's matrices as a wasm build would (the reference
  // repacked types: the same layouts the SIMD kernels read).
  int count = 0;
  const RepackedType* types = reference_repacked_types(&count);
  const RepackedType* q4_0 = nullptr;
  for (int i = 0; i < count; ++i) {
    if (types[i].source == TensorType::kQ4_0 && !q4_0) q4_0 = &types[i];
  }
  ASSERT_NE(q4_0, nullptr);
  // w_down's first half only: the rows after a tensor's last repacked group stay as they are.
  for (Tensor* t : {&w.layers[0].w_up, &w.layers[0].w_down}) {
    ASSERT_EQ(t->traits->type, TensorType::kQ4_0);
    t->repacked = q4_0;
    t->repacked_rows = t == &w.layers[0].w_up ? t->rows() : t->rows() / 2;
    ASSERT_EQ(t->repacked_rows % q4_0->rows, 0);
    q4_0->repack(arena.data() + (t->data - arena.data()), t->cols(), t->repacked_rows);
  }
  Checksum64 changed;
  changed.update(arena.data(), arena.size());
  EXPECT_NE(changed.digest(), Checksum64().digest());  // (the arena did change)
  EXPECT_EQ(file_checksum(file, c, &w, arena.data()), expected);
  testing::remove_scratch_files();
}

TEST(ModelId, NamesTheHeaderAndTheWeights) {
  const std::vector<uint8_t> file = testing::read_file_bytes(testing::synth_model("llama", kWindow, kContext));
  Engine one, two;
  ASSERT_TRUE(testing::load_engine(&one, file, 1, kContext).ok());
  ASSERT_TRUE(testing::load_engine(&two, file, 2, 64).ok());
  EXPECT_EQ(one.model_id(), two.model_id());  // neither threads nor the context change it
  const GgufFile parsed = GgufFile::parse(file).value();
  std::vector<uint8_t> changed = file;
  changed[parsed.data_offset() + parsed.data_size() / 2] ^= 1;  // a byte of some tensor's data
  Engine other;
  ASSERT_TRUE(testing::load_engine(&other, changed, 1, kContext).ok());
  EXPECT_NE(other.model_id(), one.model_id());
  testing::remove_scratch_files();
}

}  // namespace
}  // namespace wllm
