#include "cli/model_writer.h"

#include <filesystem>

namespace wllm::cli {
namespace {

constexpr uint64_t kSplitPadding = 32;  // gguf-split counts each tensor padded to GGUF's default alignment

// An error if writing `path` would overwrite one of the model's own files.
Status check_not_input(const ModelFiles& files, const std::string& path) {
  for (int i = 0; i < files.file_count(); ++i) {
    std::error_code ec;
    if (std::filesystem::equivalent(files.path(i), path, ec)) {
      return Status::error(ErrorCode::kInvalidArgument, "output '%s' is one of the model's files", path.c_str());
    }
  }
  return {};
}

Status add_tensor(GgufWriter* w, const std::shared_ptr<ModelFiles>& files, const ModelLayout& layout,
                  const GgufTensorInfo& t) {
  return w->add_tensor(t.name, t.type, std::span<const int64_t>(t.ne, static_cast<size_t>(t.n_dims)),
                       tensor_copier(files, layout, t));
}

}  // namespace

Status copy_model_metadata(const GgufFile& file, GgufWriter* out) {
  for (const GgufKV& kv : file.kvs()) {
    if (kv.key == kSplitNoKey || kv.key == kSplitCountKey || kv.key == kSplitTensorsCountKey) continue;
    WLLM_RETURN_IF_ERROR(out->copy_kv(kv));
  }
  return {};
}

GgufTensorProducer tensor_copier(std::shared_ptr<ModelFiles> files, const ModelLayout& layout, const GgufTensorInfo& t) {
  return [files, &layout, t](GgufSink& out) { return files->copy_tensor(layout, t, out); };
}

Status write_model_file(std::shared_ptr<ModelFiles> files, const ModelLayout& layout, const std::string& path) {
  WLLM_RETURN_IF_ERROR(check_not_input(*files, path));
  GgufWriter w;
  WLLM_RETURN_IF_ERROR(copy_model_metadata(layout.file, &w));
  for (const GgufTensorInfo& t : layout.file.tensors()) WLLM_RETURN_IF_ERROR(add_tensor(&w, files, layout, t));
  return w.write_file(path);
}

Result<std::vector<std::string>> write_split_files(std::shared_ptr<ModelFiles> files, const ModelLayout& layout,
                                                   const SplitLimits& limits, const std::string& prefix) {
  const std::vector<GgufTensorInfo>& tensors = layout.file.tensors();
  std::vector<uint64_t> padded;
  for (const GgufTensorInfo& t : tensors) padded.push_back((t.n_bytes + kSplitPadding - 1) / kSplitPadding * kSplitPadding);
  const std::vector<int> file_of = plan_split(padded, limits);
  const int count = file_of.empty() ? 1 : file_of.back() + 1;
  if (count > kMaxSplitFiles) {
    return Status::error(ErrorCode::kInvalidArgument, "the model would be split into %d files; at most %d can be", count,
                         kMaxSplitFiles);
  }
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) {
    names.push_back(split_file_name(prefix, i, count));
    WLLM_RETURN_IF_ERROR(check_not_input(*files, names.back()));
  }
  for (int i = 0; i < count; ++i) {
    GgufWriter w;
    if (i == 0) WLLM_RETURN_IF_ERROR(copy_model_metadata(layout.file, &w));
    WLLM_RETURN_IF_ERROR(w.set_u16(kSplitNoKey, static_cast<uint16_t>(i)));
    WLLM_RETURN_IF_ERROR(w.set_u16(kSplitCountKey, static_cast<uint16_t>(count)));
    WLLM_RETURN_IF_ERROR(w.set_i32(kSplitTensorsCountKey, static_cast<int32_t>(tensors.size())));
    for (size_t t = 0; t < tensors.size(); ++t) {
      if (file_of[t] == i) WLLM_RETURN_IF_ERROR(add_tensor(&w, files, layout, tensors[t]));
    }
    Status s = w.write_file(names[i]);
    if (!s.ok()) {
      for (int j = 0; j < i; ++j) {
        std::error_code ec;
        std::filesystem::remove(names[j], ec);
      }
      return s;
    }
  }
  return names;
}

}  // namespace wllm::cli
