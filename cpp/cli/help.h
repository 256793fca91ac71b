// The help texts, built from the Command rows so that the overview and each
// command's own help say the same.
#pragma once

#include <string>
#include <vector>

#include "cli/commands.h"

namespace wllm::cli {

// `wasm-llm --help`: every command's synopsis and summary.
std::string overview_text(const std::vector<const Command*>& commands);

// `wasm-llm help NAME`, `NAME --help`: its usage, summary and details.
std::string usage_text(const Command& command);

}  // namespace wllm::cli
