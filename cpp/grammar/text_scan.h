// Small scanning helpers shared by the grammar area's readers (GBNF, JSON,
// regex patterns).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tokenizer/utf8.h"

namespace wllm {

// Whether `c` may be part of a GBNF rule name.
inline bool is_rule_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

// The value of a hexadecimal digit, or -1.
inline int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads the well-formed UTF-8 character at text[*pos] into *cp and moves
// *pos past it; false (nothing moved) if the bytes there are ill-formed.
inline bool next_utf8_char(std::string_view text, size_t* pos, uint32_t* cp) {
  const Utf8Step s = utf8_step(text.substr(*pos));
  if (s.kind != Utf8Step::kValid) return false;
  size_t offset = *pos;
  *cp = decode_utf8_lenient(text, &offset);
  *pos += s.length;
  return true;
}

}  // namespace wllm
