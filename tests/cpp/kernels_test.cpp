// Every ISA kernel this machine runs gives exactly the reference kernel's bits
// (the numerics contract of traits.h), on random rows of many lengths,
// including partial groups of 8 blocks/elements and extreme values.
#include <gtest/gtest.h>
#include <sys/utsname.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/half.h"
#include "quant/blocks.h"
#include "quant/kernels.h"
#include "quant/traits.h"

namespace wllm {
namespace {

// Byte offsets of the f16 scale fields in a block of `type` (random bytes
// there could be inf or NaN, which no real file has and which would make the
// comparison meaningless).
std::vector<size_t> scale_offsets(TensorType type) {
  switch (type) {
    case TensorType::kQ4_0: return {offsetof(BlockQ4_0, d)};
    case TensorType::kQ4_1: return {offsetof(BlockQ4_1, d), offsetof(BlockQ4_1, m)};
    case TensorType::kQ5_0: return {offsetof(BlockQ5_0, d)};
    case TensorType::kQ5_1: return {offsetof(BlockQ5_1, d), offsetof(BlockQ5_1, m)};
    case TensorType::kQ8_0: return {offsetof(BlockQ8_0, d)};
    case TensorType::kQ2_K: return {offsetof(BlockQ2_K, d), offsetof(BlockQ2_K, dmin)};
    case TensorType::kQ3_K: return {offsetof(BlockQ3_K, d)};
    case TensorType::kQ4_K: return {offsetof(BlockQ4_K, d), offsetof(BlockQ4_K, dmin)};
    case TensorType::kQ5_K: return {offsetof(BlockQ5_K, d), offsetof(BlockQ5_K, dmin)};
    case TensorType::kQ6_K: return {offsetof(BlockQ6_K, d)};
    default: return {};
  }
}

struct Rows {
  std::vector<uint8_t> weight, act;
};

// A weight row of `t` with n elements and the activation row it dots with.
// Float weights are random values; quantized ones are random bytes (any bit
// pattern is a valid block) with finite scales. `extreme` fills the quants
// with the largest magnitudes instead.
Rows make_rows(const TypeTraits& t, const TypeTraits& act, int64_t n, uint32_t seed, bool extreme) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  Rows r;
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = value(rng);
  if (n > 2) x[1] = -0.0f;
  r.act.resize(static_cast<size_t>(row_bytes(act, n)));
  act.from_float(x.data(), r.act.data(), n);

  r.weight.resize(static_cast<size_t>(row_bytes(t, n)));
  if (t.block_size == 1) {
    std::vector<float> w(static_cast<size_t>(n));
    for (float& v : w) v = extreme ? (rng() % 2 ? 65504.0f : -65504.0f) : value(rng);
    t.from_float(w.data(), r.weight.data(), n);
  } else {
    for (uint8_t& b : r.weight) b = extreme ? (rng() % 2 ? 0x80 : 0x7f) : static_cast<uint8_t>(rng());
    const std::vector<size_t> scales = scale_offsets(t.type);
    EXPECT_FALSE(scales.empty()) << "no scale layout for " << t.name;
    for (int64_t block = 0; block < static_cast<int64_t>(r.weight.size()); block += t.block_bytes) {
      for (size_t off : scales) {
        const uint16_t d = f32_to_f16(value(rng) * 0.01f);
        std::memcpy(r.weight.data() + block + off, &d, sizeof d);
      }
    }
  }
  return r;
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

TEST(Kernels, ActiveIsaIsReported) {
  size_t count = 0;
  active_dot_kernels(&count);
  const std::string isa = active_kernel_isa();
  EXPECT_EQ(isa == "reference", count == 0) << isa;
  std::printf("active kernels: %s (%zu types)\n", isa.c_str(), count);
}

// Every aarch64 CPU has NEON, so on an aarch64 machine (or under
// qemu-aarch64) the NEON kernels must be the active ones, unless
// WLLM_KERNELS=ref asks for the reference. Asked at run time, from the
// machine, so a build that silently compiled the NEON file to its empty stub
// fails here.
TEST(Kernels, Aarch64RunsTheNeonKernels) {
  utsname machine;
  ASSERT_EQ(uname(&machine), 0);
  if (std::strcmp(machine.machine, "aarch64") != 0) GTEST_SKIP() << "not aarch64 but " << machine.machine;
  const char* forced = std::getenv("WLLM_KERNELS");
  const std::string want = forced && std::strcmp(forced, "ref") == 0 ? "reference" : "neon";
  EXPECT_EQ(active_kernel_isa(), want);
}

TEST(Kernels, EveryActiveKernelMatchesTheReferenceBitForBit) {
  size_t count = 0;
  const DotKernel* kernels = active_dot_kernels(&count);
  for (size_t k = 0; k < count; ++k) {
    const TypeTraits* ref = find_reference_traits(static_cast<uint32_t>(kernels[k].type));
    ASSERT_NE(ref, nullptr);
    const TypeTraits& act = *find_reference_traits(static_cast<uint32_t>(ref->act_type));
    const int64_t unit = ref->block_size == 1 ? 1 : ref->block_size;
    // Lengths in units: around one register/group of 8, and a large odd one.
    for (int64_t units : {1, 2, 3, 7, 8, 9, 15, 16, 17, 37, 129}) {
      if (ref->block_size == 1) units = units * 3 + 1;  // float rows: odd lengths too
      const int64_t n = units * unit;
      for (uint32_t seed = 1; seed <= 4; ++seed) {
        for (bool extreme : {false, true}) {
          const Rows r = make_rows(*ref, act, n, seed * 7919 + static_cast<uint32_t>(n), extreme);
          const float want = ref->dot(n, r.weight.data(), r.act.data());
          const float got = kernels[k].dot(n, r.weight.data(), r.act.data());
          ASSERT_EQ(bits(got), bits(want)) << ref->name << " n=" << n << " seed=" << seed << " extreme=" << extreme
                                           << ": " << got << " vs " << want;
        }
      }
    }
  }
}

// The SIMD kernels move signs onto the activation bytes, which needs them in
// [-127, 127]: the activation quantizers must never produce -128.
TEST(Kernels, ActivationQuantsStayWithinPlusMinus127) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> x(4096);
  for (TensorType type : {TensorType::kQ8_0, TensorType::kQ8_1, TensorType::kQ8_K}) {
    const TypeTraits& t = *find_reference_traits(static_cast<uint32_t>(type));
    for (int round = 0; round < 50; ++round) {
      for (float& v : x) v = value(rng) * (round % 2 ? 1e-3f : 1e3f);
      x[round] = round % 3 ? -1e4f : 1e4f;  // a dominant value of either sign
      std::vector<uint8_t> q(static_cast<size_t>(row_bytes(t, 4096)));
      t.from_float(x.data(), q.data(), 4096);
      for (size_t block = 0; block < q.size(); block += t.block_bytes) {
        const size_t qs_offset = type == TensorType::kQ8_0   ? offsetof(BlockQ8_0, qs)
                                 : type == TensorType::kQ8_1 ? offsetof(BlockQ8_1, qs)
                                                             : offsetof(BlockQ8_K, qs);
        const int8_t* qs = reinterpret_cast<const int8_t*>(q.data() + block + qs_offset);
        for (int i = 0; i < t.block_size; ++i) ASSERT_GE(qs[i], -127) << t.name;
      }
    }
  }
}

TEST(Kernels, TheTableUsesTheActiveKernels) {
  size_t count = 0;
  const DotKernel* kernels = active_dot_kernels(&count);
  for (size_t k = 0; k < count; ++k) {
    const TypeTraits* row = find_type_traits(static_cast<uint32_t>(kernels[k].type));
    ASSERT_NE(row, nullptr);
    EXPECT_EQ(row->dot, kernels[k].dot) << row->name;
  }
}

}  // namespace
}  // namespace wllm
