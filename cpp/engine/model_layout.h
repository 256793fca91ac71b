// The files a model comes in, seen as one GGUF file whose data section the
// engine's arena holds (design-notes §1):
//   - a GGUF file: its own header and data section;
//   - a llama2.c checkpoint and its tokenizer file (llama2c/): described as
//     the GGUF llama.cpp's converter makes of them, each tensor's bytes
//     copied from where the checkpoint has them;
//   - the files of a split GGUF model (gguf/gguf_split.h): the first one's
//     metadata and every file's tensors, the files' data sections one after
//     the other.
// The format is told by the first bytes: "GGUF", else a llama2.c header.
// The caller reads the files; `ranges` say which of their bytes go where in
// the arena.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "gguf/gguf.h"

namespace wllm {

// The first bytes of a file, and the file's whole size.
struct FilePrefix {
  std::span<const uint8_t> bytes;
  uint64_t size = 0;
};

// Bytes [file_offset, file_offset + size) of files[file] go to
// arena[arena_offset, arena_offset + size).
struct DataRange {
  int file = 0;
  uint64_t file_offset = 0;
  uint64_t size = 0;
  uint64_t arena_offset = 0;
};

enum class ModelFormat { kGguf, kSplitGguf, kLlama2c };

struct ModelLayout {
  ModelFormat format = ModelFormat::kGguf;
  GgufFile file;                  // the metadata, and every tensor with its offset in the arena (data_size(): the arena's)
  std::vector<DataRange> ranges;  // by file, then by file offset; none is empty
};

// What read_model_layout needs to go on, when it returns kNeedMoreData.
struct LayoutNeeds {
  int file = 0;             // a longer prefix of files[file]:
  uint64_t bytes = 0;       //   this many bytes (0: none needed)
  int files = 0;            // > 0: the model is split into this many files; pass them all, in order
  // A llama2.c checkpoint given no tokenizer (the status is then
  // kInvalidArgument): the names its tokenizer file usually has, to look for
  // beside it before giving up.
  std::vector<std::string> tokenizer_files;
  // The status is about the llama2.c tokenizer file given: it is not this model's.
  bool tokenizer_rejected = false;
};

// The layout of the model in `files` (their first bytes). `tokenizer`: the
// whole llama2.c tokenizer file, for a llama2.c checkpoint (an error for a
// GGUF model, which has its own).
Result<ModelLayout> read_model_layout(std::span<const FilePrefix> files, std::span<const uint8_t> tokenizer,
                                      LayoutNeeds* needs);

// Where the bytes of tensor `t` of layout.file are in the model's files.
struct TensorSource {
  int file = 0;
  uint64_t offset = 0;
};
Result<TensorSource> tensor_source(const ModelLayout& layout, const GgufTensorInfo& t);

}  // namespace wllm
