// The CLI on models that are not one GGUF file (run as the built binary):
// llama2.c checkpoints (`convert`, and their tokenizer found beside them)
// and split GGUF models (`split`, `merge`, loading from the first file).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "gguf/gguf.h"
#include "gguf_compare.h"

namespace wllm {
namespace {

using Bytes = std::vector<uint8_t>;
using testing::CliResult, testing::cli_path, testing::read_file_bytes, testing::run_cli, testing::scratch_file,
    testing::shared_models;

const std::string kGguf = shared_models() + "/stories260K.gguf";
const std::string kBin = shared_models() + "/llama2c/stories260K.bin";
const std::string kTok = shared_models() + "/llama2c/tok512.bin";

class CliFormats : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(access(cli_path().c_str(), X_OK), 0) << cli_path() << " is not built"; }
  void TearDown() override { testing::remove_scratch_files(); }
};

// What `wasm-llm ARGS` writes to stdout ("" if it fails).
std::string stdout_of(const std::string& args) {
  const std::string out = scratch_file("stdout.txt");
  if (std::system((cli_path() + " " + args + " >" + out + " 2>/dev/null").c_str()) != 0) return "";
  const Bytes text = read_file_bytes(out);
  return std::string(text.begin(), text.end());
}

// Seed 0 unless `more` gives one: without --seed, generate draws a random one.
std::string generate_args(const std::string& model, const std::string& more = "") {
  const std::string seed = more.find("--seed") == std::string::npos ? "--seed 0 " : "";
  return "generate -m " + model + " -p 'Once upon a time' -n 120 --threads 1 " + seed + more;
}

GgufFile parse(const Bytes& bytes) {
  Result<GgufFile> f = GgufFile::parse(bytes);
  EXPECT_TRUE(f.ok()) << f.status().message();
  return f.ok() ? std::move(f).value() : GgufFile();
}

// The split files of `prefix` (written by `split`), registered for removal.
std::vector<std::string> split_files(const std::string& prefix, int count) {
  std::vector<std::string> names;
  for (int i = 1; i <= count; ++i) {
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, "-%05d-of-%05d.gguf", i, count);
    names.push_back(prefix + suffix);
    testing::scratch_files().push_back(names.back());
  }
  return names;
}

TEST_F(CliFormats, ConvertWritesWhatLlamaCppsConverterWrote) {
  const std::string out = scratch_file("converted.gguf");
  const CliResult r = run_cli("convert " + kBin + " --tokenizer " + kTok + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Bytes ours_bytes = read_file_bytes(out);
  const Bytes theirs_bytes = read_file_bytes(kGguf);
  const GgufFile ours = parse(ours_bytes);
  const GgufFile theirs = parse(theirs_bytes);
  // The same keys, in the same order, of the same types and values; only the
  // context length differs (the checkpoint's seq_len, not the converter's default).
  ASSERT_EQ(ours.kvs().size(), theirs.kvs().size());
  for (size_t i = 0; i < ours.kvs().size(); ++i) {
    const GgufKV& a = ours.kvs()[i];
    const GgufKV& b = theirs.kvs()[i];
    if (a.key == "llama.context_length") {
      EXPECT_EQ(a.value.u, 512u);
      EXPECT_EQ(b.value.u, 2048u);
    } else {
      testing::expect_same_kv(a, b);
    }
  }
  // The same tensors in the same order, byte for byte, but for the copy of
  // the shared classifier (the converter's output.weight).
  std::vector<const GgufTensorInfo*> expected;
  for (const GgufTensorInfo& t : theirs.tensors()) {
    if (t.name != "output.weight") expected.push_back(&t);
  }
  ASSERT_EQ(ours.tensors().size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const GgufTensorInfo& a = ours.tensors()[i];
    const GgufTensorInfo& b = *expected[i];
    ASSERT_EQ(a.name, b.name);
    ASSERT_EQ(a.n_dims, b.n_dims) << a.name;
    for (int d = 0; d < 4; ++d) ASSERT_EQ(a.ne[d], b.ne[d]) << a.name;
    EXPECT_TRUE(std::equal(ours_bytes.begin() + ours.data_offset() + a.offset,
                           ours_bytes.begin() + ours.data_offset() + a.offset + a.n_bytes,
                           theirs_bytes.begin() + theirs.data_offset() + b.offset))
        << a.name;
  }
}

TEST_F(CliFormats, ACheckpointFindsItsTokenizerBesideItAndGeneratesTheGgufsText) {
  // The folder holds tokenizer.bin (Llama 2's 32000 tokens) and tok512.bin: the second fits.
  const std::string text = stdout_of(generate_args(kGguf));
  ASSERT_GT(text.size(), 200u);
  EXPECT_EQ(stdout_of(generate_args(kBin)), text);
  EXPECT_EQ(stdout_of(generate_args(kBin, "--tokenizer " + kTok + " --threads 2")), text);
  const std::string seeded = stdout_of(generate_args(kGguf, "--temp 0.8 --seed 7"));
  EXPECT_EQ(stdout_of(generate_args(kBin, "--temp 0.8 --seed 7")), seeded);
  const std::string converted = scratch_file("found.gguf");
  ASSERT_EQ(run_cli("convert " + kBin + " -o " + converted).exit_code, 0);
  EXPECT_EQ(stdout_of(generate_args(converted)), text);
}

TEST_F(CliFormats, ACheckpointWithoutItsTokenizerIsAClearError) {
  const std::string alone = scratch_file("alone.bin");
  ASSERT_EQ(std::system(("cp " + kBin + " " + alone).c_str()), 0);
  CliResult r = run_cli(generate_args(alone));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("needs its tokenizer file (llama2.c's tokenizer.bin, or tok512.bin for its 512 tokens)"),
            std::string::npos)
      << r.err;
  r = run_cli(generate_args(kBin, "--tokenizer " + shared_models() + "/llama2c/tokenizer.bin"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("tokenizer.bin: llama2.c tokenizer: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("bytes follow the model's 512 tokens (a tokenizer for a larger vocabulary?)"), std::string::npos)
      << r.err;
  r = run_cli(generate_args(kGguf, "--tokenizer " + kTok));
  EXPECT_NE(r.err.find("this GGUF model has its own tokenizer"), std::string::npos) << r.err;
}

TEST_F(CliFormats, SplitThenMergeGivesBackTheFile) {
  const std::string prefix = scratch_file("st");
  const std::vector<std::string> parts = split_files(prefix, 3);
  CliResult r = run_cli("split --split-max-tensors 16 " + kGguf + " " + prefix);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Each file: the split.* keys; the first, the model's metadata too.
  const GgufFile second = parse(read_file_bytes(parts[1]));
  EXPECT_EQ(second.kvs().size(), 3u);
  EXPECT_EQ(*second.get_uint("split.no"), 1u);
  EXPECT_EQ(*second.get_uint("split.count"), 3u);
  EXPECT_EQ(*second.get_int("split.tensors.count"), 48);
  EXPECT_EQ(second.tensors().size(), 16u);

  const std::string merged = scratch_file("merged.gguf");
  r = run_cli("merge " + parts[0] + " " + merged);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file_bytes(merged), read_file_bytes(kGguf));

  // Loaded from its first file, the split model gives the file's text.
  EXPECT_EQ(stdout_of(generate_args(parts[0])), stdout_of(generate_args(kGguf)));
  const std::string info = stdout_of("info -m " + parts[0]);
  EXPECT_NE(info.find("split into 3 files"), std::string::npos) << info;
}

TEST_F(CliFormats, SplitBySizeAndSplitACheckpoint) {
  // At most 500 kB of tensor data per file: the 1.2 MB of stories260K in 3.
  const std::string prefix = scratch_file("sized");
  const std::vector<std::string> parts = split_files(prefix, 3);
  const std::string names = stdout_of("split --split-max-size 500K " + kGguf + " " + prefix);
  EXPECT_EQ(names, parts[0] + "\n" + parts[1] + "\n" + parts[2] + "\n");
  for (const std::string& part : parts) {
    const GgufFile f = parse(read_file_bytes(part));
    uint64_t bytes = 0;
    for (const GgufTensorInfo& t : f.tensors()) bytes += (t.n_bytes + 31) / 32 * 32;
    EXPECT_LE(bytes, 500000u) << part;
  }
  const std::string merged = scratch_file("sized.gguf");
  ASSERT_EQ(run_cli("merge " + parts[0] + " " + merged).exit_code, 0);
  EXPECT_EQ(read_file_bytes(merged), read_file_bytes(kGguf));

  // A llama2.c checkpoint splits too; merged, it is what `convert` writes.
  const std::string bin_prefix = scratch_file("bin");
  const std::vector<std::string> bin_parts = split_files(bin_prefix, 2);
  CliResult r = run_cli("split --split-max-tensors 24 " + kBin + " " + bin_prefix);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string bin_merged = scratch_file("bin-merged.gguf");
  const std::string converted = scratch_file("bin-converted.gguf");
  ASSERT_EQ(run_cli("merge " + bin_parts[0] + " " + bin_merged).exit_code, 0);
  ASSERT_EQ(run_cli("convert " + kBin + " -o " + converted).exit_code, 0);
  EXPECT_EQ(read_file_bytes(bin_merged), read_file_bytes(converted));
}

TEST_F(CliFormats, BrokenSplitModelsAreClearErrors) {
  const std::string prefix = scratch_file("broken");
  const std::vector<std::string> parts = split_files(prefix, 3);
  ASSERT_EQ(run_cli("split --split-max-tensors 16 " + kGguf + " " + prefix).exit_code, 0);
  // Loaded from the second file.
  CliResult r = run_cli(generate_args(parts[1]));
  EXPECT_NE(r.err.find("this is file 2 of a model split into 3 files: load the first one"), std::string::npos) << r.err;
  // The first file under another name: the others cannot be found.
  const std::string renamed = scratch_file("renamed.gguf");
  ASSERT_EQ(std::system(("cp " + parts[0] + " " + renamed).c_str()), 0);
  r = run_cli(generate_args(renamed));
  EXPECT_NE(r.err.find("its name does not end in '-00001-of-00003.gguf'"), std::string::npos) << r.err;
  // A file missing.
  std::remove(parts[2].c_str());
  r = run_cli(generate_args(parts[0]));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("file 3 of the split model: cannot open '" + parts[2] + "'"), std::string::npos) << r.err;
  // Bad arguments.
  EXPECT_NE(run_cli("merge " + kGguf + " " + scratch_file("m.gguf")).err.find("is not the first file of a split GGUF model"),
            std::string::npos);
  EXPECT_NE(run_cli("split --split-max-size 12X " + kGguf + " x").err.find("is not a size"), std::string::npos);
  EXPECT_NE(run_cli("split --split-max-size 1M --split-max-tensors 3 " + kGguf + " x").err.find("exclude each other"),
            std::string::npos);
  EXPECT_NE(run_cli("convert " + kGguf + " -o " + kGguf).err.find("is one of the model's files"), std::string::npos);
}

}  // namespace
}  // namespace wllm
