// Saved states as files (`generate --prompt-cache FILE`; the format is
// engine/state_file.h's): read into the engine in pieces, written through a
// temporary file that replaces the old one only once complete.
#pragma once

#include <string>

#include "core/status.h"
#include "engine/engine.h"

namespace wllm::cli {

// Restores the state saved in `path`: false if there is no such file.
Result<bool> load_state_file(const std::string& path, Engine* engine);

// Saves the engine's state (the tokens its cache holds) to `path`.
Status save_state_file(const std::string& path, Engine* engine);

}  // namespace wllm::cli
