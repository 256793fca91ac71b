#include "grammar/gbnf_text.h"

#include "tokenizer/utf8.h"

namespace wllm {
namespace {

// One code point inside a literal or a char class; `special` lists the ASCII
// characters that need a backslash there.
void append_char(uint32_t cp, std::string_view special, std::string* out) {
  if (cp == '\n') {
    *out += "\\n";
  } else if (cp == '\r') {
    *out += "\\r";
  } else if (cp == '\t') {
    *out += "\\t";
  } else if (cp < 0x20 || cp == 0x7F) {
    *out += str_printf("\\x%02X", cp);
  } else if (cp < 0x80 && special.find(static_cast<char>(cp)) != std::string_view::npos) {
    out->push_back('\\');
    out->push_back(static_cast<char>(cp));
  } else if (cp >= 0xD800 && cp <= 0xDFFF) {
    *out += str_printf("\\u%04X", cp);  // not encodable as UTF-8 text
  } else {
    append_utf8(cp, out);
  }
}

}  // namespace

std::string gbnf_literal(std::string_view s) {
  std::string out = "\"";
  size_t i = 0;
  while (i < s.size()) {
    const uint32_t cp = decode_utf8_lenient(s, &i);
    append_char(cp, "\"\\", &out);
  }
  return out + "\"";
}

std::string gbnf_char_class(const std::vector<CodePointRange>& ranges) {
  // Non-ASCII bounds are written as escapes: a class's ends are often
  // invisible or unassigned code points (U+10FFFF).
  const auto bound = [](uint32_t cp, std::string* out) {
    if (cp > 0xFFFF) {
      *out += str_printf("\\U%08X", cp);
    } else if (cp >= 0x80) {
      *out += str_printf("\\u%04X", cp);
    } else {
      append_char(cp, "]\\-\"[", out);
    }
  };
  std::string out = "[";
  for (const CodePointRange& r : ranges) {
    // A '^' first in the set would negate it (GBNF has no \^ escape).
    if (out.size() == 1 && r.lo == '^') {
      out += "\\x5E";
    } else {
      bound(r.lo, &out);
    }
    if (r.hi != r.lo) {
      out.push_back('-');
      bound(r.hi, &out);
    }
  }
  return out + "]";
}

}  // namespace wllm
