// The sampler's random numbers: the same sequence on every platform.
//
// std::mt19937 is portable but std::uniform_real_distribution and friends are
// not (each standard library converts bits to floats its own way), so the
// engine uses its own generator and its own conversion to [0, 1).
#pragma once

#include <cstdint>

namespace wllm {

// splitmix64 (Steele, Lea, Flood): advances *state and returns the next value.
// Used to expand a 64-bit seed into a well-mixed generator state.
uint64_t splitmix64(uint64_t* state);

// xoshiro256** 1.0 (Blackman, Vigna), state seeded from four splitmix64 outputs
// (never all zero). Period 2^256 − 1.
class Rng {
 public:
  explicit Rng(uint64_t seed = 0) { reseed(seed); }

  void reseed(uint64_t seed);
  uint64_t next_u64();
  uint32_t next_u32() { return static_cast<uint32_t>(next_u64() >> 32); }
  // Uniform in [0, 1): the top 24 bits as a float, exact and the same everywhere.
  float uniform_f32() { return static_cast<float>(next_u64() >> 40) * 0x1p-24f; }

 private:
  uint64_t s_[4];
};

}  // namespace wllm
