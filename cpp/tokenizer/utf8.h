// UTF-8 helpers of two kinds:
//  - llama.cpp-compatible lenient decoding, which the tokenizers must copy
//    byte for byte to produce the same ids on any input, valid or not;
//  - strict validation (Unicode 15 Table 3-7) for text we hand to callers,
//    so a stream never carries a broken sequence.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace wllm {

inline constexpr uint32_t kReplacementChar = 0xFFFD;

// Sequence length implied by a lead byte, as llama.cpp's unicode_len_utf8:
// 1 for ASCII and for stray continuation bytes, 2 for C0-DF, 3 for E0-EF,
// 4 for F0-FF. No validation: the tokenizers split symbols with it.
inline size_t utf8_seq_len(uint8_t lead) {
  static constexpr uint8_t kLen[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLen[lead >> 4];
}

// Decodes one code point at *offset and advances it, as llama.cpp's
// unicode_cpts_from_utf8 does: lead and continuation bits are checked but
// overlong forms and surrogates are accepted; anything else yields U+FFFD and
// skips one byte. Unlike llama.cpp (which throws later, re-encoding it), a
// value above U+10FFFF (lead bytes F4-F7) is also treated as invalid.
uint32_t decode_utf8_lenient(std::string_view text, size_t* offset);
void decode_utf8_lenient(std::string_view text, std::vector<uint32_t>* out);

// Appends the UTF-8 encoding of `cpt` (<= 0x10FFFF; surrogates are encoded
// as three bytes, like llama.cpp's unicode_cpt_to_utf8).
void append_utf8(uint32_t cpt, std::string* out);

// Strict check of the bytes at the start of `bytes` (non-empty).
struct Utf8Step {
  enum Kind { kValid, kInvalid, kIncomplete } kind;
  // kValid: length of the character. kInvalid: length of the maximal
  // ill-formed subpart to replace with one U+FFFD (WHATWG/Unicode practice).
  // kIncomplete: the bytes so far could still become a valid character.
  size_t length;
};
Utf8Step utf8_step(std::string_view bytes);

// True if `text` is entirely well-formed UTF-8.
bool is_valid_utf8(std::string_view text);

// Appends `text` to *out with every ill-formed subpart replaced by U+FFFD
// (an incomplete sequence at the end counts as ill-formed).
void append_sanitized_utf8(std::string_view text, std::string* out);

}  // namespace wllm
