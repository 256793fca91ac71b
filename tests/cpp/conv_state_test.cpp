// The state of short-convolution layers (cpp/model/conv_state.h): after any
// sequence of passes it holds the inputs of the last taps − 1 positions,
// oldest first, whatever the passes' lengths; a clear starts from zeros; and
// only convolution layers take memory, as planned.
#include <gtest/gtest.h>

#include <vector>

#include "model/conv_state.h"

namespace wllm {
namespace {

constexpr int kDim = 3;

// 4 layers, the middle two convolutions with 4 taps (3 rows of state).
ModelConfig config() {
  ModelConfig c;
  c.dim = kDim;
  c.n_layers = 4;
  c.shortconv_l_cache = 4;
  c.layers.assign(4, LayerConfig{});
  c.layers[1].attention = c.layers[2].attention = false;
  return c;
}

// The input of position p: (p, p + 0.25, p + 0.5).
float value(int p, int i) { return static_cast<float>(p) + 0.25f * static_cast<float>(i); }

// A pass of positions [first, first + n), each row `stride` floats apart (the
// floats between rows hold -7, which must never reach the state).
std::vector<float> pass_rows(int first, int n, int stride) {
  std::vector<float> rows(static_cast<size_t>(n * stride), -7.0f);
  for (int t = 0; t < n; ++t) {
    for (int i = 0; i < kDim; ++i) rows[t * stride + i] = value(first + t, i);
  }
  return rows;
}

TEST(ConvState, HoldsTheLastInputsAfterPassesOfAnyLength) {
  const ModelConfig c = config();
  ConvState state(c);
  EXPECT_EQ(state.taps(), 4);
  EXPECT_EQ(state.bytes(), 2 * 3 * kDim * static_cast<int64_t>(sizeof(float)));
  EXPECT_EQ(state.bytes(), ConvState::plan_bytes(c));
  for (const int l : {1, 2}) state.clear(l);
  // Passes of 1, 2, 5, 1 and 3 positions (stride 2·dim, as rows of a wider buffer).
  int end = 0;
  for (const int n : {1, 2, 5, 1, 3}) {
    const std::vector<float> rows = pass_rows(end, n, 2 * kDim);
    state.push(1, rows.data(), 2 * kDim, n);
    end += n;
    for (int r = 0; r < 3; ++r) {
      const int p = end - 3 + r;  // the position row r holds
      for (int i = 0; i < kDim; ++i) {
        EXPECT_EQ(state.rows(1)[r * kDim + i], p >= 0 ? value(p, i) : 0.0f) << "after " << end << ", row " << r;
      }
    }
  }
  // The other layer's rows are untouched, and a clear zeros them again.
  for (int i = 0; i < 3 * kDim; ++i) EXPECT_EQ(state.rows(2)[i], 0.0f);
  state.clear(1);
  for (int i = 0; i < 3 * kDim; ++i) EXPECT_EQ(state.rows(1)[i], 0.0f);
}

TEST(ConvState, AttentionOnlyModelsTakeNoMemory) {
  ModelConfig c = config();
  for (LayerConfig& l : c.layers) l.attention = true;
  c.shortconv_l_cache = 0;
  EXPECT_EQ(ConvState(c).bytes(), 0);
  EXPECT_EQ(ConvState::plan_bytes(c), 0);
}

}  // namespace
}  // namespace wllm
