// What a mistyped flag or command name probably stands for, so an error can
// say "did you mean ...?" (the JS API does the same for option names:
// js/option-names.js).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace wllm::cli {

// The flag of `known` that `given` stands for, or "": the same flag in
// another case or spelling (--Temp, --top_k), another tool's name for it
// (--max-tokens for -n, --temperature for --temp: llama.cpp, transformers,
// OpenAI), or a typo of a letter or two (--temprature).
std::string flag_meant(std::string_view given, const std::vector<std::string_view>& known);

// The name of `known` that `given` is a typo of (a letter or two), or "".
std::string name_meant(std::string_view given, const std::vector<std::string_view>& known);

}  // namespace wllm::cli
