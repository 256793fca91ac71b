#include "core/checksum.h"

#include <cstring>

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

namespace wllm {
namespace {

// xxHash32's primes: odd, so multiplying by them is a bijection mod 2^32.
constexpr uint32_t kPrime1 = 0x9E3779B1u;
constexpr uint32_t kPrime2 = 0x85EBCA77u;
constexpr uint32_t kPrime3 = 0xC2B2AE3Du;
constexpr uint32_t kPrime4 = 0x27D4EB2Fu;

inline uint32_t rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

inline uint32_t load_le32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}

// xxHash32's final avalanche: every input bit reaches every output bit.
inline uint32_t avalanche(uint32_t h) {
  h ^= h >> 15;
  h *= kPrime2;
  h ^= h >> 13;
  h *= kPrime3;
  h ^= h >> 16;
  return h;
}

constexpr size_t kStripeBytes = Checksum64::kStripeBytes;
constexpr int kLanes = Checksum64::kLanes;

// The lanes after `count` more stripes from `data`, one round per word.
[[maybe_unused]] void stripes_ref(uint32_t lanes[kLanes], const uint8_t* data, size_t count) {
  for (size_t s = 0; s < count; ++s, data += kStripeBytes) {
    for (int l = 0; l < kLanes; ++l) lanes[l] = rotl(lanes[l] + load_le32(data + 4 * l) * kPrime2, 13) * kPrime1;
  }
}

#ifdef __wasm_simd128__
// The same in eight accumulators of four lanes (wasm is little-endian: a v128
// load holds words 4i..4i+3): faster than the compiler's vectorized
// stripes_ref, which keeps too few multiplies in flight. tests/js/cache.test.mjs
// checks it against the values tests/cpp/checksum_test.cpp pins natively.
void stripes(uint32_t lanes[kLanes], const uint8_t* data, size_t count) {
  v128_t acc[kLanes / 4];
  for (int i = 0; i < kLanes / 4; ++i) acc[i] = wasm_v128_load(lanes + 4 * i);
  const v128_t p1 = wasm_i32x4_splat(static_cast<int32_t>(kPrime1));
  const v128_t p2 = wasm_i32x4_splat(static_cast<int32_t>(kPrime2));
  for (size_t s = 0; s < count; ++s, data += kStripeBytes) {
    for (int i = 0; i < kLanes / 4; ++i) {
      const v128_t x = wasm_i32x4_add(acc[i], wasm_i32x4_mul(wasm_v128_load(data + 16 * i), p2));
      acc[i] = wasm_i32x4_mul(wasm_v128_or(wasm_i32x4_shl(x, 13), wasm_u32x4_shr(x, 19)), p1);
    }
  }
  for (int i = 0; i < kLanes / 4; ++i) wasm_v128_store(lanes + 4 * i, acc[i]);
}
#else
void stripes(uint32_t lanes[kLanes], const uint8_t* data, size_t count) { stripes_ref(lanes, data, count); }
#endif

}  // namespace

Checksum64::Checksum64() { reset(); }

void Checksum64::reset() {
  for (int l = 0; l < kLanes; ++l) lanes_[l] = kPrime1 * static_cast<uint32_t>(l + 1);
  buffered_ = 0;
  total_ = 0;
}

void Checksum64::update(const uint8_t* data, size_t n) {
  if (n == 0) return;  // data may be null then, which memcpy may not be given
  total_ += n;
  if (buffered_ > 0) {  // complete the partial stripe first
    const size_t take = n < kStripeBytes - buffered_ ? n : kStripeBytes - buffered_;
    std::memcpy(buffer_ + buffered_, data, take);
    buffered_ += take;
    data += take;
    n -= take;
    if (buffered_ < kStripeBytes) return;
    stripes(lanes_, buffer_, 1);
    buffered_ = 0;
  }
  stripes(lanes_, data, n / kStripeBytes);
  data += n / kStripeBytes * kStripeBytes;
  std::memcpy(buffer_, data, n % kStripeBytes);
  buffered_ = n % kStripeBytes;
}

uint64_t Checksum64::digest() {
  if (buffered_ > 0) {
    std::memset(buffer_ + buffered_, 0, kStripeBytes - buffered_);
    stripes(lanes_, buffer_, 1);
    buffered_ = 0;
  }
  // Each fold step is a bijection of the lane folded in, so one changed lane changes both halves.
  uint32_t high = static_cast<uint32_t>(total_ >> 32) ^ kPrime4;
  uint32_t low = static_cast<uint32_t>(total_) ^ kPrime3;
  for (int l = 0; l < kLanes; ++l) {
    high = rotl(high + lanes_[l] * kPrime3, 17) * kPrime4;
    low = rotl(low + lanes_[kLanes - 1 - l] * kPrime2, 11) * kPrime1;
  }
  return (uint64_t{avalanche(high)} << 32) | avalanche(low);
}

std::string Checksum64::hex_digest() {
  const uint64_t value = digest();
  static const char kHex[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 0; i < 16; ++i) out[i] = kHex[(value >> (60 - 4 * i)) & 15];
  return out;
}

}  // namespace wllm
