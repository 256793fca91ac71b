// Pre-tokenizers of the byte-level BPE vocabularies: split text into words
// before BPE merges run inside each word. `tokenizer.ggml.pre` names one of
// them; each is a list of splitting steps applied in turn, every step
// re-splitting the pieces the previous one produced (llama.cpp's
// unicode_regex_split in src/unicode.cpp).
//
// llama.cpp runs most of these regexes through std::regex on a "collapsed"
// string and a few through hand-written splitters; here every step is
// hand-written and follows its regex's alternatives in order, with the exact
// quirks of llama.cpp's code (design-notes §7).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace wllm {

enum class SplitKind : uint8_t {
  kGpt2,            // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  kLlama3,          // (?i:'s|...)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  kQwen2,           // as kLlama3 with \p{N} single digits
  kQwen35,          // as kQwen2 with marks joining letters: [\p{L}\p{M}]+
  kRuns,            // P?C+ : runs of a class C, P an optional one-code-point prefix
  kEach,            // C    : every code point of class C alone
  kDigitTriples,    // [0-9][0-9][0-9]
  kTrailingSpaces,  // \s+$
};

// Optional single code point before a run (kRuns).
enum class SplitPrefix : uint8_t {
  kNone,
  kWhitespace,  // \s?
  kSpace,       // " ?"
};

// A code-point class. `cpt` is the code point as llama.cpp's std::regex sees
// it: non-ASCII whitespace already replaced by U+000B.
using CptClass = bool (*)(uint32_t cpt, uint16_t flags);

struct SplitStep {
  SplitKind kind;
  CptClass cls = nullptr;
  SplitPrefix prefix = SplitPrefix::kNone;
};

struct PreTokenizer {
  std::string_view name;
  std::span<const SplitStep> steps;
  // Flags llama.cpp's llama_vocab::impl::load attaches to some names.
  bool ignore_merges = false;  // a word that is itself a token skips BPE
  bool add_bos = false;        // default of tokenizer.ggml.add_bos_token
  bool no_default_bos = false; // BOS id defaults to none instead of 11
  // SentencePiece-style BPE (gemma4): spaces become U+2581 before the split,
  // words stay UTF-8 (no GPT-2 byte characters), a word of newlines that is a
  // token is taken whole, bytes without a token fall back to <0xXX>, and BOS
  // is always added.
  bool spm_style = false;
};

// The pre-tokenizer for a `tokenizer.ggml.pre` value; "" (key absent) is
// "default". Returns nullptr for a name this engine does not implement.
const PreTokenizer* find_pre_tokenizer(std::string_view name);

// Every name find_pre_tokenizer() accepts (for messages and tests).
std::vector<std::string_view> pre_tokenizer_names();

// Buffers pre_tokenize() reuses between calls.
struct PreTokenizeScratch {
  std::vector<uint16_t> flags;  // [n_cpts] unicode::cpt_flags of each code point
  std::vector<size_t> pieces;   // the previous step's piece lengths
};

// Splits `cpts` into words: *lengths (cleared first) receives each word's
// length in code points, in order, summing to cpts.size().
void pre_tokenize(const PreTokenizer& pre, const std::vector<uint32_t>& cpts, std::vector<size_t>* lengths,
                  PreTokenizeScratch* scratch);

}  // namespace wllm
