// matmul (the batched product, through each type's tiled gemm kernel) gives
// exactly the values of matvec token by token, for every weight type and any
// thread count: what makes batched prefill equal token-by-token decode.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "ops/ops.h"
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

}  // namespace
}  // namespace wllm
