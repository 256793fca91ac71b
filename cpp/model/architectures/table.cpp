// The architecture table (architecture.h): one row per GGUF architecture,
// each defined at the end of its own file in this folder.
#include <string>

#include "model/architecture.h"

namespace wllm {

extern const Architecture kLlama, kQwen2, kQwen3, kSmollm3, kGemma3, kGemma2, kGpt2, kLfm2, kPhi3, kGranite;

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
};

}  // namespace

const Architecture* find_architecture(std::string_view name) {
  for (const Architecture* a : kArchitectures) {
    if (name == a->name) return a;
  }
  return nullptr;
}

std::string architecture_names() {
  std::string names;
  for (const Architecture* a : kArchitectures) names += (names.empty() ? "" : ", ") + std::string(a->name);
  return names;
}

}  // namespace wllm
