// Writing a model the CLI has open (ModelFiles: a GGUF file, a split GGUF
// model, a llama2.c checkpoint) as GGUF: one file (`convert`, `merge`,
// `quantize`'s metadata), or the files of a split model (`split`).
#pragma once

#include <memory>
#include <string>

#include "cli/model_file.h"
#include "core/status.h"
#include "gguf/gguf_split.h"
#include "gguf/gguf_writer.h"

namespace wllm::cli {

// Copies a model's metadata into `out`, except the split.* keys (they say
// how files were cut, not what the model is).
Status copy_model_metadata(const GgufFile& file, GgufWriter* out);

// A producer for GgufWriter::add_tensor that streams tensor `t` of `layout`
// (which must outlive the writing) from `files`.
GgufTensorProducer tensor_copier(std::shared_ptr<ModelFiles> files, const ModelLayout& layout, const GgufTensorInfo& t);

// Writes the model as one GGUF file: its metadata and tensors, unchanged.
Status write_model_file(std::shared_ptr<ModelFiles> files, const ModelLayout& layout, const std::string& path);

// Writes the model as the files of a split model, <prefix>-00001-of-0000N.gguf
// and on (gguf-split's layout: all metadata in the first file, the split.*
// keys in each). Returns the file names.
Result<std::vector<std::string>> write_split_files(std::shared_ptr<ModelFiles> files, const ModelLayout& layout,
                                                   const SplitLimits& limits, const std::string& prefix);

}  // namespace wllm::cli
