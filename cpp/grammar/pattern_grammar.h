// JSON Schema "pattern" (an ECMAScript regular expression, as validators
// run it with the u flag) to GBNF. The grammar describes the JSON text
// between a string's quotes, so every character of the pattern becomes the
// ways JSON may write it: itself, or an escape for '"', '\' and control
// characters. As the spec says, a pattern matches anywhere in the string
// unless anchored with ^ and $.
//
// Supported: literals and escapes (\t \n \r \v \f \0 \xHH \uHHHH \u{H..}
// \cX and escaped syntax characters), . \d \D \w \W \s \S, classes [...]
// and [^...] with ranges, groups ( ) (?: ) (?<name> ), alternation, the
// quantifiers * + ? {n} {n,} {n,m} and their lazy forms, ^ and $ at the
// start and end of a top-level alternative. Anything else is an error that
// names it and its offset: lookaround, backreferences, \b and \B, \p{..},
// anchors elsewhere, and a repeated group that can match nothing (a*)*.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "grammar/grammar.h"

namespace wllm {

// `any_char`: the name of a rule matching any one JSON string character
// (used where the pattern is not anchored).
Result<std::string> pattern_gbnf(std::string_view pattern, std::string_view any_char);

// A GBNF expression for one JSON string character (as written in JSON)
// whose value is in `set`; "" if no character of the set can be written.
std::string json_char_gbnf(const std::vector<CodePointRange>& set);

}  // namespace wllm
