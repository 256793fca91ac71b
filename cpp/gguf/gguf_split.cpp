#include "gguf/gguf_split.h"

#include <algorithm>
#include <unordered_map>

namespace wllm {
namespace {

// A split key's value in [lo, hi]; `file` numbers the file in messages.
Result<int64_t> split_key(const GgufFile& f, std::string_view key, int64_t lo, int64_t hi, int file) {
  Result<int64_t> v = f.get_int(key);
  if (!v.ok()) return v.status().with_context(str_printf("file %d of the split model", file));
  if (*v < lo || *v > hi) {
    return Status::error(ErrorCode::kBadFile, "file %d of the split model: %.*s is %lld (expected %lld to %lld)", file,
                         int(key.size()), key.data(), static_cast<long long>(*v), static_cast<long long>(lo),
                         static_cast<long long>(hi));
  }
  return v;
}

uint64_t align_up(uint64_t v, uint64_t align) { return (v + align - 1) / align * align; }

}  // namespace

Result<int> split_count(const GgufFile& first) {
  if (!first.find(kSplitCountKey)) return 1;
  WLLM_ASSIGN_OR_RETURN(const int64_t count, split_key(first, kSplitCountKey, 0, kMaxSplitFiles, 1));
  if (count <= 1) return 1;
  WLLM_ASSIGN_OR_RETURN(const int64_t no, split_key(first, kSplitNoKey, 0, count - 1, 1));
  if (no != 0) {
    return Status::error(ErrorCode::kBadFile, "this is file %lld of a model split into %lld files: load the first one",
                         static_cast<long long>(no + 1), static_cast<long long>(count));
  }
  return static_cast<int>(count);
}

std::string split_file_name(std::string_view prefix, int index, int count) {
  return std::string(prefix) + str_printf("-%05d-of-%05d.gguf", index + 1, count);
}

std::string split_sibling_name(std::string_view first, int index, int count) {
  const std::string suffix = split_file_name("", 0, count);
  if (first.size() <= suffix.size() || first.substr(first.size() - suffix.size()) != suffix) return "";
  return split_file_name(first.substr(0, first.size() - suffix.size()), index, count);
}

Result<JoinedSplit> join_split_files(std::span<const GgufFile> files) {
  const int count = static_cast<int>(files.size());
  WLLM_ASSIGN_OR_RETURN(const int64_t tensors_count, split_key(files[0], kSplitTensorsCountKey, 0, INT32_MAX, 1));
  JoinedSplit out;
  std::unordered_map<std::string_view, int> file_of_tensor;
  uint64_t alignment = 1;
  for (const GgufFile& f : files) alignment = std::max(alignment, f.alignment());
  uint64_t data_end = 0;
  for (int i = 0; i < count; ++i) {
    const GgufFile& f = files[i];
    const int n = i + 1;
    WLLM_ASSIGN_OR_RETURN(const int64_t no, split_key(f, kSplitNoKey, 0, kMaxSplitFiles, n));
    WLLM_ASSIGN_OR_RETURN(const int64_t its_count, split_key(f, kSplitCountKey, 0, kMaxSplitFiles, n));
    WLLM_ASSIGN_OR_RETURN(const int64_t its_tensors, split_key(f, kSplitTensorsCountKey, 0, INT32_MAX, n));
    if (no != i || its_count != count || its_tensors != tensors_count) {
      return Status::error(ErrorCode::kBadFile,
                           "file %d of the split model says it is file %lld of %lld with %lld tensors in all, but the "
                           "first says %d files and %lld tensors: the files are not of one model",
                           n, static_cast<long long>(no + 1), static_cast<long long>(its_count),
                           static_cast<long long>(its_tensors), count, static_cast<long long>(tensors_count));
    }
    for (const GgufTensorInfo& t : f.tensors()) {
      const auto [it, added] = file_of_tensor.emplace(t.name, n);
      if (!added) {
        return Status::error(ErrorCode::kBadFile, "tensor '%.*s' is in file %d and in file %d of the split model",
                             int(t.name.size()), t.name.data(), it->second, n);
      }
    }
    const uint64_t start = align_up(data_end, alignment);
    if (f.data_size() > (uint64_t(1) << 62) - start) {
      return Status::error(ErrorCode::kBadFile, "the split model's tensor data passes 2^62 bytes at file %d", n);
    }
    out.data_starts.push_back(start);
    data_end = start + f.data_size();
  }
  if (static_cast<int64_t>(file_of_tensor.size()) != tensors_count) {
    return Status::error(ErrorCode::kBadFile,
                         "the %d files of the split model hold %zu tensors, but split.tensors.count says %lld", count,
                         file_of_tensor.size(), static_cast<long long>(tensors_count));
  }
  out.file = GgufFile::join(files, out.data_starts, data_end);
  return out;
}

std::vector<int> plan_split(std::span<const uint64_t> padded_tensor_bytes, const SplitLimits& limits) {
  std::vector<int> file_of(padded_tensor_bytes.size());
  int file = 0;
  int in_file = 0;        // tensors in the current file
  uint64_t file_bytes = 0;
  for (size_t i = 0; i < padded_tensor_bytes.size(); ++i) {
    const uint64_t bytes = padded_tensor_bytes[i];
    const bool full = limits.max_tensors > 0 ? in_file >= limits.max_tensors
                                             : limits.max_bytes > 0 && file_bytes + bytes > limits.max_bytes;
    if (in_file > 0 && full) {
      ++file;
      in_file = 0;
      file_bytes = 0;
    }
    file_of[i] = file;
    ++in_file;
    file_bytes += bytes;
  }
  return file_of;
}

}  // namespace wllm
