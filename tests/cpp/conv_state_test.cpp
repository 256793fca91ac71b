// The state of short-convolution layers (cpp/model/conv_state.h): after any
// sequence of passes it holds the inputs of the last taps − 1 positions,
// oldest first, whatever the passes' lengths; a clear starts from zeros; a
// checkpoint restores the rows as they were before its position; and only
// convolution layers take memory, as planned.
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

constexpr int kContext = 8;  // no position reaches a checkpoint

// Whether layer l's rows are the inputs of the 3 positions before `end`.
void expect_rows_before(const ConvState& state, int l, int end) {
  for (int r = 0; r < 3; ++r) {
    const int p = end - 3 + r;  // the position row r holds
    for (int i = 0; i < kDim; ++i) {
      EXPECT_EQ(state.rows(l)[r * kDim + i], p >= 0 ? value(p, i) : 0.0f) << "before " << end << ", row " << r;
    }
  }
}

// Bytes of the rows (1 + checkpoints blocks) and the recent inputs of the 2 convolution layers.
int64_t expected_bytes(int checkpoints) {
  return (2 * 3 * kDim * (1 + checkpoints) + 2 * ConvState::kRecentInputs * kDim) * static_cast<int64_t>(sizeof(float));
}

TEST(ConvState, HoldsTheLastInputsAfterPassesOfAnyLength) {
  const ModelConfig c = config();
  ConvState state(c, kContext);
  EXPECT_EQ(state.taps(), 4);
  EXPECT_EQ(state.bytes(), expected_bytes(0));
  EXPECT_EQ(state.bytes(), ConvState::plan_bytes(c, kContext));
  for (const int l : {1, 2}) state.clear(l);
  // Passes of 1, 2, 5, 1 and 3 positions (stride 2·dim, as rows of a wider buffer).
  int end = 0;
  for (const int n : {1, 2, 5, 1, 3}) {
    const std::vector<float> rows = pass_rows(end, n, 2 * kDim);
    state.push(1, end, rows.data(), 2 * kDim, n);
    end += n;
    expect_rows_before(state, 1, end);
  }
  // The other layer's rows are untouched, and a clear zeros them again.
  for (int i = 0; i < 3 * kDim; ++i) EXPECT_EQ(state.rows(2)[i], 0.0f);
  state.clear(1);
  for (int i = 0; i < 3 * kDim; ++i) EXPECT_EQ(state.rows(1)[i], 0.0f);
}

TEST(ConvState, GoesBackExactlyToRecentPositionsAndToCheckpointsBeyond) {
  constexpr int kInterval = ConvState::kCheckpointInterval;
  constexpr int context = 3 * kInterval + 5;  // checkpoints at 1, 2 and 3 intervals
  const ModelConfig c = config();
  ConvState state(c, context);
  EXPECT_EQ(state.bytes(), expected_bytes(3));
  EXPECT_EQ(state.bytes(), ConvState::plan_bytes(c, context));
  // Passes whose ends fall before, on and after the checkpoints' positions.
  int end = 0;
  for (const int n : {kInterval - 2, 2, 1, kInterval + 3, kInterval}) {
    for (const int l : {1, 2}) {
      const std::vector<float> rows = pass_rows(end, n, kDim);
      state.push(l, end, rows.data(), kDim, n);
    }
    end += n;
  }
  ASSERT_EQ(end, 3 * kInterval + 4);
  expect_rows_before(state, 2, end);
  // Every layer's rows and the checkpoints before `end`, in blocks.
  EXPECT_EQ(state.blocks(end).size(), 4u * 2 * 3 * kDim);
  EXPECT_EQ(state.blocks(2 * kInterval).size(), 2u * 2 * 3 * kDim);
  EXPECT_EQ(state.blocks(0).size(), 2u * 3 * kDim);
  // The recent inputs reach back kRecentInputs positions: the rows of any
  // position whose 3 inputs are among them are rebuilt exactly.
  const int oldest = end - ConvState::kRecentInputs;
  EXPECT_EQ(state.oldest_input(), oldest);
  for (const int p : {end - 1, end - 20, oldest + 3}) {
    EXPECT_EQ(state.rewind_point(p), p);
    state.rewind(p);
    expect_rows_before(state, 1, p);
    expect_rows_before(state, 2, p);
  }
  // Further back: the checkpoint before, after which no input is known.
  EXPECT_EQ(state.rewind_point(oldest + 2), 2 * kInterval);
  for (const int p : {2 * kInterval, kInterval}) {
    state.rewind(p);
    EXPECT_EQ(state.oldest_input(), p);
    expect_rows_before(state, 1, p);
    expect_rows_before(state, 2, p);
  }
  EXPECT_EQ(state.rewind_point(kInterval - 1), 0);
  state.rewind(0);
  expect_rows_before(state, 1, 0);
  EXPECT_EQ(state.oldest_input(), 0);
  // Early positions go back exactly: their rows before 0 are zeros.
  const std::vector<float> rows = pass_rows(0, 5, kDim);
  state.push(1, 0, rows.data(), kDim, 5);
  EXPECT_EQ(state.rewind_point(2), 2);
  state.rewind(2);
  expect_rows_before(state, 1, 2);
}

TEST(ConvState, AttentionOnlyModelsTakeNoMemory) {
  ModelConfig c = config();
  for (LayerConfig& l : c.layers) l.attention = true;
  c.shortconv_l_cache = 0;
  EXPECT_EQ(ConvState(c, 1000).bytes(), 0);
  EXPECT_EQ(ConvState::plan_bytes(c, 1000), 0);
  EXPECT_TRUE(ConvState(c, 1000).blocks(500).empty());
}

}  // namespace
}  // namespace wllm
