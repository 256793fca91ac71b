// Writing GBNF text: the schema compiler builds its grammars as text, so the
// one parser (parse_gbnf) checks every grammar the engine runs, and the text
// can be printed and read.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "grammar/grammar.h"

namespace wllm {

// "..." matching exactly the UTF-8 text `s`.
std::string gbnf_literal(std::string_view s);
// [...] matching one code point in `ranges` (sorted, disjoint, non-empty).
std::string gbnf_char_class(const std::vector<CodePointRange>& ranges);

}  // namespace wllm
