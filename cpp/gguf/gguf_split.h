// Split GGUF files, as llama.cpp's gguf-split tool writes them: a model's
// tensors spread over files named
//   <prefix>-00001-of-00003.gguf, <prefix>-00002-of-00003.gguf, ...
// each a GGUF file of its own (header, then its tensors' data). The first
// holds all of the model's metadata; every file holds
//   split.no             u16  its index, from 0
//   split.count          u16  how many files there are
//   split.tensors.count  i32  how many tensors the files hold together
// (llama.cpp: src/llama-model-loader.cpp reads them, tools/gguf-split writes
// them; `gguf-split --merge` leaves split.count = 0 in the merged file).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "gguf/gguf.h"

namespace wllm {

inline constexpr std::string_view kSplitNoKey = "split.no";
inline constexpr std::string_view kSplitCountKey = "split.count";
inline constexpr std::string_view kSplitTensorsCountKey = "split.tensors.count";
inline constexpr int kMaxSplitFiles = 65535;  // split.count is a u16

// How many files the model whose first file is `first` is split into: 1 for
// an ordinary file (no split.count, or 0 or 1). kBadFile if split.no says
// `first` is not the first file.
Result<int> split_count(const GgufFile& first);

// "<prefix>-00002-of-00003.gguf" for index 1 of 3 (llama.cpp's llama_split_path).
std::string split_file_name(std::string_view prefix, int index, int count);

// The name of file `index` of the `count` whose first is named `first` (a
// path, or a URL's path): "" unless `first` ends in "-00001-of-<count>.gguf".
std::string split_sibling_name(std::string_view first, int index, int count);

// The files of a split model, in order, seen as one: checks that they belong
// together (each file's split.no is its index, and split.count and
// split.tensors.count agree with the first file's; no tensor is in two files;
// there are split.tensors.count tensors in all), then joins them
// (GgufFile::join) with file i's data at data_starts[i], aligned for every
// file's tensors. Errors name the file by its number, from 1.
struct JoinedSplit {
  GgufFile file;
  std::vector<uint64_t> data_starts;
};
Result<JoinedSplit> join_split_files(std::span<const GgufFile> files);

// How `split` cuts a model: at most this many tensors, or at most this many
// bytes of tensor data, per file (gguf-split's --split-max-tensors and
// --split-max-size; a tensor larger than max_bytes gets a file to itself).
struct SplitLimits {
  int max_tensors = 0;    // > 0: by count
  uint64_t max_bytes = 0; // > 0: by size (tensor bytes padded to the alignment, as gguf-split counts)
};

// For each tensor (of these padded byte sizes, in file order), the index
// of the file it goes to.
std::vector<int> plan_split(std::span<const uint64_t> padded_tensor_bytes, const SplitLimits& limits);

}  // namespace wllm
