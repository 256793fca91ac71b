// Inputs the fuzzers (tests/fuzz) found to crash or to hit undefined
// behaviour, each made into a test through the same API the fuzzer used.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "gguf/gguf_writer.h"

namespace wllm {
namespace {

const std::string kModel = std::string(WLLM_SHARED_MODELS) + "/stories260K.gguf";

std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// stories260K's metadata (no tensors) with some counts replaced.
std::vector<uint8_t> stories_metadata_with(const std::vector<std::pair<const char*, uint32_t>>& counts) {
  const std::vector<uint8_t> model = read_all(kModel);
  Result<GgufFile> file = GgufFile::parse(model);
  EXPECT_TRUE(file.ok()) << file.status().message();
  GgufWriter w;
  for (const GgufKV& kv : file->kvs()) EXPECT_TRUE(w.copy_kv(kv).ok());
  for (const auto& [key, value] : counts) EXPECT_TRUE(w.set_u32(key, value).ok());
  Result<std::vector<uint8_t>> bytes = w.write_to_memory();
  EXPECT_TRUE(bytes.ok()) << bytes.status().message();
  return std::move(bytes).value();
}

Status begin_load(const std::vector<uint8_t>& file) {
  Engine engine;
  LoadOptions options;
  options.n_ctx = 8;
  options.n_threads = 1;
  options.memory_limit = 64ull << 20;
  return engine.begin_load(file, file.size(), options);
}

// loader_fuzz: 65536 heads of width 65536 (attention.key_length, which lifts
// the heads-divide-the-width check) made the query width 2^32, which
// overflowed int when the engine planned its buffers.
TEST(FuzzRegression, QueryWidthBeyondIntIsRefused) {
  const Status s = begin_load(stories_metadata_with({{"llama.attention.head_count", 65536},
                                                     {"llama.attention.head_count_kv", 65536},
                                                     {"llama.attention.key_length", 65536}}));
  EXPECT_EQ(s.code(), ErrorCode::kBadFile);
  EXPECT_NE(s.message().find("65536 heads of width 65536"), std::string::npos) << s.message();
}

// The same bound below the overflow: no real model has attention wider than
// the widest embedding the engine accepts.
TEST(FuzzRegression, QueryWidthAboveTheMaximumWidthIsRefused) {
  const Status s = begin_load(stories_metadata_with({{"llama.attention.head_count", 64},
                                                     {"llama.attention.head_count_kv", 4},
                                                     {"llama.attention.key_length", 2048}}));
  EXPECT_EQ(s.code(), ErrorCode::kBadFile);
  EXPECT_NE(s.message().find("64 heads of width 2048"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace wllm
