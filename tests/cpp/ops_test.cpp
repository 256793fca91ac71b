// matmul (the batched product, through each type's tiled gemm kernel) gives
// exactly the values of matvec token by token, for every weight type and any
// thread count: what makes batched prefill equal token-by-token decode.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/half.h"
#include "ops/ops.h"
#include "quant/kernels.h"
#include "quant/repack.h"
#include "quant/traits.h"
#include "runtime/thread_pool.h"

namespace wllm {
namespace {

TEST(Matmul, EqualsMatvecPerTokenForEveryWeightTypeAndThreadCount) {
  constexpr int64_t kCols = 512, kRows = 37;  // 37 rows: no thread or tile count divides it
  constexpr int kMaxTokens = 19;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> weights_f32(kCols * kRows), x(kCols * kMaxTokens);
  for (float& v : weights_f32) v = value(rng);
  for (float& v : x) v = value(rng);

  size_t count = 0;
  const TypeTraits* all = all_type_traits(&count);
  for (size_t i = 0; i < count; ++i) {
    const TypeTraits& t = all[i];
    if (!t.weight_type) continue;
    std::vector<uint8_t> data(static_cast<size_t>(row_bytes(t, kCols) * kRows));
    t.from_float(weights_f32.data(), data.data(), kCols * kRows);
    Tensor w;
    w.traits = &t;
    w.ne[0] = kCols;
    w.ne[1] = kRows;
    w.data = data.data();

    for (int threads : {1, 2, 3}) {
      ThreadPool pool(threads);
      ActivationCache acts(kCols, kMaxTokens);
      for (int n_tokens : {2, 3, 8, kMaxTokens}) {
        std::vector<float> batched(static_cast<size_t>(kRows * n_tokens)), single(static_cast<size_t>(kRows));
        matmul(w, x.data(), n_tokens, batched.data(), acts, pool);
        for (int tok = 0; tok < n_tokens; ++tok) {
          matvec(w, x.data() + tok * kCols, single.data(), acts, pool);
          ASSERT_EQ(std::memcmp(single.data(), batched.data() + tok * kRows, sizeof(float) * kRows), 0)
              << t.name << " threads=" << threads << " tokens=" << n_tokens << " token " << tok;
        }
      }
    }
  }
}

// Products sharing an input (Q/K/V, gate/up) give each weight's own matmul
// values, whether the weights share an activation format or not, whatever
// the thread count.
TEST(Matmul, SharedInputProductsEqualSeparateOnes) {
  constexpr int64_t kCols = 256;
  constexpr int kTokens = 5;
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> x(kCols * kTokens);
  for (float& v : x) v = value(rng);
  struct Weight {
    const char* type;
    int64_t rows;
    std::vector<uint8_t> data;
    Tensor t;
  };
  // q4_0 and q8_0 share Q8_0 activations; q4_K takes Q8_K, f16 takes F32.
  for (const auto& types : {std::vector<const char*>{"q4_0", "q8_0", "q4_0"}, {"q4_K", "q4_0"}, {"f16", "f16"}}) {
    std::vector<Weight> weights;
    for (size_t j = 0; j < types.size(); ++j) weights.push_back({types[j], static_cast<int64_t>(13 + 7 * j), {}, {}});
    for (Weight& w : weights) {
      const TypeTraits& t = *find_type_traits_by_name(w.type);
      std::vector<float> f(static_cast<size_t>(kCols * w.rows));
      for (float& v : f) v = value(rng);
      w.data.resize(static_cast<size_t>(row_bytes(t, kCols) * w.rows));
      t.from_float(f.data(), w.data.data(), kCols * w.rows);
      w.t.traits = &t;
      w.t.ne[0] = kCols;
      w.t.ne[1] = w.rows;
      w.t.data = w.data.data();
    }
    for (int threads : {1, 2, 3}) {
      ThreadPool pool(threads);
      ActivationCache acts(kCols, kTokens);
      std::vector<std::vector<float>> shared(weights.size()), separate(weights.size());
      std::vector<MatmulJob> jobs;
      for (size_t j = 0; j < weights.size(); ++j) {
        shared[j].assign(static_cast<size_t>(weights[j].rows * kTokens), 0.0f);
        separate[j] = shared[j];
        jobs.push_back({&weights[j].t, shared[j].data()});
      }
      matmul_shared(jobs.data(), static_cast<int>(jobs.size()), x.data(), kTokens, acts, pool);
      for (size_t j = 0; j < weights.size(); ++j) {
        matmul(weights[j].t, x.data(), kTokens, separate[j].data(), acts, pool);
        EXPECT_EQ(std::memcmp(shared[j].data(), separate[j].data(), shared[j].size() * sizeof(float)), 0)
            << types[0] << " set, weight " << j << ", threads " << threads;
      }
    }
  }
}

// A tensor whose row count is not a multiple of its repacked group (GPT-2's
// 50257-row output) is repacked up to its last whole group; matmul reads the
// rows after it in the file's layout. Every output is the plain tensor's, bit
// for bit, for the active kernels' repacked types and the reference ones,
// decode and batches, and thread counts that split inside the last rows.
TEST(Matmul, ATensorRepackedUpToItsLastGroupGivesThePlainProducts) {
  std::vector<const RepackedType*> types;
  int count = 0;
  const RepackedType* reference = reference_repacked_types(&count);
  for (int i = 0; i < count; ++i) {
    types.push_back(&reference[i]);
    if (const RepackedType* active = repacked_type_for(reference[i].source)) types.push_back(active);
  }
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (const RepackedType* type : types) {
    const TypeTraits& traits = *find_type_traits(static_cast<uint32_t>(type->source));
    const int64_t cols = 2 * traits.block_size, rows = 3 * type->rows + 5;
    std::vector<float> f(static_cast<size_t>(cols * rows)), x(static_cast<size_t>(cols * 6));
    for (float& v : f) v = value(rng);
    for (float& v : x) v = value(rng);
    std::vector<uint8_t> plain(static_cast<size_t>(row_bytes(traits, cols) * rows));
    traits.from_float(f.data(), plain.data(), cols * rows);
    std::vector<uint8_t> packed = plain;
    Tensor a, b;
    a.traits = b.traits = &traits;
    a.ne[0] = b.ne[0] = cols;
    a.ne[1] = b.ne[1] = rows;
    a.data = plain.data();
    b.data = packed.data();
    b.repacked = type;
    b.repacked_rows = 3 * type->rows;
    type->repack(packed.data(), cols, b.repacked_rows);
    for (int threads : {1, 2, 3}) {
      ThreadPool pool(threads);
      ActivationCache acts(cols, 6);
      for (int n_tokens : {1, 6}) {
        std::vector<float> want(static_cast<size_t>(rows * n_tokens)), got(want.size());
        matmul(a, x.data(), n_tokens, want.data(), acts, pool);
        matmul(b, x.data(), n_tokens, got.data(), acts, pool);
        ASSERT_EQ(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)), 0)
            << type->name << " threads=" << threads << " tokens=" << n_tokens;
      }
    }
  }
}

// A tensor repacked at load (quant/repack.h), as a tied token_embd is, still
// gives each row's floats through get_row, the embedding lookup: every
// layout, rows in the first and the last group, and the 3 rows after the last
// group, which stay in the file's layout.
TEST(GetRow, ReadsRowsOfARepackedTensorAsTheFileHasThem) {
  int count = 0;
  const RepackedType* types = reference_repacked_types(&count);
  ASSERT_GT(count, 0);
  std::mt19937 rng(7);
  for (int i = 0; i < count; ++i) {
    const RepackedType& type = types[i];
    Tensor w;
    w.traits = find_reference_traits(static_cast<uint32_t>(type.source));
    w.ne[0] = 2 * w.traits->block_size;
    w.ne[1] = 2 * type.rows + 3;
    std::vector<uint8_t> bytes(static_cast<size_t>(w.rows() * w.row_size()));
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
    w.data = bytes.data();
    const size_t n = static_cast<size_t>(w.rows() * w.cols());
    std::vector<float> before(n), after(n);
    for (int64_t r = 0; r < w.rows(); ++r) get_row(w, r, before.data() + r * w.cols());
    type.repack(bytes.data(), w.cols(), 2 * type.rows);
    w.repacked = &type;
    w.repacked_rows = 2 * type.rows;
    for (int64_t r = 0; r < w.rows(); ++r) get_row(w, r, after.data() + r * w.cols());
    EXPECT_EQ(std::memcmp(before.data(), after.data(), n * sizeof(float)), 0) << type.name;
  }
}

// GELU as llama.cpp's CPU backend computes it: a table over f16 inputs of
// 0.5f·x·(1 + tanhf(...)) in float, rounded to f16 (0 and x outside
// (-10, 10)). Ours computes the same with its own tanh: with glibc's tanhf
// every f16 result agrees; a libm whose tanhf differs in the last bit could
// differ where 1 + tanh cancels (the f16 subnormals), by a step or two.
TEST(Gelu, MatchesLlamaCppsF16Table) {
  int differ = 0, n = 0;
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float x = f16_to_f32(static_cast<uint16_t>(h));
    if (!(std::fabs(x) < 10.0f)) continue;
    const float table = 0.5f * x * (1.0f + std::tanh(0.79788456080286535587989211986876f * x * (1.0f + 0.044715f * x * x)));
    const uint16_t want = f32_to_f16(table), got = f32_to_f16(gelu_f16_rounded(x));
    ASSERT_EQ(gelu_f16_rounded(x), f16_to_f32(got)) << x;  // an f16 value
    ++n;
    if (got != want) {
      ++differ;
      ASSERT_LE(std::abs(static_cast<int>(got) - static_cast<int>(want)), 4) << x;
    }
    // Any input rounds to its f16 neighbour first.
    ASSERT_EQ(gelu_f16_rounded(x * (1.0f + 0x1p-14f)), gelu_f16_rounded(x)) << x;
  }
  std::printf("gelu: %d of %d f16 inputs differ from the float formula with libm's tanhf\n", differ, n);
  EXPECT_LT(differ, n / 200);
  EXPECT_EQ(gelu_f16_rounded(-10.0f), 0.0f);
  EXPECT_EQ(gelu_f16_rounded(-20.0f), 0.0f);
  EXPECT_EQ(gelu_f16_rounded(10.0f), 10.0f);
  EXPECT_EQ(gelu_f16_rounded(123.5f), 123.5f);
}

// LayerNorm against the formula in double: centred, unit variance, then the
// gain and the bias; in place as well as out of place.
TEST(LayerNorm, CentresScalesThenAppliesGainAndBias) {
  constexpr int64_t kN = 77;  // not a multiple of the 8 lanes
  constexpr float kEps = 1e-5f;
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(3.0f, 2.0f);  // a mean far from 0
  std::vector<float> x(kN), w(kN), b(kN), out(kN);
  for (int64_t i = 0; i < kN; ++i) x[i] = normal(rng), w[i] = 1.0f + 0.1f * normal(rng), b[i] = 0.5f * normal(rng);
  double mean = 0, var = 0;
  for (const float v : x) mean += v;
  mean /= kN;
  for (const float v : x) var += (v - mean) * (v - mean);
  var /= kN;
  layernorm(out.data(), x.data(), w.data(), b.data(), kN, kEps);
  for (int64_t i = 0; i < kN; ++i) {
    const double want = (x[i] - mean) / std::sqrt(var + kEps) * w[i] + b[i];
    EXPECT_NEAR(out[i], want, 1e-5 * (1 + std::fabs(want))) << i;
  }
  std::vector<float> in_place = x;
  layernorm(in_place.data(), in_place.data(), w.data(), b.data(), kN, kEps);
  EXPECT_EQ(in_place, out);
}

// The input is rounded to f16 as f32_to_f16 rounds (to nearest, ties to
// even), at every tie between two halves below 10 in magnitude and at the
// floats on either side of it, subnormal halves included.
TEST(Gelu, RoundsItsInputToTheNearestF16) {
  int checked = 0;
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float a = f16_to_f32(static_cast<uint16_t>(h)), b = f16_to_f32(static_cast<uint16_t>(h + 1));
    if ((h & 0x7fffu) == 0x7fffu || !(std::fabs(b) < 10.0f)) continue;
    const float tie = a + (b - a) / 2;  // exact: one more bit than a half
    for (const float x : {tie, std::nextafter(tie, -INFINITY), std::nextafter(tie, INFINITY), a}) {
      ASSERT_EQ(gelu_f16_rounded(x), gelu_f16_rounded(f16_to_f32(f32_to_f16(x)))) << x;
      ++checked;
    }
  }
  EXPECT_GT(checked, 4 * 36000);
  EXPECT_TRUE(std::isnan(gelu_f16_rounded(NAN)));
  EXPECT_EQ(gelu_f16_rounded(-INFINITY), 0.0f);
  EXPECT_EQ(gelu_f16_rounded(INFINITY), INFINITY);
}

TEST(Gelu, OfARowIsTheTableGeluOfEachValue) {
  std::vector<float> x = {-12.0f, -3.3f, -0.5f, 0.0f, 1e-3f, 0.7f, 2.5f, 9.99f, 10.0f, 42.0f};
  const std::vector<float> in = x;
  gelu(x.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(x[i], gelu_f16_rounded(in[i])) << in[i];
}

// One tap of a depthwise convolution reads every `stride`-th weight: the
// channel's taps are stored together.
TEST(DepthwiseConvolution, ATapReadsEachChannelsWeight) {
  const float w[] = {1, 2, 3, 10, 20, 30};  // 2 channels x 3 taps
  const float x[] = {1.0f, -1.0f};
  float y[] = {0.5f, 0.5f};
  add_tap(y, x, w + 1, 3, 2);  // the middle tap
  EXPECT_EQ(y[0], 0.5f + 2.0f);
  EXPECT_EQ(y[1], 0.5f - 20.0f);
  mul_to(y, x, 2);
  EXPECT_EQ(y[0], 2.5f);
  EXPECT_EQ(y[1], 19.5f);
}

}  // namespace
}  // namespace wllm
