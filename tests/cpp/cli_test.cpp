// `wasm-llm quantize`, `synth` and `generate`, run as the built binary (it
// sits next to this test executable) on real and synthetic models; the
// results are read back with the GGUF reader. CMake builds the binary before
// this test.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "cli_runner.h"
#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"
#include "quant/traits.h"

namespace wllm {
namespace {

using Bytes = std::vector<uint8_t>;

using testing::CliResult;
using testing::cli_path;
using testing::read_file_bytes;
using testing::run_cli;
using testing::scratch_file;
using testing::shared_models;

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(access(cli_path().c_str(), X_OK), 0) << cli_path() << " is not built";
    ASSERT_EQ(access((shared_models() + "/stories260K.gguf").c_str(), R_OK), 0) << "../shared/models is missing";
  }
  void TearDown() override { testing::remove_scratch_files(); }
};

struct Model {
  Bytes bytes;
  GgufFile file;
  const GgufTensorInfo& tensor(const char* name) const {
    const GgufTensorInfo* t = file.find_tensor(name);
    EXPECT_NE(t, nullptr) << name;
    return *t;
  }
  std::vector<float> floats(const char* name) const {
    const GgufTensorInfo& t = tensor(name);
    std::vector<float> out(static_cast<size_t>(t.n_elements()));
    type_traits(t.type).to_float(bytes.data() + file.data_offset() + t.offset, out.data(), t.n_elements());
    return out;
  }
};

Model load(const std::string& path) {
  Model m;
  m.bytes = read_file_bytes(path);
  Result<GgufFile> r = GgufFile::parse(m.bytes);
  EXPECT_TRUE(r.ok()) << path << ": " << r.status().message();
  if (r.ok()) m.file = std::move(r).value();
  return m;
}

const char* type_name(const Model& m, const char* tensor) { return type_traits(m.tensor(tensor).type).name; }

TEST_F(Cli, QuantizeStories260KToQ4KMFollowsLlamaCppRules) {
  const std::string out = scratch_file("st_q4_K_M.gguf");
  const CliResult r = run_cli("quantize " + shared_models() + "/stories260K.gguf " + out + " q4_K_M --threads 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Model in = load(shared_models() + "/stories260K.gguf");
  const Model q = load(out);
  EXPECT_EQ(*q.file.get_uint("general.file_type"), 15u);  // LLAMA_FTYPE_MOSTLY_Q4_K_M
  // Every key is copied; quantization_version and file_type may be added.
  for (const GgufKV& kv : in.file.kvs()) EXPECT_NE(q.file.find(kv.key), nullptr) << kv.key;
  EXPECT_EQ(q.file.get_array("tokenizer.ggml.tokens").value()->string_at(100),
            in.file.get_array("tokenizer.ggml.tokens").value()->string_at(100));
  // dim 64 cannot hold a 256-block: q4_K -> q5_0, q6_K -> q8_0; ffn 172 holds no block -> f16.
  EXPECT_STREQ(type_name(q, "token_embd.weight"), "q5_0");
  EXPECT_STREQ(type_name(q, "output.weight"), "q8_0");
  EXPECT_STREQ(type_name(q, "blk.0.attn_v.weight"), "q5_0");
  EXPECT_STREQ(type_name(q, "blk.2.attn_v.weight"), "q8_0");  // use_more_bits layer: q6_K, then fallback
  EXPECT_STREQ(type_name(q, "blk.4.attn_v.weight"), "q8_0");
  EXPECT_STREQ(type_name(q, "blk.1.ffn_down.weight"), "f16");
  EXPECT_STREQ(type_name(q, "blk.0.attn_norm.weight"), "f32");
  EXPECT_NE(r.err.find("fallback: blk.0.attn_q.weight"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("-> f16"), std::string::npos) << r.err;
}

TEST_F(Cli, QuantizedWeightsStayCloseToTheOriginal) {
  const std::string out = scratch_file("st_q8_0.gguf");
  const CliResult r = run_cli("quantize " + shared_models() + "/stories260K.gguf " + out + " q8_0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Model in = load(shared_models() + "/stories260K.gguf");
  const Model q = load(out);
  EXPECT_EQ(*q.file.get_uint("general.file_type"), 7u);
  EXPECT_STREQ(type_name(q, "blk.3.attn_q.weight"), "q8_0");
  const std::vector<float> a = in.floats("blk.3.attn_q.weight");
  const std::vector<float> b = q.floats("blk.3.attn_q.weight");
  ASSERT_EQ(a.size(), b.size());
  for (size_t blk = 0; blk < a.size() / 32; ++blk) {
    float amax = 0;
    for (size_t i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(a[blk * 32 + i]));
    for (size_t i = 0; i < 32; ++i) {
      // Half a step of amax/127, plus the f16 rounding of the scale.
      ASSERT_NEAR(a[blk * 32 + i], b[blk * 32 + i], amax / 127 * 0.5f + amax * 1e-3f) << blk * 32 + i;
    }
  }
  // f16 ffn_down (172 columns) is the original rounded to half precision.
  const std::vector<float> d0 = in.floats("blk.0.ffn_down.weight");
  const std::vector<float> d1 = q.floats("blk.0.ffn_down.weight");
  for (size_t i = 0; i < d0.size(); ++i) ASSERT_NEAR(d0[i], d1[i], std::fabs(d0[i]) * 1e-3f + 1e-7f);
}

TEST_F(Cli, EveryTypeQuantizesAndRequantizes) {
  // f32 -> every type, and q8_0 -> every type (dequantize then quantize).
  const std::string q8 = scratch_file("src_q8_0.gguf");
  ASSERT_EQ(run_cli("quantize " + shared_models() + "/stories260K.gguf " + q8 + " q8_0").exit_code, 0);
  for (const char* type : {"f32", "f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_K", "q3_K", "q4_K",
                           "q5_K", "q6_K", "q3_K_M", "q3_K_L", "q4_K_S", "q4_K_M", "q5_K_M"}) {
    for (const std::string& src : {shared_models() + "/stories260K.gguf", q8}) {
      const std::string out = scratch_file(std::string("any_") + type + ".gguf");
      const CliResult r = run_cli("quantize " + src + " " + out + " " + type);
      ASSERT_EQ(r.exit_code, 0) << type << ": " << r.err;
      const Model m = load(out);
      EXPECT_EQ(m.file.tensors().size(), 48u) << type;
      std::remove(out.c_str());
    }
  }
}

TEST_F(Cli, SynthIsDeterministicAndThreadCountFree) {
  const std::string vocab = shared_models() + "/vocab/ggml-vocab-llama-spm.gguf";
  const std::string a = scratch_file("synth_a.gguf"), b = scratch_file("synth_b.gguf");
  const std::string c = scratch_file("synth_c.gguf");
  const std::string args = "synth --shape 256x2:4/2:512 --type q4_K_M --vocab " + vocab;
  ASSERT_EQ(run_cli(args + " -o " + a + " --seed 7 --threads 1").exit_code, 0);
  ASSERT_EQ(run_cli(args + " -o " + b + " --seed 7 --threads 2").exit_code, 0);
  ASSERT_EQ(run_cli(args + " -o " + c + " --seed 8 --threads 2").exit_code, 0);
  const Bytes x = read_file_bytes(a), y = read_file_bytes(b), z = read_file_bytes(c);
  ASSERT_FALSE(x.empty());
  EXPECT_TRUE(x == y);
  EXPECT_EQ(x.size(), z.size());
  EXPECT_FALSE(x == z);

  const Model m = load(a);
  EXPECT_EQ(*m.file.get_string("general.architecture"), "llama");
  EXPECT_EQ(*m.file.get_uint("llama.embedding_length"), 256u);
  EXPECT_EQ(*m.file.get_uint("llama.block_count"), 2u);
  EXPECT_EQ(*m.file.get_uint("llama.attention.head_count"), 4u);
  EXPECT_EQ(*m.file.get_uint("llama.attention.head_count_kv"), 2u);
  EXPECT_EQ(*m.file.get_uint("llama.feed_forward_length"), 512u);
  EXPECT_EQ(*m.file.get_uint("llama.rope.dimension_count"), 64u);
  EXPECT_EQ(*m.file.get_uint("general.file_type"), 15u);
  EXPECT_EQ(m.file.get_array("tokenizer.ggml.tokens").value()->size(), 32000u);
  EXPECT_EQ(*m.file.get_string("tokenizer.ggml.model"), "llama");
  EXPECT_EQ(m.tensor("token_embd.weight").ne[1], 32000);
  EXPECT_STREQ(type_name(m, "output.weight"), "q6_K");
  EXPECT_STREQ(type_name(m, "blk.0.attn_q.weight"), "q4_K");
  EXPECT_STREQ(type_name(m, "blk.1.attn_v.weight"), "q6_K");  // use_more_bits(1, 2)
  EXPECT_STREQ(type_name(m, "blk.0.attn_v.weight"), "q4_K");
  EXPECT_STREQ(type_name(m, "blk.1.ffn_down.weight"), "q6_K");
  // Norms near 1, weights near N(0, 1/fan_in).
  const std::vector<float> norm = m.floats("blk.0.attn_norm.weight");
  for (float v : norm) ASSERT_NEAR(v, 1.0f, 0.051f);
  const std::vector<float> q = m.floats("blk.0.attn_q.weight");
  double sum = 0, sum2 = 0;
  for (float v : q) sum += v, sum2 += double(v) * v;
  const double mean = sum / q.size(), sd = std::sqrt(sum2 / q.size() - mean * mean);
  EXPECT_NEAR(mean, 0.0, 0.002);
  EXPECT_NEAR(sd, 1.0 / 16, 0.006);
  for (const std::string& p : {a, b, c}) std::remove(p.c_str());
}

TEST_F(Cli, SynthQwen2TiedAndPure) {
  const std::string out = scratch_file("synth_qwen2.gguf");
  const CliResult r = run_cli("synth --shape smollm2-135m --arch qwen2 --type q8_0 --pure --ctx 512 --vocab " +
                              shared_models() + "/vocab/ggml-vocab-starcoder.gguf -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Model m = load(out);
  EXPECT_EQ(*m.file.get_string("general.architecture"), "qwen2");
  EXPECT_EQ(*m.file.get_uint("qwen2.context_length"), 512u);
  EXPECT_EQ(*m.file.get_uint("qwen2.block_count"), 30u);
  EXPECT_EQ(*m.file.get_float("qwen2.rope.freq_base"), 100000.0f);
  EXPECT_EQ(m.file.get_array("tokenizer.ggml.tokens").value()->size(), 49152u);
  EXPECT_EQ(m.file.find_tensor("output.weight"), nullptr);  // tied embeddings
  EXPECT_STREQ(type_name(m, "token_embd.weight"), "q8_0");
  EXPECT_STREQ(type_name(m, "blk.29.attn_k.bias"), "f32");
  EXPECT_EQ(m.tensor("blk.29.attn_k.bias").ne[0], 192);
  std::remove(out.c_str());
}

// generate --json/--json-schema/--grammar: the output follows them; their errors are clear.
TEST_F(Cli, ConstrainedGeneration) {
  const std::string st = shared_models() + "/stories260K.gguf";
  const std::string grammar = scratch_file("list.gbnf");
  std::FILE* f = std::fopen(grammar.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fputs("root ::= \"[\" [0-9] (\", \" [0-9]){2} \"]\"\n", f);
  std::fclose(f);
  const std::string out = scratch_file("out.txt");
  const std::string cmd = cli_path() + " generate -m " + st + " -p 'Once upon a time' --seed 3 --grammar " + grammar +
                          " >" + out + " 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const Bytes text = read_file_bytes(out);
  const std::string s(text.begin(), text.end());
  ASSERT_EQ(s.size(), std::string("Once upon a time[1, 2, 3]\n").size()) << s;
  EXPECT_EQ(s.substr(16, 1), "[");

  const std::string bad_grammar = scratch_file("bad.gbnf");
  f = std::fopen(bad_grammar.c_str(), "wb");
  std::fputs("root ::= \"a\" | b\n", f);
  std::fclose(f);
  const std::string schema = scratch_file("schema.json");
  f = std::fopen(schema.c_str(), "wb");
  std::fputs("{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"string\", \"format\": \"email\"}}}", f);
  std::fclose(f);
  const struct {
    std::string args;
    const char* message;
  } cases[] = {
      {"--json --grammar " + grammar, "--json, --json-object, --json-schema and --grammar exclude each other"},
      {"--grammar /nonexistent.gbnf", "cannot open '/nonexistent.gbnf'"},
      {"--grammar " + bad_grammar, "grammar: line 1, column 16: rule 'b' is used but never defined"},
      {"--json-schema " + schema, "JSON schema at /properties/a/format: format 'email' is not supported"},
  };
  for (const auto& c : cases) {
    const CliResult r = run_cli("generate -m " + st + " -p Hi " + c.args);
    EXPECT_EQ(r.exit_code, 1) << c.args;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\n" << r.err;
  }
}

// --prompt-cache FILE: created by the first run, then reused by a run whose
// prompt starts with its tokens (the same text as without it), rewritten for
// another prompt; a damaged file or another model's is an error that says so.
// The prompt's tokens and those of them the cache held, from generate's summary line.
std::pair<int, int> prompt_and_cached(const std::string& summary) {
  int prompt = -1, cached = -1;
  const size_t at = summary.find("prompt ");
  if (at != std::string::npos) std::sscanf(summary.c_str() + at, "prompt %d tokens (%d cached)", &prompt, &cached);
  return {prompt, cached};
}

TEST_F(Cli, PromptCacheIsCreatedReusedAndChecked) {
  const std::string st = shared_models() + "/stories260K.gguf";
  const std::string cache = scratch_file("prompt.cache");
  const std::string prompt = "'Once upon a time, there was a little girl named Lily. She loved'";
  const std::string longer = "'Once upon a time, there was a little girl named Lily. She loved to play outside'";
  const auto generate = [&](const std::string& p, const std::string& more) {
    return run_cli("generate -m " + st + " -p " + p + " -n 24 --seed 4 " + more);
  };
  const CliResult plain = generate(prompt, ""), plain_longer = generate(longer, "");
  const CliResult created = generate(prompt, "--prompt-cache " + cache);
  ASSERT_EQ(created.exit_code, 0) << created.err;
  EXPECT_EQ(created.out, plain.out);
  const int n = prompt_and_cached(created.err).first;
  EXPECT_EQ(prompt_and_cached(created.err), std::make_pair(n, 0)) << created.err;
  const Bytes saved = read_file_bytes(cache);
  ASSERT_GT(saved.size(), 40u);
  EXPECT_EQ(std::string(saved.begin(), saved.begin() + 8), "WLLMSTAT");
  // The same prompt: all but its last token from the cache, which stays as it is.
  const CliResult reused = generate(prompt, "--prompt-cache " + cache);
  EXPECT_EQ(reused.out, plain.out);
  EXPECT_EQ(prompt_and_cached(reused.err), std::make_pair(n, n - 1)) << reused.err;
  EXPECT_EQ(read_file_bytes(cache), saved);
  // A longer prompt: its first tokens from the cache, which then holds it.
  const CliResult extended = generate(longer, "--prompt-cache " + cache);
  EXPECT_EQ(extended.out, plain_longer.out);
  EXPECT_EQ(prompt_and_cached(extended.err).second, n) << extended.err;
  EXPECT_GT(read_file_bytes(cache).size(), saved.size());

  Bytes damaged = read_file_bytes(cache);
  damaged[damaged.size() / 2] ^= 1;
  std::FILE* f = std::fopen(cache.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fwrite(damaged.data(), 1, damaged.size(), f);
  std::fclose(f);
  CliResult r = generate(longer, "--prompt-cache " + cache);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(cache + ": the state is damaged"), std::string::npos) << r.err;
  const std::string other = scratch_file("other.gguf");
  ASSERT_EQ(run_cli("synth --shape 64x1 --type q8_0 --ctx 64 --vocab " + st + " -o " + other).exit_code, 0);
  r = run_cli("generate -m " + other + " -p Hi -n 2 --prompt-cache " + cache);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("the state was saved from another model"), std::string::npos) << r.err;
}

// A vocabulary without the characters a grammar needs: a clear error, not a hang.
TEST_F(Cli, GrammarNoTokenCanContinueIsAnError) {
  GgufWriter w;
  ASSERT_TRUE(w.set_string("tokenizer.ggml.model", "llama").ok());
  ASSERT_TRUE(w.set_array_strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "a", "b", "\xE2\x96\x81" "a"}).ok());
  const float scores[] = {0, 0, 0, -1, -2, -3};
  ASSERT_TRUE(w.set_array_f32("tokenizer.ggml.scores", scores).ok());
  const int32_t types[] = {2, 3, 3, 1, 1, 1};
  ASSERT_TRUE(w.set_array_i32("tokenizer.ggml.token_type", types).ok());
  const std::string vocab = scratch_file("tiny_vocab.gguf");
  ASSERT_TRUE(w.write_file(vocab).ok());
  const std::string model = scratch_file("tiny_model.gguf");
  CliResult r = run_cli("synth --shape 64x1 --type f32 --vocab " + vocab + " -o " + model);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string grammar = scratch_file("c.gbnf");
  std::FILE* f = std::fopen(grammar.c_str(), "wb");
  std::fputs("root ::= \"ab\" \"c\"+\n", f);
  std::fclose(f);
  r = run_cli("generate -m " + model + " -p ab -n 20 --seed 0 --grammar " + grammar);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("grammar: no token of the vocabulary can continue the output after 2 generated tokens"),
            std::string::npos)
      << r.err;
}

// As llama.cpp's converter and quantizer: learned positions (gpt2) and
// convolution taps (lfm2) stay f32 in every type, written by synth or by
// quantize; and the keys llama.cpp reads are there.
TEST_F(Cli, PositionsAndConvolutionTapsStayF32) {
  const std::string vocab = shared_models() + "/stories260K.gguf";
  for (const std::string arch : {"gpt2", "lfm2"}) {
    const std::string f32 = scratch_file(arch + "_f32.gguf"), synth_q4 = scratch_file(arch + "_synth_q4_0.gguf"),
                      quantized_q4 = scratch_file(arch + "_q4_0.gguf");
    const std::string common = "synth --arch " + arch + " --shape 64x3:4/2:128 --ctx 256 --vocab " + vocab;
    CliResult r = run_cli(common + " --type f32 -o " + f32);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run_cli(common + " --type q4_0 -o " + synth_q4);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run_cli("quantize " + f32 + " " + quantized_q4 + " q4_0");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const std::string& path : {synth_q4, quantized_q4}) {
      const Model m = load(path);
      EXPECT_STREQ(type_name(m, "blk.0.ffn_up.weight"), "q4_0") << path;
      if (arch == "gpt2") {
        EXPECT_STREQ(type_name(m, "position_embd.weight"), "f32") << path;
        EXPECT_EQ(m.tensor("position_embd.weight").ne[1], 256);  // a row per position of the context
        EXPECT_EQ(*m.file.get_float("gpt2.attention.layer_norm_epsilon"), 1e-5f);
        EXPECT_EQ(m.file.find("gpt2.rope.freq_base"), nullptr);  // no RoPE
      } else {
        EXPECT_STREQ(type_name(m, "blk.0.shortconv.conv.weight"), "f32") << path;
        EXPECT_EQ(*m.file.get_uint("lfm2.shortconv.l_cache"), 3u);
        // Layer 2 has attention, layers 0 and 1 are convolutions.
        const GgufArray* kv_heads = m.file.get_array("lfm2.attention.head_count_kv").value();
        ASSERT_EQ(kv_heads->size(), 3u);
        EXPECT_EQ(kv_heads->int_at(0), 0);
        EXPECT_EQ(kv_heads->int_at(1), 0);
        EXPECT_EQ(kv_heads->int_at(2), 2);
        EXPECT_EQ(m.file.find_tensor("output_norm.weight"), nullptr);
        EXPECT_STREQ(type_name(m, "token_embd_norm.weight"), "f32");
      }
    }
  }
}

TEST_F(Cli, BadArgumentsFailWithAMessage) {
  const std::string st = shared_models() + "/stories260K.gguf";
  const std::string vocab = shared_models() + "/vocab/ggml-vocab-llama-spm.gguf";
  const std::string out = scratch_file("never.gguf");
  const struct {
    std::string args;
    const char* message;
  } cases[] = {
      {"quantize " + st + " " + out + " q9_9", "unknown type 'q9_9'"},
      {"quantize " + st + " " + out, "IN.gguf OUT.gguf TYPE"},
      {"quantize /nonexistent.gguf " + out + " q8_0", "/nonexistent.gguf"},
      {"quantize " + st + " " + st + " q8_0", "is the input file"},
      {"quantize " + vocab + " " + out + " q8_0 --bogus 1", "unknown option '--bogus'"},
      {"synth --shape 100x2:3/1 --type q8_0 --vocab " + vocab + " -o " + out, "heads must divide"},
      {"synth --shape 256x2:4/3 --type q8_0 --vocab " + vocab + " -o " + out, "not a multiple of 3 kv heads"},
      {"synth --shape big --type q8_0 --vocab " + vocab + " -o " + out, "--shape 'big'"},
      {"synth --shape 256x2 --type q8_0 --vocab " + st + ".missing -o " + out, "missing"},
      {"synth --shape 256x2 --type q8_0 --vocab " + vocab + " -o " + out + " --arch falcon",
       "--arch 'falcon' is not one of"},
      {"synth --shape 256x2 --type q8_0 --vocab " + vocab + " -o /nonexistent-dir/x.gguf", "cannot create"},
      {"synth --shape 256x2 --vocab " + vocab + " -o " + out, "synth needs"},
  };
  for (const auto& c : cases) {
    const CliResult r = run_cli(c.args);
    EXPECT_NE(r.exit_code, 0) << c.args;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find("error: "), std::string::npos) << c.args << "\n" << r.err;
  }
  EXPECT_EQ(access(out.c_str(), F_OK), -1);
}

constexpr const char* kCommandNames[] = {"generate", "tokenize", "info",    "quantize", "bench", "synth",
                                         "logits",   "embed",    "convert", "split",    "merge"};

TEST_F(Cli, EveryCommandPrintsItsUsageOnHelp) {
  for (const char* name : kCommandNames) {
    const std::string usage = std::string("usage: wasm-llm ") + name + " ";
    const CliResult help = run_cli(std::string("help ") + name);
    EXPECT_EQ(help.exit_code, 0) << name << "\n" << help.err;
    EXPECT_EQ(help.out.rfind(usage, 0), 0u) << name << "\n" << help.out;
    EXPECT_EQ(help.err, "") << name;
    for (const char* flag : {"--help", "-h"}) {
      // After other arguments too, even ones that would fail: help wins.
      for (const std::string& before : {std::string(), std::string("-m /nonexistent.gguf --bogus 1 ")}) {
        const CliResult r = run_cli(std::string(name) + " " + before + flag);
        EXPECT_EQ(r.exit_code, 0) << name << " " << before << flag << "\n" << r.err;
        EXPECT_EQ(r.out, help.out) << name << " " << before << flag;
      }
    }
  }
  // A value that reads "-h" is a value: this prompt is "-h".
  const CliResult r = run_cli("generate -m " + shared_models() + "/stories260K.gguf -p -h -n 0");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "-h\n");
}

TEST_F(Cli, OverviewListsEveryCommand) {
  for (const char* args : {"--help", "-h", "help"}) {
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 0) << args;
    EXPECT_EQ(r.out.rfind("usage: wasm-llm <command> [options]\n", 0), 0u) << args << "\n" << r.out;
    for (const char* name : kCommandNames) {
      EXPECT_NE(r.out.find(std::string("\n  ") + name + " "), std::string::npos) << args << ": " << name;
    }
  }
  // No command at all: the overview on stderr, and a failure.
  const CliResult bare = run_cli("");
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_EQ(bare.out, "");
  EXPECT_EQ(bare.err, run_cli("--help").out);
}

TEST_F(Cli, HelpOfAnUnknownCommandNamesTheCommands) {
  const CliResult r = run_cli("help nosuch");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("error: unknown command 'nosuch'"), std::string::npos) << r.err;
  for (const char* name : kCommandNames) EXPECT_NE(r.err.find(name), std::string::npos) << name;
  const CliResult typo = run_cli("help generat");
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("unknown command 'generat' (did you mean 'generate'?)"), std::string::npos) << typo.err;
  EXPECT_NE(run_cli("generat -p hi").err.find("(did you mean 'generate'?)"), std::string::npos);
}

// package.json's "version", which CMake passes to the CLI.
std::string package_version() {
  // WLLM_SHARED_MODELS is <source dir>/../shared/models.
  const std::string models = shared_models();
  const std::string root = models.substr(0, models.size() - std::string("/../shared/models").size());
  const Bytes bytes = read_file_bytes(root + "/package.json");
  const std::string json(bytes.begin(), bytes.end());
  std::smatch m;
  return std::regex_search(json, m, std::regex(R"re("version"\s*:\s*"([^"]+)")re")) ? m[1].str() : "";
}

TEST_F(Cli, VersionIsThePackages) {
  const std::string version = package_version();
  ASSERT_FALSE(version.empty());
  for (const char* flag : {"--version", "-V"}) {
    const CliResult r = run_cli(flag);
    EXPECT_EQ(r.exit_code, 0) << flag;
    EXPECT_EQ(r.out, version + "\n") << flag;
  }
}

TEST_F(Cli, UnknownFlagsNameTheFlagMeant) {
  const std::string generate = "generate -m " + shared_models() + "/stories260K.gguf -p Hi ";
  const struct {
    std::string args;
    const char* message;
  } cases[] = {
      {generate + "--max-tokens 5", "unknown option '--max-tokens' (did you mean '-n'?)"},
      {generate + "--temperature 0.7", "unknown option '--temperature' (did you mean '--temp'?)"},
      {generate + "--temprature 0.7", "unknown option '--temprature' (did you mean '--temp'?)"},
      {generate + "--top_k 5", "unknown option '--top_k' (did you mean '--top-k'?)"},
      {generate + "--ctx-size 64", "unknown option '--ctx-size' (did you mean '--ctx'?)"},
      {generate + "--temperature", "unknown option '--temperature' (did you mean '--temp'?)"},  // no value
      {"bench -m x --n-predict 5", "unknown option '--n-predict' (did you mean '-n'?)"},
      // quantize takes no context size: nothing to suggest.
      {"quantize a b q8_0 --ctx-size 64", "unknown option '--ctx-size'\n"},
      {generate + "-x 1", "unknown option '-x'\n"},
      {"--verison", "unknown option '--verison' (did you mean '--version'?)"},
  };
  for (const auto& c : cases) {
    const CliResult r = run_cli(c.args);
    EXPECT_NE(r.exit_code, 0) << c.args;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_EQ(r.out, "") << c.args;
  }
}

// The seed generate's summary line reports, or -1.
long long reported_seed(const std::string& summary) {
  std::smatch m;
  return std::regex_search(summary, m, std::regex(R"(\| seed (\d+))")) ? std::stoll(m[1].str()) : -1;
}

TEST_F(Cli, GenerateDrawsASeedUnlessGivenOne) {
  const std::string generate = "generate -m " + shared_models() + "/stories260K.gguf -p 'Once upon a time' -n 40 ";
  // Without --seed: a fresh seed each run, reported so that --seed gives the text again.
  const CliResult a = run_cli(generate + "--temp 0.8"), b = run_cli(generate + "--temp 0.8");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  ASSERT_NE(reported_seed(a.err), -1) << a.err;
  EXPECT_NE(reported_seed(a.err), reported_seed(b.err));
  const CliResult again = run_cli(generate + "--temp 0.8 --seed " + std::to_string(reported_seed(a.err)));
  EXPECT_EQ(again.out, a.out);
  EXPECT_EQ(reported_seed(again.err), reported_seed(a.err));
  // With --seed: the same text every run.
  const CliResult s1 = run_cli(generate + "--temp 0.8 --seed 7"), s2 = run_cli(generate + "--temp 0.8 --seed 7");
  ASSERT_EQ(s1.exit_code, 0) << s1.err;
  EXPECT_EQ(s1.out, s2.out);
  EXPECT_EQ(reported_seed(s1.err), 7);
  // Greedy decoding has no use for the seed.
  EXPECT_EQ(run_cli(generate + "--temp 0").out, run_cli(generate + "--temp 0 --seed 5").out);
}

}  // namespace
}  // namespace wllm
