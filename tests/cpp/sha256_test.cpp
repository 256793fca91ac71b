// SHA-256 against the FIPS 180-4 examples and against itself fed in pieces.
#include "core/sha256.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace wllm {
namespace {

std::string sha256_of(const std::string& s) {
  Sha256 h;
  h.update(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  return h.hex_digest();
}

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_of(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_of(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, AnySplitGivesTheSameDigest) {
  std::string data(1000, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 131 + 7);
  const std::string whole = sha256_of(data);
  for (size_t piece : {1u, 3u, 55u, 56u, 63u, 64u, 65u, 200u}) {
    Sha256 h;
    for (size_t at = 0; at < data.size(); at += piece) {
      const size_t n = std::min(piece, data.size() - at);
      h.update(reinterpret_cast<const uint8_t*>(data.data()) + at, n);
    }
    EXPECT_EQ(h.hex_digest(), whole) << "pieces of " << piece;
  }
  Sha256 reused;
  reused.update(reinterpret_cast<const uint8_t*>("x"), 1);
  (void)reused.hex_digest();
  reused.reset();
  EXPECT_EQ(reused.hex_digest(), sha256_of(""));
}

TEST(Sha256, RealModelFileMatchesItsPublishedHash) {
  const std::string path = std::string(WLLM_SHARED_MODELS) + "/stories260K.gguf";
  std::FILE* f = std::fopen(path.c_str(), "rb");
  ASSERT_NE(f, nullptr) << path;
  Sha256 h;
  std::vector<uint8_t> buf(1 << 16);
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) h.update(buf.data(), n);
  std::fclose(f);
  // ../shared/models/README.md
  EXPECT_EQ(h.hex_digest(), "270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d");
}

}  // namespace
}  // namespace wllm
