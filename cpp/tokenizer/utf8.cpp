#include "tokenizer/utf8.h"

namespace wllm {

namespace {

inline bool is_cont(uint8_t b) { return (b & 0xC0) == 0x80; }

}  // namespace

uint32_t decode_utf8_lenient(std::string_view text, size_t* offset) {
  // Same acceptance rules as llama.cpp's unicode_cpt_from_utf8 (src/unicode.cpp).
  const size_t i = *offset;
  const size_t n = text.size();
  const auto at = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t b0 = at(i);
  if (b0 < 0x80) {
    *offset = i + 1;
    return b0;
  }
  uint32_t cpt = kReplacementChar;
  size_t len = 1;
  if ((b0 & 0x40) == 0) {
    // stray continuation byte
  } else if ((b0 & 0x20) == 0) {
    if (i + 1 < n && is_cont(at(i + 1))) {
      cpt = ((b0 & 0x1Fu) << 6) | (at(i + 1) & 0x3Fu);
      len = 2;
    }
  } else if ((b0 & 0x10) == 0) {
    if (i + 2 < n && is_cont(at(i + 1)) && is_cont(at(i + 2))) {
      cpt = ((b0 & 0x0Fu) << 12) | ((at(i + 1) & 0x3Fu) << 6) | (at(i + 2) & 0x3Fu);
      len = 3;
    }
  } else if ((b0 & 0x08) == 0) {
    if (i + 3 < n && is_cont(at(i + 1)) && is_cont(at(i + 2)) && is_cont(at(i + 3))) {
      const uint32_t v = ((b0 & 0x07u) << 18) | ((at(i + 1) & 0x3Fu) << 12) | ((at(i + 2) & 0x3Fu) << 6) |
                         (at(i + 3) & 0x3Fu);
      if (v <= 0x10FFFF) {
        cpt = v;
        len = 4;
      }
    }
  }
  *offset = i + len;
  return cpt;
}

void decode_utf8_lenient(std::string_view text, std::vector<uint32_t>* out) {
  out->clear();
  out->reserve(text.size());
  size_t offset = 0;
  while (offset < text.size()) out->push_back(decode_utf8_lenient(text, &offset));
}

void append_utf8(uint32_t cpt, std::string* out) {
  if (cpt <= 0x7F) {
    out->push_back(static_cast<char>(cpt));
  } else if (cpt <= 0x7FF) {
    out->push_back(static_cast<char>(0xC0 | (cpt >> 6)));
    out->push_back(static_cast<char>(0x80 | (cpt & 0x3F)));
  } else if (cpt <= 0xFFFF) {
    out->push_back(static_cast<char>(0xE0 | (cpt >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cpt >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cpt & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | ((cpt >> 18) & 0x07)));
    out->push_back(static_cast<char>(0x80 | ((cpt >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cpt >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cpt & 0x3F)));
  }
}

Utf8Step utf8_step(std::string_view bytes) {
  const auto at = [&](size_t k) { return static_cast<uint8_t>(bytes[k]); };
  const uint8_t b0 = at(0);
  if (b0 < 0x80) return {Utf8Step::kValid, 1};
  size_t need;
  uint8_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte (Table 3-7)
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 3;
    if (b0 == 0xE0) lo = 0xA0;  // no overlongs
    if (b0 == 0xED) hi = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 4;
    if (b0 == 0xF0) lo = 0x90;  // no overlongs
    if (b0 == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return {Utf8Step::kInvalid, 1};  // 80-C1, F5-FF never start a character
  }
  for (size_t k = 1; k < need; ++k) {
    if (k >= bytes.size()) return {Utf8Step::kIncomplete, k};
    const uint8_t b = at(k);
    const bool ok = k == 1 ? (b >= lo && b <= hi) : is_cont(b);
    if (!ok) return {Utf8Step::kInvalid, k};
  }
  return {Utf8Step::kValid, need};
}

bool is_valid_utf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const Utf8Step s = utf8_step(text.substr(i));
    if (s.kind != Utf8Step::kValid) return false;
    i += s.length;
  }
  return true;
}

void append_sanitized_utf8(std::string_view text, std::string* out) {
  size_t i = 0;
  while (i < text.size()) {
    const Utf8Step s = utf8_step(text.substr(i));
    if (s.kind == Utf8Step::kValid) {
      out->append(text.substr(i, s.length));
    } else {
      append_utf8(kReplacementChar, out);
    }
    i += s.length;
  }
}

}  // namespace wllm
