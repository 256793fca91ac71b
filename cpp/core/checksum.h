// A fast 64-bit checksum of a byte stream, fed incrementally, for the download
// cache: recorded when a cache entry is written and checked on every read, so
// a damaged copy is dropped instead of loaded. Not cryptographic (the sha256
// recorded beside it is), but hundreds of times faster in wasm than SHA-256,
// which would cost several times the load itself (docs/performance.md).
//
// The stream is read as 128-byte stripes of 32 little-endian 32-bit words;
// word l of each stripe goes to lane l: lane = rotl(lane + word·P2, 13)·P1
// (xxHash32's round). Each round is a bijection of the lane for a fixed word
// and of the word for a fixed lane, so a change confined to one lane always
// changes that lane. The lanes are independent: eight SIMD128 accumulators
// hide the multiplies' latency. At the end the tail is zero-padded to a
// stripe and the lanes are folded into two 32-bit halves, each with the
// length, then mixed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace wllm {

class Checksum64 {
 public:
  static constexpr size_t kStripeBytes = 128;
  static constexpr int kLanes = kStripeBytes / 4;

  Checksum64();
  void update(const uint8_t* data, size_t n);
  // The checksum. Ends this checksum: call reset() to reuse.
  uint64_t digest();
  // The same as 16 lowercase hex digits.
  std::string hex_digest();
  void reset();

 private:
  uint32_t lanes_[kLanes];
  uint8_t buffer_[kStripeBytes];  // the partial stripe not yet folded in
  size_t buffered_ = 0;           // bytes in buffer_
  uint64_t total_ = 0;            // bytes seen so far
};

}  // namespace wllm
