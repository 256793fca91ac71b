// The model formats besides one GGUF file, loaded through the engine's
// streaming path (engine/model_layout.h): llama2.c checkpoints with their
// tokenizer files, and split GGUF models. Each must give exactly what the
// same model as one GGUF file gives; each broken or lying input must be a
// clear error.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "gguf/gguf_split.h"
#include "gguf/gguf_writer.h"
#include "llama2c/checkpoint.h"
#include "llama2c/tokenizer_file.h"
#include "memory_model.h"

namespace wllm {
namespace {

using Bytes = std::vector<uint8_t>;
using testing::load_files;

const std::string kModels = WLLM_SHARED_MODELS;

Bytes read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

const Bytes& gguf() {
  static const Bytes b = read_all(kModels + "/stories260K.gguf");
  return b;
}
const Bytes& checkpoint() {
  static const Bytes b = read_all(kModels + "/llama2c/stories260K.bin");
  return b;
}
const Bytes& tok512() {
  static const Bytes b = read_all(kModels + "/llama2c/tok512.bin");
  return b;
}

LoadOptions options(std::span<const uint8_t> tokenizer = {}) {
  LoadOptions o;
  o.n_ctx = 256;
  o.n_threads = 1;
  o.tokenizer = tokenizer;
  return o;
}

Status load(Engine* e, std::vector<std::span<const uint8_t>> files, std::span<const uint8_t> tokenizer = {}) {
  return load_files(e, files, options(tokenizer));
}

std::string generate(Engine& e, const GenerateOptions& g) {
  std::string out;
  const Result<GenerateStats> r = e.generate("Once upon a time", g, [&](std::string_view t) { out.append(t); });
  EXPECT_TRUE(r.ok()) << r.status().message();
  return out;
}

GenerateOptions greedy() {
  GenerateOptions g;
  g.max_tokens = 200;
  g.sampling.temperature = 0;
  return g;
}

GenerateOptions seeded() {
  GenerateOptions g;
  g.max_tokens = 200;
  g.sampling.temperature = 0.8f;
  g.sampling.seed = 42;
  return g;
}

std::vector<float> logits(Engine& e) {
  std::vector<float> out;
  EXPECT_TRUE(e.eval_logits({1, 403, 407, 261, 378, 286, 389, 300, 2, 511}, &out).ok());
  return out;
}

void expect_error(const Status& s, ErrorCode code, const std::string& part) {
  EXPECT_EQ(s.code(), code) << s.message();
  EXPECT_NE(s.message().find(part), std::string::npos) << "'" << s.message() << "' lacks '" << part << "'";
}

// ---- llama2.c ----

int32_t header_field(const Bytes& b, int i) {
  int32_t v;
  std::memcpy(&v, b.data() + 4 * i, 4);
  return v;
}
void set_header_field(Bytes* b, int i, int32_t v) { std::memcpy(b->data() + 4 * i, &v, 4); }

TEST(Llama2c, StoriesGivesTheGgufsTextLogitsAndTokens) {
  Engine from_gguf, from_bin;
  ASSERT_TRUE(load(&from_gguf, {gguf()}).ok());
  const Status s = load(&from_bin, {checkpoint()}, tok512());
  ASSERT_TRUE(s.ok()) << s.message();
  // The same model: shapes, the checkpoint's own training context, the vocabulary.
  const ModelConfig& a = from_gguf.config();
  const ModelConfig& b = from_bin.config();
  EXPECT_EQ(b.dim, a.dim);
  EXPECT_EQ(b.n_layers, a.n_layers);
  EXPECT_EQ(b.n_kv_heads, a.n_kv_heads);
  EXPECT_EQ(b.ffn_dim, a.ffn_dim);
  EXPECT_EQ(b.rope_dims, a.rope_dims);
  EXPECT_EQ(b.n_ctx_train, 512);  // seq_len (the GGUF's converter wrote 2048)
  EXPECT_TRUE(b.tied_output);
  for (const char* text : {"Once upon a time", " hello  world\n", "Lily <s> </s> 123 \xc3\xa9 \xf0\x9f\x98\x80", ""}) {
    EXPECT_EQ(from_bin.tokenizer().encode(text, true, true), from_gguf.tokenizer().encode(text, true, true)) << text;
  }
  for (int32_t id = 0; id < 512; ++id) {
    ASSERT_EQ(from_bin.tokenizer().token_text(id), from_gguf.tokenizer().token_text(id)) << id;
  }
  EXPECT_EQ(logits(from_bin), logits(from_gguf));
  const std::string text = generate(from_gguf, greedy());
  EXPECT_GT(text.size(), 200u);
  EXPECT_EQ(generate(from_bin, greedy()), text);
  EXPECT_EQ(generate(from_bin, seeded()), generate(from_gguf, seeded()));
}

// stories260K with a classifier of its own: scale 2 · the embedding, so the
// logits are exactly twice the shared model's.
Bytes with_own_classifier(float scale) {
  Bytes b = checkpoint();
  set_header_field(&b, 5, -header_field(b, 5));
  const size_t embedding_bytes = 512 * 64 * 4;
  std::vector<float> wcls(512 * 64);
  std::memcpy(wcls.data(), checkpoint().data() + kLlama2cHeaderBytes, embedding_bytes);
  for (float& w : wcls) w *= scale;
  const auto* p = reinterpret_cast<const uint8_t*>(wcls.data());
  b.insert(b.end(), p, p + embedding_bytes);
  return b;
}

TEST(Llama2c, AnOwnClassifierIsUsed) {
  Engine shared, own;
  ASSERT_TRUE(load(&shared, {checkpoint()}, tok512()).ok());
  const Bytes file = with_own_classifier(2.0f);
  const Status s = load(&own, {file}, tok512());
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_FALSE(own.config().tied_output);
  std::vector<float> want = logits(shared);
  for (float& v : want) v *= 2;
  EXPECT_EQ(logits(own), want);
}

TEST(Llama2c, TensorsLieWhereRunCReadsThem) {
  const Result<Llama2cConfig> c = parse_llama2c_header(checkpoint());
  ASSERT_TRUE(c.ok()) << c.status().message();
  const std::vector<Llama2cTensor> tensors = llama2c_tensors(*c);
  ASSERT_EQ(tensors.size(), 47u);  // no output.weight: shared
  EXPECT_EQ(tensors[0].name, "token_embd.weight");
  EXPECT_EQ(tensors[0].file_offset, 28u);
  EXPECT_EQ(tensors[1].name, "output_norm.weight");
  // rms_final sits right before the RoPE tables (seq_len 512 x head_size 8 floats), which end the file.
  EXPECT_EQ(tensors[1].file_offset + tensors[1].n_bytes + 512 * 8 * 4, checkpoint().size());
  EXPECT_EQ(tensors[2].name, "blk.0.attn_q.weight");
  EXPECT_EQ(tensors[2].file_offset, 28u + 4 * (512 * 64 + 5 * 64));  // after the embedding and rms_att
  EXPECT_EQ((std::vector<int64_t>{64, 32}), tensors[3].shape);       // attn_k: dim -> kv_dim
}

TEST(Llama2c, TokenizerFilesBesideAreNamedAsLlama2cNamesThem) {
  const Result<Llama2cConfig> c = parse_llama2c_header(checkpoint());
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(llama2c_tokenizer_names(*c), (std::vector<std::string>{"tokenizer.bin", "tok512.bin"}));
  Engine e;
  LayoutNeeds needs;
  const FilePrefix file{checkpoint(), checkpoint().size()};
  expect_error(e.begin_load({&file, 1}, options(), &needs), ErrorCode::kInvalidArgument, "needs its tokenizer");
  EXPECT_EQ(needs.tokenizer_files, (std::vector<std::string>{"tokenizer.bin", "tok512.bin"}));
}

TEST(Llama2c, TokenizerTokensFollowLlamaCppsConverter) {
  const Result<Llama2cVocab> v = read_llama2c_tokenizer(tok512(), 512);
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(v->texts[0], "<unk>");
  EXPECT_EQ(v->texts[1], "<s>");
  EXPECT_EQ(v->texts[2], "</s>");
  EXPECT_EQ((std::vector<int32_t>(v->types.begin(), v->types.begin() + 4)), (std::vector<int32_t>{2, 3, 3, 6}));
  EXPECT_EQ(v->texts[3], "<0x00>");
  // The Llama 2 vocabulary of tokenizer.bin is for 32000 tokens, not 512.
  const Bytes llama2 = read_all(kModels + "/llama2c/tokenizer.bin");
  expect_error(read_llama2c_tokenizer(llama2, 512).status(), ErrorCode::kBadFile, "follow the model's 512 tokens");
  const Result<Llama2cVocab> big = read_llama2c_tokenizer(llama2, 32000);
  ASSERT_TRUE(big.ok()) << big.status().message();
  EXPECT_EQ(big->texts[29871], "\xe2\x96\x81");  // a space piece: U+2581 again
}

TEST(Llama2c, BrokenCheckpointsAreClearErrors) {
  Engine e;
  // Truncated anywhere: in the header, in the weights, one byte short.
  for (size_t size : {size_t(10), size_t(27), size_t(1000), checkpoint().size() - 1}) {
    const Bytes cut(checkpoint().begin(), checkpoint().begin() + size);
    const Status s = load(&e, {cut}, tok512());
    EXPECT_EQ(s.code(), ErrorCode::kBadFile) << size << ": " << s.message();
  }
  const Bytes cut(checkpoint().begin(), checkpoint().end() - 4);
  expect_error(load(&e, {cut}, tok512()), ErrorCode::kBadFile, "take 1056540 bytes, but the file has 1056536 (truncated?)");
  Bytes longer = checkpoint();
  longer.push_back(0);
  expect_error(load(&e, {longer}, tok512()), ErrorCode::kBadFile, "but the file has 1056541");
  // A header that lies about shapes.
  for (auto [field, value, message] : {std::tuple{3, 7, "do not split dim 64"}, {4, 3, "kv heads do not divide"},
                                       {4, 0, "its n_kv_heads would be 0"}, {5, INT32_MIN, "its vocab_size would be"},
                                       {2, 6, "take"}, {0, -64, "its dim would be -64"}}) {
    Bytes lying = checkpoint();
    set_header_field(&lying, field, value);
    expect_error(load(&e, {lying}, tok512()), ErrorCode::kBadFile, message);
  }
  // Not a model at all; a llama2.c file of export.py's newer formats.
  const std::string text = "just some text, not a model at all\n";
  expect_error(load(&e, {std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size())}), ErrorCode::kBadFile,
               "not a GGUF file (the first 4 bytes are not 'GGUF') nor a llama2.c checkpoint");
  Bytes v1 = checkpoint();
  std::memcpy(v1.data(), "24ka", 4);
  expect_error(load(&e, {v1}, tok512()), ErrorCode::kUnsupported, "only the legacy format");
}

TEST(Llama2c, BrokenTokenizersAreClearErrors) {
  Engine e;
  expect_error(load(&e, {checkpoint()}), ErrorCode::kInvalidArgument, "needs its tokenizer file");
  const Bytes cut(tok512().begin(), tok512().end() - 1);
  expect_error(load(&e, {checkpoint()}, cut), ErrorCode::kBadFile, "token 511 at byte");
  Bytes longer = tok512();
  longer.push_back(0);
  expect_error(load(&e, {checkpoint()}, longer), ErrorCode::kBadFile, "1 bytes follow the model's 512 tokens");
  Bytes negative = tok512();
  const int32_t minus = -5;
  std::memcpy(negative.data() + 4 + 4, &minus, 4);  // token 0's length
  expect_error(load(&e, {checkpoint()}, negative), ErrorCode::kBadFile, "token 0 at byte 8 has a length of -5");
  // The tokenizer belongs to llama2.c checkpoints only.
  expect_error(load(&e, {gguf()}, tok512()), ErrorCode::kInvalidArgument, "this GGUF model has its own tokenizer");
  // A hostile vocabulary size is refused before anything that size is reserved.
  expect_error(read_llama2c_tokenizer(tok512(), 1 << 24).status(), ErrorCode::kBadFile, "cannot hold the model's");
}

// ---- split GGUF ----

// The files gguf-split makes of `model` with at most `per_file` tensors in
// each; tamper(i, writer) may change file i before it is written.
// no_tensor_first: the first file holds metadata only (gguf-split --no-tensor-first-split).
std::vector<Bytes> split(const Bytes& model, int per_file, const std::function<void(int, GgufWriter&)>& tamper = {},
                         bool no_tensor_first = false) {
  const GgufFile f = GgufFile::parse(model).value();
  std::vector<uint64_t> sizes;
  for (const GgufTensorInfo& t : f.tensors()) sizes.push_back(t.n_bytes);
  std::vector<int> file_of = plan_split(sizes, {.max_tensors = per_file});
  if (no_tensor_first) {
    for (int& i : file_of) ++i;
  }
  const int count = file_of.back() + 1;
  std::vector<Bytes> out;
  for (int i = 0; i < count; ++i) {
    GgufWriter w;
    if (i == 0) {
      for (const GgufKV& kv : f.kvs()) EXPECT_TRUE(w.copy_kv(kv).ok());
    }
    EXPECT_TRUE(w.set_u16(kSplitNoKey, static_cast<uint16_t>(i)).ok());
    EXPECT_TRUE(w.set_u16(kSplitCountKey, static_cast<uint16_t>(count)).ok());
    EXPECT_TRUE(w.set_i32(kSplitTensorsCountKey, static_cast<int32_t>(f.tensors().size())).ok());
    for (size_t t = 0; t < f.tensors().size(); ++t) {
      if (file_of[t] != i) continue;
      const GgufTensorInfo& info = f.tensors()[t];
      EXPECT_TRUE(w.add_tensor(info.name, info.type, std::span<const int64_t>(info.ne, info.n_dims),
                               std::span(model.data() + f.data_offset() + info.offset, info.n_bytes))
                      .ok());
    }
    if (tamper) tamper(i, w);
    out.push_back(w.write_to_memory().value());
  }
  return out;
}

std::vector<std::span<const uint8_t>> spans(const std::vector<Bytes>& files) {
  return std::vector<std::span<const uint8_t>>(files.begin(), files.end());
}

TEST(SplitGguf, ThreeFilesGiveTheWholeFilesTextAndLogits) {
  const std::vector<Bytes> files = split(gguf(), 16);
  ASSERT_EQ(files.size(), 3u);
  Engine whole, parts;
  ASSERT_TRUE(load(&whole, {gguf()}).ok());
  const Status s = load(&parts, spans(files));
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(parts.data_ranges().size(), 3u);
  EXPECT_EQ(parts.file().tensors().size(), 48u);
  EXPECT_EQ(logits(parts), logits(whole));
  EXPECT_EQ(generate(parts, greedy()), generate(whole, greedy()));
  EXPECT_EQ(generate(parts, seeded()), generate(whole, seeded()));
}

TEST(SplitGguf, AFirstFileWithNoTensorsAndFilesOfOneTensorLoad) {
  Engine whole;
  ASSERT_TRUE(load(&whole, {gguf()}).ok());
  for (const auto& [files, ranges] : {std::pair{split(gguf(), 48, {}, true), size_t(1)}, {split(gguf(), 1), size_t(48)}}) {
    Engine e;
    const Status s = load(&e, spans(files));
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(e.data_ranges().size(), ranges);  // none for an empty data section
    EXPECT_EQ(logits(e), logits(whole));
  }
}

TEST(SplitGguf, TheFirstFileAsksForTheOthers) {
  const std::vector<Bytes> files = split(gguf(), 16);
  Engine e;
  const FilePrefix first{files[0], files[0].size()};
  LayoutNeeds needs;
  EXPECT_EQ(e.begin_load({&first, 1}, options(), &needs).code(), ErrorCode::kNeedMoreData);
  EXPECT_EQ(needs.files, 3);
  // The one-file API cannot load it.
  expect_error(e.begin_load(files[0], files[0].size(), options()), ErrorCode::kInvalidArgument, "split into 3 files");
  // Loading from a later file names the first.
  const FilePrefix second{files[1], files[1].size()};
  expect_error(e.begin_load({&second, 1}, options(), &needs), ErrorCode::kBadFile, "this is file 2 of a model split into 3");
  // A file missing.
  expect_error(load(&e, {files[0], files[1]}), ErrorCode::kIo, "split into 3 files; 2 are here");
}

TEST(SplitGguf, FilesThatDoNotBelongTogetherAreClearErrors) {
  Engine e;
  const std::vector<Bytes> files = split(gguf(), 16);
  // In the wrong order.
  expect_error(load(&e, {files[0], files[2], files[1]}), ErrorCode::kBadFile,
               "file 2 of the split model says it is file 3 of 3");
  // A file that lies about the count, or about the tensors in all.
  const auto lie = [](int file, std::string_view key, int value) {
    return [=](int i, GgufWriter& w) {
      if (i != file) return;
      if (key == kSplitTensorsCountKey) EXPECT_TRUE(w.set_i32(key, value).ok());
      else EXPECT_TRUE(w.set_u16(key, static_cast<uint16_t>(value)).ok());
    };
  };
  expect_error(load(&e, spans(split(gguf(), 16, lie(1, kSplitCountKey, 4)))), ErrorCode::kBadFile,
               "file 2 of the split model says it is file 2 of 4");
  expect_error(load(&e, spans(split(gguf(), 16, lie(2, kSplitTensorsCountKey, 49)))), ErrorCode::kBadFile,
               "with 49 tensors in all");
  expect_error(load(&e, spans(split(gguf(), 16, lie(0, kSplitTensorsCountKey, 47)))), ErrorCode::kBadFile,
               "the first says 3 files and 47 tensors");
  // Every file says 49 tensors, but they hold 48.
  const auto all_49 = [](int, GgufWriter& w) { EXPECT_TRUE(w.set_i32(kSplitTensorsCountKey, 49).ok()); };
  expect_error(load(&e, spans(split(gguf(), 16, all_49))), ErrorCode::kBadFile,
               "hold 48 tensors, but split.tensors.count says 49");
  // A tensor in two files: a first file posing as the third.
  std::vector<Bytes> mixed = split(gguf(), 16);
  mixed[2] = split(gguf(), 16, [](int i, GgufWriter& w) {
    if (i == 0) {
      EXPECT_TRUE(w.set_u16(kSplitNoKey, 2).ok());
    }
  })[0];
  expect_error(load(&e, spans(mixed)), ErrorCode::kBadFile, "tensor 'token_embd.weight' is in file 1 and in file 3");
  // A file that is not GGUF, or truncated.
  std::vector<Bytes> cut = split(gguf(), 16);
  cut[1].resize(cut[1].size() / 2);
  expect_error(load(&e, spans(cut)), ErrorCode::kBadFile, "file 2 of the split model: tensor");
}

TEST(SplitGguf, FileNamesFollowGgufSplit) {
  EXPECT_EQ(split_file_name("/m/model", 1, 3), "/m/model-00002-of-00003.gguf");
  EXPECT_EQ(split_sibling_name("/m/model-00001-of-00003.gguf", 2, 3), "/m/model-00003-of-00003.gguf");
  EXPECT_EQ(split_sibling_name("model-00001-of-00012.gguf", 11, 12), "model-00012-of-00012.gguf");
  EXPECT_EQ(split_sibling_name("/m/model-00002-of-00003.gguf", 2, 3), "");  // not the first file
  EXPECT_EQ(split_sibling_name("/m/model-00001-of-00004.gguf", 1, 3), "");  // another count
  EXPECT_EQ(split_sibling_name("-00001-of-00003.gguf", 1, 3), "");          // no name before it
}

TEST(SplitGguf, PlansCutAsGgufSplitDoes) {
  const std::vector<uint64_t> sizes = {100, 100, 100, 100, 100};
  EXPECT_EQ(plan_split(sizes, {.max_tensors = 2}), (std::vector<int>{0, 0, 1, 1, 2}));
  EXPECT_EQ(plan_split(sizes, {.max_bytes = 250}), (std::vector<int>{0, 0, 1, 1, 2}));
  EXPECT_EQ(plan_split(sizes, {.max_bytes = 50}), (std::vector<int>{0, 1, 2, 3, 4}));  // a tensor over the limit: alone
  EXPECT_EQ(plan_split(sizes, {.max_tensors = 128}), (std::vector<int>{0, 0, 0, 0, 0}));
}

}  // namespace
}  // namespace wllm
