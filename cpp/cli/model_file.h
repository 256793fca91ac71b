// Native file access for the CLI: feeds a GGUF file through the same
// streaming load path the wasm build uses (header prefix, then tensor data
// copied into the engine's arena).
#pragma once

#include <string>

#include "core/status.h"
#include "engine/engine.h"
#include "gguf/gguf.h"

namespace wllm::cli {

// The whole content of the file at `path` ("-": standard input).
Result<std::string> read_file(const std::string& path);

// Parses just the header of the GGUF file at `path` (reads as little as it can).
Result<GgufFile> read_gguf_header(const std::string& path);

// Loads the model at `path` into `engine`.
Status load_model(const std::string& path, const LoadOptions& options, Engine* engine);

}  // namespace wllm::cli

namespace wllm::cli {
class Args;
// The load options every model-using command shares: --threads N, --ctx N.
Result<LoadOptions> load_options_from(const Args& args);
}  // namespace wllm::cli
