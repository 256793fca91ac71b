// The architecture table: what each GGUF architecture ("llama", "qwen3", ...)
// needs, one row each (architectures/table.cpp), the row's functions in one
// file per architecture (architectures/<name>.cpp). The rest of the engine
// only ever sees a row: adding an architecture is its file, its row, its
// `synth` shape and its tests.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace wllm {

class ConfigKeys;
class Forward;
class TensorList;
struct ModelConfig;
struct ModelWeights;

struct Architecture {
  const char* name;  // general.architecture
  // Its own metadata keys beyond the common ones (config.h), read from a file
  // or written by `synth` through the same list; then the values derived from
  // them (c->layers) and checks.
  Status (*config)(ConfigKeys& keys, ModelConfig* c);
  // Every tensor it reads, with its shape, in file order (weights.h).
  void (*tensors)(TensorList& list, const ModelConfig& c, ModelWeights* w);
  // The forward pass of a batch of tokens (forward.h): from the embeddings
  // to the logits, one step per line.
  void (*forward)(Forward& f);
  // The architecture's typical values of its own keys, for `synth` (which
  // sets the shape: widths, layers, heads).
  void (*synth_defaults)(ModelConfig* c);
  // An encoder: no output layer, embeddings only (ModelConfig::encoder).
  bool encoder = false;
};

// The row of `name`, or null.
const Architecture* find_architecture(std::string_view name);
// "llama, qwen2, ...": for messages.
std::string architecture_names();
// What a known architecture this engine does not run is ("EuroBERT", ...),
// for its error message; null for others.
const char* unsupported_architecture(std::string_view name);

}  // namespace wllm
