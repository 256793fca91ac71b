// Code-point classification for the pre-tokenizers, without a Unicode library
// (design-notes §7). The data is one generated table of ranges
// (unicode_tables.cpp, written by tools/gen_unicode_tables.py); the flag
// values are those of llama.cpp's unicode_cpt_flags (src/unicode.h), whose
// splitters we reproduce.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace wllm::unicode {

// Exactly one category bit is set for every code point below 0x110000.
enum CptFlag : uint16_t {
  kUndefined = 0x0001,    // unassigned (Cn)
  kNumber = 0x0002,       // \p{N}
  kLetter = 0x0004,       // \p{L}
  kSeparator = 0x0008,    // \p{Z}
  kMark = 0x0010,         // \p{M}
  kPunctuation = 0x0020,  // \p{P}
  kSymbol = 0x0040,       // \p{S}
  kControl = 0x0080,      // \p{C} (Cc, Cf, Co, Cs)
  kCategoryMask = 0x00FF,
  kWhitespace = 0x0100,   // White_Space property: what \s means in every splitter
};

struct CptRange {
  uint32_t first;  // the range runs up to the next entry's `first`
  uint16_t flags;
};

struct CptPair {
  uint32_t from;
  uint32_t to;
};

// Generated (unicode_tables.cpp).
extern const CptRange kCptRanges[];
extern const size_t kCptRangeCount;
extern const CptPair kLowercase[];  // sorted by `from`
extern const size_t kLowercaseCount;
extern const CptPair kNfdFirst[];   // sorted by `from`
extern const size_t kNfdFirstCount;

// Flags of `cpt`; kUndefined above U+10FFFF.
uint16_t cpt_flags(uint32_t cpt);

inline bool is_whitespace(uint32_t cpt) { return (cpt_flags(cpt) & kWhitespace) != 0; }
inline bool is_letter(uint32_t cpt) { return (cpt_flags(cpt) & kLetter) != 0; }
inline bool is_number(uint32_t cpt) { return (cpt_flags(cpt) & kNumber) != 0; }
inline bool is_punctuation(uint32_t cpt) { return (cpt_flags(cpt) & kPunctuation) != 0; }

// The simple lowercase mapping of `cpt` (UnicodeData.txt), or `cpt` itself:
// llama.cpp's unicode_tolower, which WordPiece's normaliser applies.
uint32_t to_lower(uint32_t cpt);
// The first code point of cpt's canonical decomposition (NFD), or `cpt`: what
// llama.cpp's unicode_cpts_normalize_nfd keeps of each code point (it drops
// the combining marks that follow, which WordPiece strips anyway).
uint32_t nfd_first(uint32_t cpt);

// Lower-cases ASCII only. The splitters lower-case just to test contractions
// ('S, 'LL, ...), and no non-ASCII code point lower-cases to s t m d r e v l,
// so this gives the same answers as llama.cpp's full unicode_tolower there.
inline uint32_t ascii_tolower(uint32_t cpt) { return (cpt >= 'A' && cpt <= 'Z') ? cpt + 32 : cpt; }

// GPT-2's reversible byte <-> code point mapping (bytes_to_unicode() in
// OpenAI's encoder.py, unicode_byte_to_utf8_map in llama.cpp): printable
// Latin-1 bytes map to themselves, the other 68 to U+0100.. in byte order.
uint32_t gpt2_byte_to_cpt(uint8_t byte);
// The byte for a code point of that mapping, or -1 if it is not one.
int gpt2_cpt_to_byte(uint32_t cpt);

}  // namespace wllm::unicode
