// The architecture table (architecture.h): one row per GGUF architecture,
// each defined at the end of its own file in this folder.
#include <string>

#include "model/architecture.h"

namespace wllm {

extern const Architecture kLlama, kQwen2, kQwen3, kSmollm3, kGemma3, kGemma2, kGpt2, kLfm2, kPhi3, kGranite, kBert,
    kNomicBert, kJinaBertV2;

namespace {

const Architecture* const kArchitectures[] = {
    &kLlama,
    &kQwen2,
    &kQwen3,
    &kSmollm3,
    &kGemma3,
    &kGemma2,
    &kGpt2,
    &kLfm2,
    &kPhi3,
    &kGranite,
    &kBert,
    &kNomicBert,
    &kJinaBertV2,
};

// Architectures of llama.cpp people may bring for embeddings that this
// engine does not run, with what they are, for a clearer refusal.
struct Unsupported {
  const char* name;
  const char* what;
};
const Unsupported kUnsupported[] = {
    {"nomic-bert-moe", "nomic-embed-text-v2, a mixture-of-experts encoder"},
    {"jina-bert-v3", "jina-embeddings-v3, an encoder with LoRA adapters"},
    {"modern-bert", "ModernBERT, an encoder with sliding-window layers"},
    {"neo-bert", "NeoBERT"},
    {"eurobert", "EuroBERT"},
    {"gemma-embedding", "EmbeddingGemma"},
    {"t5encoder", "a T5 encoder"},
    {"t5", "T5, an encoder-decoder"},
};

}  // namespace

const Architecture* find_architecture(std::string_view name) {
  for (const Architecture* a : kArchitectures) {
    if (name == a->name) return a;
  }
  return nullptr;
}

const char* unsupported_architecture(std::string_view name) {
  for (const Unsupported& u : kUnsupported) {
    if (name == u.name) return u.what;
  }
  return nullptr;
}

std::string architecture_names() {
  std::string names;
  for (const Architecture* a : kArchitectures) names += (names.empty() ? "" : ", ") + std::string(a->name);
  return names;
}

}  // namespace wllm
