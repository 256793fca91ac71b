// The tokenizers of the vocabulary files in ../shared/models, each loaded
// once per test binary (some are several MB).
#pragma once

#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>

#include "gguf/gguf.h"
#include "tokenizer/tokenizer.h"

namespace wllm {

// `relative`: a path under ../shared/models, e.g. "vocab/ggml-vocab-qwen2.gguf".
inline const Tokenizer& load_vocab(const std::string& relative) {
  static std::map<std::string, Tokenizer> cache;
  auto it = cache.find(relative);
  if (it == cache.end()) {
    std::ifstream in(std::string(WLLM_SHARED_MODELS) + "/" + relative, std::ios::binary);
    const std::string data((std::istreambuf_iterator<char>(in)), {});
    Result<GgufFile> file = GgufFile::parse({reinterpret_cast<const uint8_t*>(data.data()), data.size()});
    // Thrown, so that GoogleTest fails the calling test (it cannot go on without it).
    if (!file.ok()) throw std::runtime_error(relative + ": " + file.status().message());
    Result<Tokenizer> tok = Tokenizer::from_gguf(*file);
    if (!tok.ok()) throw std::runtime_error(relative + ": " + tok.status().message());
    it = cache.emplace(relative, std::move(*tok)).first;
  }
  return it->second;
}

}  // namespace wllm
