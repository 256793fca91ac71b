// Every ISA kernel this machine runs gives exactly the reference kernel's bits
// (the numerics contract of traits.h), on random rows of many lengths,
// including partial groups of 8 blocks/elements and extreme values; every
// tiled kernel (gemm) and row-tiled one (matvec) gives exactly the reference
// dot of each (row, act) pair.
#include <gtest/gtest.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cmath>
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
#include "quant/ref/ref.h"
#include "quant/repack.h"
#include "quant/traits.h"
#if defined(__wasm_simd128__)
#include "quant/wasm/simd128.h"
#endif

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
    // An infinity in some rows: the wasm f16 kernels convert rows without
    // one a cheaper way and must notice it. Not where x is ±0 (element 1):
    // the result is ±infinity, not a NaN whose sign the ISAs may differ on.
    if (!extreme && seed % 3 == 0 && n >= 8) w[static_cast<size_t>(2 + seed % 6)] = seed % 2 ? INFINITY : -INFINITY;
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
// WLLM_KERNELS names another ISA (then the reference runs). The machine is
// asked at run time, so a build whose NEON file compiled to an empty kernel
// list fails here.
TEST(Kernels, Aarch64RunsTheNeonKernels) {
  utsname machine;
  ASSERT_EQ(uname(&machine), 0);
  if (std::strcmp(machine.machine, "aarch64") != 0) GTEST_SKIP() << "not aarch64 but " << machine.machine;
  const char* forced = std::getenv("WLLM_KERNELS");
  const std::string want = forced && *forced && std::strcmp(forced, "neon") != 0 ? "reference" : "neon";
  EXPECT_EQ(active_kernel_isa(), want);
}

// The wasm test builds name the kernels they were built to run
// (-DWLLM_EXPECT_KERNELS=simd128 or relaxed, CMakeLists.txt), so
// a build whose SIMD file compiled to an empty kernel list fails here.
#define WLLM_STRING(x) WLLM_STRING_OF(x)
#define WLLM_STRING_OF(x) #x
TEST(Kernels, WasmRunsTheKernelsItWasBuiltFor) {
#if defined(WLLM_EXPECT_KERNELS)
  EXPECT_STREQ(active_kernel_isa(), WLLM_STRING(WLLM_EXPECT_KERNELS));
#else
  GTEST_SKIP() << "this build names no kernels to expect";
#endif
}

// The branch-free row conversion (attention's f32 copies of the cache) gives
// f16_to_f32's bits for every half, NaNs and infinities included, also at a
// row length that leaves a tail after any vector width.
TEST(Kernels, HalfRowConversionIsExactForEveryHalf) {
  std::vector<uint16_t> halves(65536 + 3);
  for (size_t i = 0; i < halves.size(); ++i) halves[i] = static_cast<uint16_t>(i);
  std::vector<float> got(halves.size());
  f16_row_to_f32(halves.data(), got.data(), static_cast<int64_t>(halves.size()));
  int mismatches = 0;
  for (size_t i = 0; i < halves.size(); ++i) {
    const float want = f16_to_f32(halves[i]);
    mismatches += std::memcmp(&want, &got[i], sizeof want) != 0;
  }
  EXPECT_EQ(mismatches, 0);
}

#if defined(__wasm_simd128__)
// SIMD128 has no f16 conversion: the kernels' own (bit shifts and a scaling
// multiply) must give f16_to_f32's bits for every half, NaNs and infinities
// included, from both its inputs (4 separate halves, a vector of 8).
TEST(Kernels, Simd128HalfConversionIsExactForEveryHalf) {
  int mismatches = 0;
  for (int h = 0; h < 65536; h += 8) {
    uint16_t halves[8];
    for (int k = 0; k < 8; ++k) halves[k] = static_cast<uint16_t>(h + k);
    float from_scalars[8], from_vector[8];
    wasm_v128_store(from_scalars, simd128::f16x4_to_f32(halves[0], halves[1], halves[2], halves[3]));
    wasm_v128_store(from_scalars + 4, simd128::f16x4_to_f32(halves[4], halves[5], halves[6], halves[7]));
    v128_t lo, hi;
    simd128::f16x8_to_f32(wasm_v128_load(halves), &lo, &hi);
    wasm_v128_store(from_vector, lo);
    wasm_v128_store(from_vector + 4, hi);
    float finite_lo[4], finite_hi[4];  // the conversion for rows without infinities and NaNs
    const v128_t vector = wasm_v128_load(halves), zero = wasm_i16x8_splat(0);
    wasm_v128_store(finite_lo,
                    simd128::finite_half_top_to_f32(wasm_i16x8_shuffle(zero, vector, 0, 8, 1, 9, 2, 10, 3, 11)));
    wasm_v128_store(finite_hi,
                    simd128::finite_half_top_to_f32(wasm_i16x8_shuffle(zero, vector, 4, 12, 5, 13, 6, 14, 7, 15)));
    for (int k = 0; k < 8; ++k) {
      const float want = f16_to_f32(halves[k]);
      mismatches += std::memcmp(&want, &from_scalars[k], sizeof want) != 0;
      mismatches += std::memcmp(&want, &from_vector[k], sizeof want) != 0;
      const float finite = k < 4 ? finite_lo[k] : finite_hi[k - 4];
      if (std::isfinite(want)) mismatches += std::memcmp(&want, &finite, sizeof want) != 0;
      // any_special_half sees exactly the infinities and NaNs.
      uint16_t one[8] = {};
      one[k] = halves[k];
      const bool special = simd128::any_special_half(wasm_i16x8_shl(wasm_v128_load(one), 1));
      mismatches += special != !std::isfinite(want);
    }
  }
  EXPECT_EQ(mismatches, 0);
}
#endif

// The whole-block scale decoders that SIMD kernels load as one vector give
// exactly what the per-sub-block ones (blocks.h) give, on random bytes.
TEST(Kernels, BulkScaleDecodersMatchThePerSubBlockOnes) {
  std::mt19937 rng(3);
  for (int round = 0; round < 2000; ++round) {
    uint8_t s[12], k4[16], q3[16];
    for (uint8_t& b : s) b = static_cast<uint8_t>(rng());
    k4_scales_mins(s, k4);
    q3_K_scales(s, q3);
    for (int j = 0; j < 8; ++j) {
      int sc, m;
      k4_scale_min(s, j, &sc, &m);
      ASSERT_EQ(k4[j], sc) << "k4 scale " << j;
      ASSERT_EQ(k4[8 + j], m) << "k4 min " << j;
    }
    for (int j = 0; j < 16; ++j) ASSERT_EQ(q3[j], q3_K_scale(s, j)) << "q3_K scale " << j;
  }
}

// Calls f(isa name, kernel) for every kernel of every ISA this CPU runs (not
// only the active one: an AVX-512 machine checks the AVX2 kernels too).
template <typename F>
void for_each_runnable_kernel(F f) {
  size_t n_isas = 0;
  const KernelIsa* isas = kernel_isas(&n_isas);
  for (size_t i = 0; i < n_isas; ++i) {
    size_t count = 0;
    const DotKernel* kernels = isas[i].kernels(&count);
    for (size_t k = 0; k < count; ++k) f(isas[i].name, kernels[k]);
  }
}

TEST(Kernels, EveryKernelMatchesTheReferenceBitForBit) {
  for_each_runnable_kernel([](const char* isa, const DotKernel& kernel) {
    if (!kernel.dot) return;
    const TypeTraits* ref = find_reference_traits(static_cast<uint32_t>(kernel.type));
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
          const float got = kernel.dot(n, r.weight.data(), r.act.data());
          ASSERT_EQ(bits(got), bits(want)) << isa << " " << ref->name << " n=" << n << " seed=" << seed
                                           << " extreme=" << extreme << ": " << got << " vs " << want;
        }
      }
    }
  });
}

// A weight matrix and an activation matrix for a gemm: n_rows and n_acts
// random rows (as make_rows), each `row_stride`/`act_stride` bytes apart,
// with padding between rows so kernels that assume packed rows fail.
struct Matrices {
  std::vector<uint8_t> weights, acts;
  int64_t row_stride = 0, act_stride = 0;
};

Matrices make_matrices(const TypeTraits& t, const TypeTraits& act, int64_t n, int n_rows, int n_acts, uint32_t seed,
                       bool extreme) {
  Matrices m;
  m.row_stride = row_bytes(t, n) + 4;  // keeps 4-byte alignment (Q8_K, f32)
  m.act_stride = row_bytes(act, n) + 8;
  m.weights.assign(static_cast<size_t>(m.row_stride * n_rows), 0xa5);
  m.acts.assign(static_cast<size_t>(m.act_stride * n_acts), 0x5a);
  for (int r = 0; r < std::max(n_rows, n_acts); ++r) {
    // Row r of each from its own seed; extremes in some rows only.
    const Rows one = make_rows(t, act, n, seed * 131 + static_cast<uint32_t>(r), extreme && r % 2 == 0);
    if (r < n_rows) std::memcpy(m.weights.data() + r * m.row_stride, one.weight.data(), one.weight.size());
    if (r < n_acts) std::memcpy(m.acts.data() + r * m.act_stride, one.act.data(), one.act.size());
  }
  return m;
}

// gemm of one shape must equal dot for every pair and leave the gaps between
// output rows alone, with and without extreme values.
void expect_gemm_shape_matches_dot(const char* isa, const TypeTraits& ref, GemmFn gemm, int64_t n, int n_rows,
                                   int n_acts) {
  const TypeTraits& act = *find_reference_traits(static_cast<uint32_t>(ref.act_type));
  for (bool extreme : {false, true}) {
    const uint32_t seed = static_cast<uint32_t>(n * 1000 + n_rows * 50 + n_acts);
    const Matrices m = make_matrices(ref, act, n, n_rows, n_acts, seed, extreme);
    const int64_t out_stride = n_rows + 3;
    const float kUntouched = -12345.0f;
    std::vector<float> out(static_cast<size_t>(out_stride * n_acts), kUntouched);
    gemm(n, m.weights.data(), m.row_stride, n_rows, m.acts.data(), m.act_stride, n_acts, out.data(), out_stride);
    for (int a = 0; a < n_acts; ++a) {
      for (int r = 0; r < out_stride; ++r) {
        const float got = out[static_cast<size_t>(a * out_stride + r)];
        if (r >= n_rows) {
          ASSERT_EQ(bits(got), bits(kUntouched)) << isa << " " << ref.name << " wrote outside row " << r;
          continue;
        }
        const float want = ref.dot(n, m.weights.data() + r * m.row_stride, m.acts.data() + a * m.act_stride);
        ASSERT_EQ(bits(got), bits(want)) << isa << " " << ref.name << " n=" << n << " rows=" << n_rows
                                         << " acts=" << n_acts << " extreme=" << extreme << " at row " << r
                                         << " act " << a << ": " << got << " vs " << want;
      }
    }
  }
}

// gemm over shapes that are not multiples of any tile (rows and tokens), over
// lengths with partial groups of 8 blocks, must equal dot. `few_shapes` tries
// one shape per length only (enough to check which dot a table row's gemm
// loops). Float rows also get a long row and more activations than a group
// (the wasm float gemm converts rows a chunk of 1024 columns at a time for a
// group of 64 activations).
void expect_gemm_matches_dot(const char* isa, const TypeTraits& ref, GemmFn gemm, bool few_shapes = false) {
  for (int64_t units : {1, 3, 9, 17}) {
    const int64_t n = ref.block_size == 1 ? units * 5 + 3 : units * ref.block_size;  // float rows: odd lengths
    for (int n_rows : {1, 2, 3, 4, 5, 7, 9, 70}) {
      for (int n_acts : {1, 2, 3, 5, 8, 9, 13, 33}) {
        if (few_shapes && (n_rows != 3 || n_acts != 5)) continue;
        if (n_rows == 70 && n_acts != 9) continue;  // more rows than a kernel's chunk of rows (64), once
        expect_gemm_shape_matches_dot(isa, ref, gemm, n, n_rows, n_acts);
        if (testing::Test::HasFatalFailure()) return;
      }
    }
  }
  if (ref.block_size == 1 && !few_shapes) expect_gemm_shape_matches_dot(isa, ref, gemm, 2 * 1024 + 21, 4, 64 + 67);
}

TEST(Kernels, TheReferenceGemmOfEveryWeightTypeIsItsDot) {
  size_t count = 0;
  const TypeTraits* all = all_type_traits(&count);
  for (size_t i = 0; i < count; ++i) {
    if (!all[i].weight_type) continue;
    const TypeTraits& ref = *find_reference_traits(static_cast<uint32_t>(all[i].type));
    ASSERT_NE(ref.gemm, nullptr) << ref.name;
    expect_gemm_matches_dot("reference", ref, ref.gemm, /*few_shapes=*/true);
  }
}

TEST(Kernels, EveryGemmMatchesTheReferenceDotBitForBit) {
  for_each_runnable_kernel([](const char* isa, const DotKernel& kernel) {
    if (!kernel.gemm) return;
    const TypeTraits& ref = *find_reference_traits(static_cast<uint32_t>(kernel.type));
    expect_gemm_matches_dot(isa, ref, kernel.gemm);
  });
}

// matvec over row counts around and between its row tiles, over lengths with
// partial groups of 8 blocks and long rows (kernels may prepare the activation
// in chunks), must equal dot for every row and write nothing past the last row.
TEST(Kernels, EveryMatvecMatchesTheReferenceDotBitForBit) {
  for_each_runnable_kernel([](const char* isa, const DotKernel& kernel) {
    if (!kernel.matvec) return;
    const TypeTraits& ref = *find_reference_traits(static_cast<uint32_t>(kernel.type));
    const TypeTraits& act = *find_reference_traits(static_cast<uint32_t>(ref.act_type));
    for (int64_t units : {1, 3, 8, 9, 17, 300, 1100}) {
      const int64_t n = ref.block_size == 1 ? units * 5 + 3 : units * ref.block_size;
      for (int n_rows : {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33}) {
        for (bool extreme : {false, true}) {
          const Matrices m = make_matrices(ref, act, n, n_rows, 1, static_cast<uint32_t>(n * 100 + n_rows), extreme);
          const float kUntouched = -12345.0f;
          std::vector<float> out(static_cast<size_t>(n_rows + 3), kUntouched);
          kernel.matvec(n, m.weights.data(), m.row_stride, n_rows, m.acts.data(), out.data());
          for (int r = 0; r < n_rows + 3; ++r) {
            const float got = out[static_cast<size_t>(r)];
            if (r >= n_rows) {
              ASSERT_EQ(bits(got), bits(kUntouched)) << isa << " " << ref.name << " wrote outside row " << r;
              continue;
            }
            const float want = ref.dot(n, m.weights.data() + r * m.row_stride, m.acts.data());
            ASSERT_EQ(bits(got), bits(want)) << isa << " " << ref.name << " n=" << n << " rows=" << n_rows
                                             << " extreme=" << extreme << " at row " << r << ": " << got << " vs "
                                             << want;
          }
        }
      }
    }
  });
}

// An f16 matvec may move the conversion's 2^112 onto the activation (wasm),
// which is exact only while every scaled element stays finite: it must give
// the dot's bits with halves of every finite kind (subnormal, smallest and
// largest normal, zero, either sign), activations below and at 2^16 and far
// past it, subnormal activations, and rows longer than it scales (16384).
TEST(Kernels, F16MatvecMatchesTheDotAtTheEdgesOfHalfAndFloat) {
  const TypeTraits& ref = *find_reference_traits(static_cast<uint32_t>(TensorType::kF16));
  for_each_runnable_kernel([&ref](const char* isa, const DotKernel& kernel) {
    if (kernel.type != TensorType::kF16 || !kernel.matvec) return;
    const int n_rows = 5;
    for (int64_t n : {37, 4096 + 5, 16384 + 8}) {
      for (float big : {60000.0f, 65535.0f, 65536.0f, 1e30f}) {
        std::mt19937 rng(static_cast<uint32_t>(n) + static_cast<uint32_t>(std::min(big, 1e9f) / 1000.0f));
        std::vector<uint16_t> w(static_cast<size_t>(n * n_rows));
        for (uint16_t& h : w) {
          const uint16_t kinds[] = {static_cast<uint16_t>(rng() % 0x400), 0x0400, 0x7bff, 0,
                                    static_cast<uint16_t>(rng() % 0x7c00)};
          h = static_cast<uint16_t>(kinds[rng() % 5] | (rng() % 2 ? 0x8000 : 0));
        }
        std::uniform_real_distribution<float> value(-2.0f, 2.0f);
        std::vector<float> x(static_cast<size_t>(n));
        for (float& v : x) v = value(rng);
        x[3] = big;
        x[static_cast<size_t>(n) - 2] = -big;
        x[5] = 1e-40f;  // subnormal
        x[6] = -65535.99f;
        std::vector<float> out(n_rows);
        kernel.matvec(n, w.data(), n * 2, n_rows, x.data(), out.data());
        for (int r = 0; r < n_rows; ++r) {
          const float want = ref.dot(n, w.data() + r * n, x.data());
          ASSERT_EQ(bits(out[static_cast<size_t>(r)]), bits(want))
              << isa << " n=" << n << " big=" << big << " row " << r << ": " << out[static_cast<size_t>(r)] << " vs "
              << want;
        }
      }
    }
  });
}

// Activation quantizers (and F16 conversion): the reference's bytes for random rows at many
// scales, and rows with zeros, -0, NaN, infinities, subnormals, huge values,
// halves that round to even and a dominant value of either sign.
// Weights repacked at load (repack.h): the scalar reference kernels of every
// repacked type and every runnable ISA's give the source type's reference
// dot bit for bit, through matvec and gemm, also with infinite and NaN
// scales; unpack restores the file's bytes.
TEST(Kernels, EveryRepackedTypeMatchesTheDotBitForBit) {
  std::vector<std::pair<std::string, const RepackedType*>> types;
  int count = 0;
  const RepackedType* reference = reference_repacked_types(&count);
  for (int i = 0; i < count; ++i) types.emplace_back("reference", &reference[i]);
  size_t n_isas = 0;
  const KernelIsa* isas = kernel_isas(&n_isas);
  for (size_t i = 0; i < n_isas; ++i) {
    const RepackedType* list = isas[i].repacked ? isas[i].repacked(&count) : nullptr;
    for (int k = 0; list && k < count; ++k) {
      // An ISA may list another's layouts too (relaxed lists SIMD128's): test each kernel once.
      const bool seen = std::any_of(types.begin(), types.end(),
                                    [&](const auto& t) { return t.second->matvec == list[k].matvec; });
      if (!seen) types.emplace_back(isas[i].name, &list[k]);
    }
  }
  ASSERT_FALSE(types.empty());
  const auto same = [](float a, float b) { return bits(a) == bits(b) || (std::isnan(a) && std::isnan(b)); };
  for (const auto& [isa, type] : types) {
    const TypeTraits& t = *find_reference_traits(static_cast<uint32_t>(type->source));
    const TypeTraits& act = *find_reference_traits(static_cast<uint32_t>(t.act_type));
    // 258, 1400: more than one chunk of prepared activation, for gemm and matvec
    for (int64_t blocks : {1, 9, 258, 1400}) {
      const int64_t n = blocks * t.block_size, stride = row_bytes(t, n), act_stride = row_bytes(act, n);
      for (int n_rows : {type->rows, 3 * type->rows, 9 * type->rows}) {
        if (n_rows == 9 * type->rows && blocks != 9) continue;  // more rows than a gemm's chunk of rows (64)
        for (bool special : {false, true}) {
          // Tiles of 4 activations and a partial one; short rows also take more
          // activations than one pass of the q5_0 kernel (32).
          const int n_acts = blocks == 9 ? 35 : 6;
          std::vector<uint8_t> weights, acts;
          for (int r = 0; r < std::max(n_rows, n_acts); ++r) {
            const Rows one = make_rows(t, act, n, static_cast<uint32_t>(1000 * blocks + 10 * r + special), r % 4 == 1);
            if (r < n_rows) weights.insert(weights.end(), one.weight.begin(), one.weight.end());
            if (r < n_acts) acts.insert(acts.end(), one.act.begin(), one.act.end());
          }
          if (special) {  // an infinite and a NaN scale (the first field of a Q4_0 block)
            const uint16_t inf = 0x7c00, nan = 0xfe01;
            std::memcpy(weights.data() + 3 * stride, &inf, sizeof inf);
            std::memcpy(weights.data() + 5 * stride + t.block_bytes * (blocks - 1), &nan, sizeof nan);
          }
          std::vector<uint8_t> packed = weights;
          type->repack(packed.data(), n, n_rows);
          std::vector<uint8_t> unpacked = packed;
          type->unpack(unpacked.data(), n, n_rows);
          ASSERT_EQ(unpacked, weights) << isa << " " << type->name << ": unpack(repack(rows)) differs";

          const int64_t out_stride = n_rows + 2;
          const float kUntouched = -12345.0f;
          std::vector<float> mv(static_cast<size_t>(n_rows), kUntouched);
          std::vector<float> mm(static_cast<size_t>(out_stride * n_acts), kUntouched);
          type->matvec(n, packed.data(), stride, n_rows, acts.data(), mv.data());
          type->gemm(n, packed.data(), stride, n_rows, acts.data(), act_stride, n_acts, mm.data(), out_stride);
          for (int a = 0; a < n_acts; ++a) {
            for (int r = 0; r < n_rows; ++r) {
              const float want = t.dot(n, weights.data() + r * stride, acts.data() + a * act_stride);
              const std::string where = isa + " " + type->name + " n=" + std::to_string(n) +
                                        " rows=" + std::to_string(n_rows) + " row " + std::to_string(r) +
                                        " act " + std::to_string(a);
              if (a == 0) {
                ASSERT_TRUE(same(mv[static_cast<size_t>(r)], want)) << where << " matvec";
              }
              ASSERT_TRUE(same(mm[static_cast<size_t>(a * out_stride + r)], want)) << where << " gemm";
            }
            for (int r = n_rows; r < out_stride; ++r) {
              ASSERT_EQ(bits(mm[static_cast<size_t>(a * out_stride + r)]), bits(kUntouched)) << isa << " gap";
            }
          }
        }
      }
    }
  }
}

TEST(Kernels, EveryActivationQuantizerMatchesTheReferenceByteForByte) {
  for_each_runnable_kernel([](const char* isa, const DotKernel& kernel) {
    if (!kernel.from_float) return;
    const TypeTraits& ref = *find_reference_traits(static_cast<uint32_t>(kernel.type));
    const int64_t b = ref.block_size == 1 ? 32 : ref.block_size;  // the special cases below go per b values
    const int64_t n = b * 24;
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(n));
    for (int round = 0; round < 40; ++round) {
      const float scale = std::ldexp(1.0f, round % 20 * 8 - 80);  // 2^-80 .. 2^72
      for (float& v : x) v = value(rng) * scale;
      std::fill(x.begin(), x.begin() + b, 0.0f);                       // block 0: zeros
      std::fill(x.begin() + b, x.begin() + 2 * b, -0.0f);              // block 1: negative zeros
      x[static_cast<size_t>(2 * b + round % b)] = std::nanf("");       // block 2: a NaN
      x[static_cast<size_t>(3 * b + round % b)] = round % 2 ? INFINITY : -INFINITY;  // block 3: an infinity
      x[static_cast<size_t>(4 * b)] = 3e38f;                           // block 4: huge
      x[static_cast<size_t>(4 * b + 1)] = -3e38f;
      for (int64_t i = 0; i < b; ++i) x[static_cast<size_t>(5 * b + i)] = 1e-45f * static_cast<float>(i);  // subnormals
      for (int64_t i = 0; i < b; ++i) {  // block 6: ±127 and halves (k + 0.5)/127 of it
        x[static_cast<size_t>(6 * b + i)] = i == 0 ? 127.0f : static_cast<float>(i % 127) + 0.5f;
      }
      for (int64_t i = 0; i < b; ++i) x[static_cast<size_t>(7 * b + i)] = std::nanf("");  // block 7: all NaN
      x[static_cast<size_t>(8 * b + round % b)] = round % 3 ? -2.0f * scale : 2.0f * scale;  // dominant value
      x[static_cast<size_t>(8 * b + (round + 1) % b)] = round % 3 ? 2.0f * scale : -2.0f * scale;  // tie in |x|
      std::vector<uint8_t> want(static_cast<size_t>(row_bytes(ref, n))), got(want.size(), 0xee);
      ref.from_float(x.data(), want.data(), n);
      kernel.from_float(x.data(), got.data(), n);
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_EQ(got[i], want[i]) << isa << " " << ref.name << " round " << round << " byte " << i << " of block "
                                   << i / static_cast<size_t>(ref.block_bytes) << " (value " << (ref.block_size == 1 ? x[i / static_cast<size_t>(ref.block_bytes)] : 0.0f) << ")";
      }
    }
  });
}

// Same bits, where a NaN matches any NaN (payloads are not part of the
// contract: wasm leaves them unspecified).
bool same_float(float a, float b) { return bits(a) == bits(b) || (a != a && b != b); }

// Inputs for the elementwise math: random values at many scales plus the
// edges of exp_f32 and silu_f32 (branch points, overflow, underflow,
// specials), in an order that puts each in every lane position.
std::vector<float> math_inputs() {
  std::vector<float> x = {0.0f, -0.0f, INFINITY, -INFINITY, std::nanf(""), 1e-45f, -1e-45f, 1e-38f,
                          -80.0f, std::nextafter(-80.0f, 0.0f), std::nextafter(-80.0f, -100.0f), -150.0f,
                          std::nextafter(-150.0f, 0.0f), std::nextafter(-150.0f, -200.0f), 88.72f, 88.73f, 89.0f,
                          89.5f, -103.9f, -104.0f, -87.3f, -87.4f, 3e38f, -3e38f, 0.5f, -0.5f, 1.0f, -1.0f};
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (int i = 0; i < 4000; ++i) x.push_back(value(rng) * std::ldexp(1.0f, i % 12 - 4));  // |x| up to 128
  return x;
}

TEST(Kernels, EveryMathKernelMatchesTheReferenceBitForBit) {
  const std::vector<float> inputs = math_inputs();
  const std::vector<float> up = [&] {
    std::vector<float> u(inputs.size());
    for (size_t i = 0; i < u.size(); ++i) u[i] = static_cast<float>(i % 7) - 3.25f;
    return u;
  }();
  size_t n_isas = 0;
  const KernelIsa* isas = kernel_isas(&n_isas);
  for (size_t k = 0; k < n_isas; ++k) {
    size_t count = 0;
    isas[k].kernels(&count);
    const MathKernels* m = count > 0 && isas[k].math ? isas[k].math() : nullptr;
    if (!m) continue;
    // Every length up to 40 (tails of every size) from every start, then all.
    for (size_t start = 0; start + 40 <= inputs.size(); start += 37) {
      for (int64_t n : {int64_t{1}, int64_t{3}, int64_t{8}, int64_t{13}, int64_t{40}}) {
        std::vector<float> want(inputs.begin() + start, inputs.begin() + start + n), got = want;
        ref::swiglu(want.data(), up.data() + start, n);
        m->swiglu(got.data(), up.data() + start, n);
        for (int64_t i = 0; i < n; ++i) {
          ASSERT_TRUE(same_float(got[i], want[i])) << isas[k].name << " swiglu(" << inputs[start + i] << "): " << got[i]
                                                   << " vs " << want[i];
        }
        for (float scale : {1.0f, 0.125f}) {
          std::vector<float> s_want(inputs.begin() + start, inputs.begin() + start + n), s_got = s_want;
          ref::softmax(s_want.data(), n, scale);
          m->softmax(s_got.data(), n, scale);
          for (int64_t i = 0; i < n; ++i) {
            ASSERT_TRUE(same_float(s_got[i], s_want[i]))
                << isas[k].name << " softmax n=" << n << " at " << start << " element " << i << ": " << s_got[i]
                << " vs " << s_want[i];
          }
        }
      }
    }
    // Softmax of zeros of both signs (whose maximum's sign may differ) and
    // of a NaN first or later.
    for (const std::vector<float>& row : {std::vector<float>(19, -0.0f), std::vector<float>{-0.0f, 0.0f, -0.0f, -1.0f},
                                          std::vector<float>{std::nanf(""), 1.0f, 2.0f},
                                          std::vector<float>{1.0f, std::nanf(""), 2.0f, 3.0f, 0.5f, 0.25f, 7.0f, 1.0f, 2.0f}}) {
      std::vector<float> want = row, got = row;
      ref::softmax(want.data(), static_cast<int64_t>(want.size()), 1.0f);
      m->softmax(got.data(), static_cast<int64_t>(got.size()), 1.0f);
      for (size_t i = 0; i < want.size(); ++i) ASSERT_TRUE(same_float(got[i], want[i])) << isas[k].name << " special softmax";
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
    if (kernels[k].dot) {
      EXPECT_EQ(row->dot, kernels[k].dot) << row->name;
      EXPECT_EQ(row->gemm, kernels[k].gemm) << row->name;
      EXPECT_EQ(row->matvec, kernels[k].matvec) << row->name;
    }
    if (kernels[k].from_float) {
      EXPECT_EQ(row->from_float, kernels[k].from_float) << row->name;
    }
  }
}

}  // namespace
}  // namespace wllm
