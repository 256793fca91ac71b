// Native file access for the CLI: feeds a model's files through the same
// streaming load path the wasm build uses (header prefixes, then tensor data
// copied into the engine's arena). A model is one GGUF file, the files of a
// split GGUF model (given the first, the others are found beside it by
// their names), or a llama2.c checkpoint and its tokenizer file (--tokenizer,
// or found beside the checkpoint: engine/model_layout.h).
#pragma once

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/engine.h"
#include "engine/model_layout.h"
#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"

namespace wllm::cli {

class Args;

// The whole content of the file at `path` ("-": standard input).
Result<std::string> read_file(const std::string& path);

// Parses just the header of the GGUF file at `path` (reads as little as it can).
Result<GgufFile> read_gguf_header(const std::string& path);

// The files of one model, open for reading.
class ModelFiles {
 public:
  // Opens the model whose (first) file is `path`. `tokenizer_path`: a
  // llama2.c checkpoint's tokenizer file ("": looked for beside it).
  static Result<std::shared_ptr<ModelFiles>> open(const std::string& path, const std::string& tokenizer_path);
  ModelFiles() = default;
  ModelFiles(const ModelFiles&) = delete;
  ModelFiles& operator=(const ModelFiles&) = delete;
  ~ModelFiles();

  // Calls parse(prefixes, tokenizer, &needs) — read_model_layout or
  // Engine::begin_load — again while it returns kNeedMoreData, with what it
  // asks for: a longer prefix of a file, or the other files of a split
  // model; and, when a llama2.c checkpoint came without its tokenizer, with
  // each tokenizer file found beside it until one fits.
  using Parse = std::function<Status(std::span<const FilePrefix> files, std::span<const uint8_t> tokenizer,
                                     LayoutNeeds* needs)>;
  Status parse_headers(const Parse& parse);

  // parse_headers() with read_model_layout.
  Result<ModelLayout> layout();

  // n bytes at `offset` of file `file` into dst.
  Status read(int file, uint64_t offset, uint8_t* dst, uint64_t n);
  // Streams tensor `t` of `layout` into `out` (for GgufWriter::add_tensor).
  Status copy_tensor(const ModelLayout& layout, const GgufTensorInfo& t, GgufSink& out);

  const std::string& path(int file) const { return files_[file].path; }
  int file_count() const { return static_cast<int>(files_.size()); }
  // The llama2.c tokenizer file in use ("" if none).
  const std::string& tokenizer_path() const { return tokenizer_path_; }

 private:
  struct OpenFile {
    std::string path;
    std::FILE* f = nullptr;
    uint64_t size = 0;
    std::vector<uint8_t> prefix;  // the first bytes, as long as a parser asked
  };
  Status add_file(const std::string& path);
  Status grow_prefix(int file, uint64_t bytes);
  Status open_split_files(int count);
  std::vector<std::string> tokenizers_beside(const std::vector<std::string>& names) const;
  Status read_tokenizer(const std::string& path);

  std::vector<OpenFile> files_;
  std::string tokenizer_path_;
  std::vector<uint8_t> tokenizer_;
};

// Loads the model at `path` (see ModelFiles::open) into `engine`.
Status load_model(const std::string& path, const std::string& tokenizer_path, const LoadOptions& options,
                  Engine* engine);

// The load options every model-using command shares: --threads N, --ctx N.
Result<LoadOptions> load_options_from(const Args& args);

}  // namespace wllm::cli
