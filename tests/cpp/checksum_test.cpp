// Checksum64: the same value however the bytes are split, a change to any
// bit or to the length shows, and pinned values (cache entries record them,
// and every build must compute the same: tests/js/cache.test.mjs pins the
// wasm build's to these).
#include "core/checksum.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace wllm {
namespace {

std::string checksum_of(const std::vector<uint8_t>& data) {
  Checksum64 c;
  c.update(data.data(), data.size());
  return c.hex_digest();
}

// n bytes of a fixed pattern (the JS test uses the same formula).
std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> data(n);
  for (size_t i = 0; i < n; ++i) data[i] = static_cast<uint8_t>((i * 131 + 7) & 0xff);
  return data;
}

// n pseudo-random bytes: the low byte of each xorshift32 step from 1 (the JS test does the same).
std::vector<uint8_t> noise(size_t n) {
  std::vector<uint8_t> data(n);
  uint32_t x = 1;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    data[i] = static_cast<uint8_t>(x);
  }
  return data;
}

TEST(Checksum64, PinnedValues) {
  EXPECT_EQ(checksum_of({}), "ea14c6e9cae3c4d1");
  EXPECT_EQ(checksum_of(pattern(1000)), "f3356f1c21aa78f8");
  EXPECT_EQ(checksum_of(pattern(1 << 20)), "a689d82cb2688f9a");
  EXPECT_EQ(checksum_of(noise(100003)), "02d1363b62a27658");
}

TEST(Checksum64, AnySplitGivesTheSameValue) {
  const std::vector<uint8_t> data = pattern(1000);
  const std::string whole = checksum_of(data);
  for (size_t piece : {1u, 3u, 63u, 64u, 127u, 128u, 129u, 255u, 256u, 999u}) {
    Checksum64 c;
    for (size_t at = 0; at < data.size(); at += piece) c.update(data.data() + at, std::min(piece, data.size() - at));
    EXPECT_EQ(c.hex_digest(), whole) << "pieces of " << piece;
  }
  Checksum64 reused;
  reused.update(data.data(), 10);
  (void)reused.hex_digest();
  reused.reset();
  reused.update(data.data(), data.size());
  EXPECT_EQ(reused.hex_digest(), whole);
}

TEST(Checksum64, EveryBitFlipShows) {
  std::vector<uint8_t> data = pattern(300);
  const std::string original = checksum_of(data);
  std::set<std::string> seen{original};
  for (size_t i = 0; i < data.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      data[i] ^= static_cast<uint8_t>(1 << bit);
      seen.insert(checksum_of(data));
      data[i] ^= static_cast<uint8_t>(1 << bit);
    }
  }
  EXPECT_EQ(seen.size(), 1 + data.size() * 8);  // all distinct, none equal to the original
}

TEST(Checksum64, LengthAndOrderShow) {
  std::set<std::string> seen;
  for (size_t n = 0; n <= 260; ++n) seen.insert(checksum_of(std::vector<uint8_t>(n, 0)));  // zero tails differ by length
  EXPECT_EQ(seen.size(), 261u);
  std::vector<uint8_t> data = pattern(512);
  const std::string original = checksum_of(data);
  std::swap(data[0], data[Checksum64::kStripeBytes + 1]);  // the same word of two stripes: same lane, other order
  EXPECT_NE(checksum_of(data), original);
  std::swap(data[0], data[Checksum64::kStripeBytes + 1]);
  std::swap(data[0], data[4]);  // two lanes
  EXPECT_NE(checksum_of(data), original);
}

}  // namespace
}  // namespace wllm
