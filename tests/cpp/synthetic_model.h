// Small synthetic models of each architecture, written by the built
// `wasm-llm synth` (cli_runner.h), and loading one into an engine: shared by
// the tests that run every row of the architecture table.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "engine/engine.h"
#include "model/architecture.h"

namespace wllm::testing {

// A small model of `arch` (a scratch file): head width 32 beside a width of
// 64 (the head width is its own key; an encoder's heads make its width, 16
// each), grouped-query attention, the 512-token
// stories260K vocabulary, q8_0 matrices; `window` positions for sliding-
// window layers; `seed` picks the weights.
inline std::string synth_model(const std::string& arch, int window, int context, int seed = 3) {
  const std::string path = scratch_file(arch + "-" + std::to_string(seed) + ".gguf");
  const std::string head_dim = find_architecture(arch)->encoder ? "16" : "32";
  const CliResult r = run_cli("synth --arch " + arch + " --shape 64x3:4/2:128 --head-dim " + head_dim + " --sliding-window " +
                              std::to_string(window) + " --type q8_0 --seed " + std::to_string(seed) + " --ctx " +
                              std::to_string(context) + " --vocab " + shared_models() + "/stories260K.gguf -o " + path);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return path;
}

// Loads the model file's bytes into *e through the engine's three steps.
inline Status load_engine(Engine* e, const std::vector<uint8_t>& file, int threads, int context) {
  WLLM_RETURN_IF_ERROR(e->begin_load(file, file.size(), {.n_ctx = context, .n_threads = threads}));
  std::copy(file.begin() + e->data_offset(), file.begin() + e->data_offset() + e->data_size(), e->data_destination());
  return e->finish_load();
}

// A test run for each row of the architecture table (the parameter: its
// name), on the row's small model with `window` and `context`: its bytes.
template <int window, int context>
class ArchitectureModelTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    file_ = read_file_bytes(synth_model(GetParam(), window, context));
    ASSERT_FALSE(file_.empty());
  }
  void TearDown() override { remove_scratch_files(); }

  std::vector<uint8_t> file_;
};

// The names of the architecture table's rows; with decoders_only, those
// that generate text (no encoders).
inline std::vector<std::string> architecture_list(bool decoders_only = false) {
  std::vector<std::string> names;
  const std::string all = architecture_names();
  for (size_t start = 0; start < all.size();) {
    const size_t end = std::min(all.find(", ", start), all.size());
    const std::string name = all.substr(start, end - start);
    if (!decoders_only || !find_architecture(name)->encoder) names.push_back(name);
    start = end + 2;
  }
  return names;
}

// A test's name for an architecture's run: its name, "-" as "_" (GoogleTest
// allows no other characters).
inline std::string architecture_test_name(const ::testing::TestParamInfo<std::string>& p) {
  std::string name = p.param;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

}  // namespace wllm::testing
