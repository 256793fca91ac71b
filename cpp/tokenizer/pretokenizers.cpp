// The pre-tokenizer table and its splitters. Matching llama.cpp means copying
// its behaviour, not the regexes' textbook meaning: the custom splitters
// (kGpt2, kLlama3, ...) follow llama.cpp's unicode_regex_split_custom_* in
// src/unicode.cpp branch for branch, and the other steps reproduce what
// std::regex (ECMAScript: leftmost match, alternatives in order, greedy
// quantifiers) finds on llama.cpp's input, where non-ASCII whitespace is
// replaced by U+000B and \s therefore means the White_Space property.
#include "tokenizer/pretokenizers.h"

#include <algorithm>
#include <iterator>

#include "tokenizer/unicode.h"

namespace wllm {

namespace {

using unicode::kLetter;
using unicode::kMark;
using unicode::kNumber;
using unicode::kPunctuation;
using unicode::kWhitespace;

constexpr uint32_t kOutOfRange = 0xFFFFFFFF;

// One piece being re-split: code points [begin, end) of the whole text. Reads
// outside it return kOutOfRange / no flags, as llama.cpp's _get_cpt/_get_flags.
struct Span {
  const uint32_t* cpts;
  const uint16_t* flags;
  size_t begin;
  size_t end;
  uint32_t cpt(size_t p) const { return p < end ? cpts[p] : kOutOfRange; }
  uint16_t flag(size_t p) const { return p < end ? flags[p] : 0; }
};

// Appends the piece ending at `end` (if non-empty); returns its length.
struct Emitter {
  std::vector<size_t>* out;
  size_t prev_end;
  size_t add(size_t end) {
    const size_t len = end - prev_end;
    if (len > 0) out->push_back(len);
    prev_end = end;
    return len;
  }
};

bool is_contraction_1(uint32_t c) { return c == 's' || c == 't' || c == 'm' || c == 'd'; }
bool is_contraction_2(uint32_t c1, uint32_t c2) {
  return (c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l');
}

// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// (llama.cpp: unicode_regex_split_custom_gpt2).
void split_gpt2(const Span& s, std::vector<size_t>* out) {
  Emitter em{out, s.begin};
  size_t pos = s.begin;
  while (pos < s.end) {
    const uint32_t cpt = s.cpt(pos);
    const uint16_t flags = s.flag(pos);

    if (cpt == '\'' && pos + 1 < s.end) {  // 's|'t|'re|'ve|'m|'ll|'d (case-sensitive)
      const uint32_t next = s.cpt(pos + 1);
      if (is_contraction_1(next)) {
        pos += em.add(pos + 2);
        continue;
      }
      if (pos + 2 < s.end && is_contraction_2(next, s.cpt(pos + 2))) {
        pos += em.add(pos + 3);
        continue;
      }
    }

    uint16_t flags2 = cpt == ' ' ? s.flag(pos + 1) : flags;
    if (flags2 & kLetter) {  // ' '?\p{L}+
      pos += cpt == ' ';
      while (flags2 & kLetter) flags2 = s.flag(++pos);
      em.add(pos);
      continue;
    }
    if (flags2 & kNumber) {  // ' '?\p{N}+
      pos += cpt == ' ';
      while (flags2 & kNumber) flags2 = s.flag(++pos);
      em.add(pos);
      continue;
    }
    const auto other = [](uint16_t f) { return !(f & (kWhitespace | kLetter | kNumber)) && f != 0; };
    if (other(flags2)) {  // ' '?[^\s\p{L}\p{N}]+
      pos += cpt == ' ';
      while (other(flags2)) flags2 = s.flag(++pos);
      em.add(pos);
      continue;
    }

    size_t n_ws = 0;
    while (s.flag(pos + n_ws) & kWhitespace) ++n_ws;
    if (n_ws > 1 && s.cpt(pos + n_ws) != kOutOfRange) {  // \s+(?!\S): leave the last one
      pos += n_ws - 1;
      em.add(pos);
      continue;
    }
    if (n_ws > 0) {  // \s+
      pos += n_ws;
      em.add(pos);
      continue;
    }
    em.add(++pos);  // no alternative matched
  }
}

// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,max_digits}|
//   ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
// with `marks`, [\p{L}\p{M}] replaces \p{L} in the letter run and in the
// exclusion of the symbol run (llama.cpp: unicode_regex_split_custom_llama3,
// _qwen2 and _qwen35).
void split_llama3_like(const Span& s, size_t max_digits, bool marks, std::vector<size_t>* out) {
  const uint16_t word = kLetter | (marks ? kMark : 0);
  const uint16_t not_symbol = kWhitespace | kNumber | word;
  Emitter em{out, s.begin};
  size_t pos = s.begin;
  while (pos < s.end) {
    const uint32_t cpt = s.cpt(pos);
    const uint16_t flags = s.flag(pos);

    if (cpt == '\'' && pos + 1 < s.end) {  // contractions, case-insensitive
      const uint32_t next = unicode::ascii_tolower(s.cpt(pos + 1));
      if (is_contraction_1(next)) {
        pos += em.add(pos + 2);
        continue;
      }
      if (pos + 2 < s.end && is_contraction_2(next, unicode::ascii_tolower(s.cpt(pos + 2)))) {
        pos += em.add(pos + 3);
        continue;
      }
    }

    // [^\r\n\p{L}\p{N}]?\p{L}+ : the optional prefix may be any other code point
    if (!(cpt == '\r' || cpt == '\n' || (flags & kNumber))) {
      if ((flags & word) || (s.flag(pos + 1) & word)) {
        ++pos;
        while (s.flag(pos) & word) ++pos;
        em.add(pos);
        continue;
      }
    }

    if (flags & kNumber) {  // \p{N}{1,max_digits}
      size_t ini = pos;
      while (s.flag(pos) & kNumber) {
        if (++pos - ini >= max_digits) {
          em.add(pos);
          ini = pos;
        }
      }
      em.add(pos);
      continue;
    }

    // ' '?[^\s\p{L}\p{N}]+[\r\n]* ; llama.cpp tests the flags of `cpt` itself
    // (not of the code point after the space) for being in range.
    uint16_t flags2 = cpt == ' ' ? s.flag(pos + 1) : flags;
    if (!(flags2 & not_symbol) && flags != 0) {
      pos += cpt == ' ';
      while (!(flags2 & not_symbol) && flags2 != 0) flags2 = s.flag(++pos);
      uint32_t cpt2 = s.cpt(pos);
      while (cpt2 == '\r' || cpt2 == '\n') cpt2 = s.cpt(++pos);
      em.add(pos);
      continue;
    }

    size_t n_ws = 0;
    size_t last_end_r_or_n = 0;
    while (s.flag(pos + n_ws) & kWhitespace) {
      const uint32_t cpt2 = s.cpt(pos + n_ws);
      if (cpt2 == '\r' || cpt2 == '\n') last_end_r_or_n = pos + n_ws + 1;
      ++n_ws;
    }
    if (last_end_r_or_n > 0) {  // \s*[\r\n]+
      pos = last_end_r_or_n;
      em.add(pos);
      continue;
    }
    if (n_ws > 1 && s.cpt(pos + n_ws) != kOutOfRange) {  // \s+(?!\S)
      pos += n_ws - 1;
      em.add(pos);
      continue;
    }
    if (n_ws > 0) {  // \s+
      pos += n_ws;
      em.add(pos);
      continue;
    }
    em.add(++pos);
  }
}

// How std::regex sees a code point: llama.cpp replaces non-ASCII whitespace
// by U+000B before matching.
inline uint32_t regex_view(uint32_t cpt, uint16_t flags) {
  return (cpt > 0x7F && (flags & kWhitespace)) ? 0x0B : cpt;
}

struct Match {
  size_t begin;
  size_t end;
};

// Leftmost match of a regex-like step in [from, s.end); false if none.
bool find_match(const SplitStep& step, const Span& s, size_t from, Match* m) {
  const auto in_class = [&](size_t p) { return step.cls(regex_view(s.cpts[p], s.flags[p]), s.flags[p]); };
  const auto run_end = [&](size_t p) {
    while (p < s.end && in_class(p)) ++p;
    return p;
  };
  switch (step.kind) {
    case SplitKind::kRuns:
      for (size_t q = from; q < s.end; ++q) {
        bool prefix = false;
        if (step.prefix == SplitPrefix::kWhitespace) prefix = (s.flags[q] & kWhitespace) != 0;
        if (step.prefix == SplitPrefix::kSpace) prefix = s.cpts[q] == ' ';
        if (prefix && q + 1 < s.end && in_class(q + 1)) {  // the greedy optional prefix first
          *m = {q, run_end(q + 1)};
          return true;
        }
        if (in_class(q)) {
          *m = {q, run_end(q)};
          return true;
        }
      }
      return false;
    case SplitKind::kEach:
      for (size_t q = from; q < s.end; ++q) {
        if (in_class(q)) {
          *m = {q, q + 1};
          return true;
        }
      }
      return false;
    case SplitKind::kDigitTriples: {
      const auto digit = [&](size_t p) { return s.cpts[p] >= '0' && s.cpts[p] <= '9'; };
      for (size_t q = from; q + 2 < s.end; ++q) {
        if (digit(q) && digit(q + 1) && digit(q + 2)) {
          *m = {q, q + 3};
          return true;
        }
      }
      return false;
    }
    case SplitKind::kTrailingSpaces: {
      size_t q = s.end;
      while (q > from && (s.flags[q - 1] & kWhitespace)) --q;
      if (q == s.end) return false;
      *m = {q, s.end};
      return true;
    }
    default:
      return false;
  }
}

// Re-splits one piece with a regex-like step: matches and the gaps between
// them both become pieces (llama.cpp: unicode_regex_split_stl).
void split_regex(const SplitStep& step, const Span& s, std::vector<size_t>* out) {
  size_t pos = s.begin;
  Match m;
  while (pos < s.end && find_match(step, s, pos, &m)) {
    if (m.begin > pos) out->push_back(m.begin - pos);
    out->push_back(m.end - m.begin);
    pos = m.end;
  }
  if (pos < s.end) out->push_back(s.end - pos);
}

void apply_step(const SplitStep& step, const Span& s, std::vector<size_t>* out) {
  switch (step.kind) {
    case SplitKind::kGpt2:
      return split_gpt2(s, out);
    case SplitKind::kLlama3:
      return split_llama3_like(s, 3, false, out);
    case SplitKind::kQwen2:
      return split_llama3_like(s, 1, false, out);
    case SplitKind::kQwen35:
      return split_llama3_like(s, 1, true, out);
    default:
      return split_regex(step, s, out);
  }
}

// ---- code-point classes ----------------------------------------------------

struct CptRangeIncl {
  uint32_t lo;
  uint32_t hi;
};

template <size_t N>
bool in_ranges(const CptRangeIncl (&ranges)[N], uint32_t cpt) {
  for (const CptRangeIncl& r : ranges) {
    if (cpt >= r.lo && cpt <= r.hi) return true;
  }
  return false;
}

bool cls_number(uint32_t, uint16_t flags) { return flags & kNumber; }
bool cls_letter(uint32_t, uint16_t flags) { return flags & kLetter; }
bool cls_punctuation(uint32_t, uint16_t flags) { return flags & kPunctuation; }
bool cls_cr_lf(uint32_t cpt, uint16_t) { return cpt == '\r' || cpt == '\n'; }
bool cls_lf(uint32_t cpt, uint16_t) { return cpt == '\n'; }

// [\p{P}\$\+<=>\^~\|]
bool cls_default_punct(uint32_t cpt, uint16_t flags) {
  if (flags & kPunctuation) return true;
  switch (cpt) {
    case '$': case '+': case '<': case '=': case '>': case '^': case '~': case '|':
      return true;
    default:
      return false;
  }
}

// [\p{P}\$\+<=>\^~\|`]
bool cls_falcon_punct(uint32_t cpt, uint16_t flags) { return cpt == '`' || cls_default_punct(cpt, flags); }

// deepseek-llm's letter class: [A-Za-zµÀ-ÖØ-öø-ƺ ... 𞤀-𞥃], transcribed from llama.cpp.
bool cls_deepseek_letters(uint32_t cpt, uint16_t) {
  static constexpr CptRangeIncl kRanges[] = {
      {0x0041, 0x005A}, {0x0061, 0x007A}, {0x00B5, 0x00B5}, {0x00C0, 0x00D6}, {0x00D8, 0x00F6},
      {0x00F8, 0x01BA}, {0x01BC, 0x01BF}, {0x01C4, 0x0293}, {0x0295, 0x02AF}, {0x0370, 0x0373},
      {0x0376, 0x0377}, {0x037B, 0x037D}, {0x037F, 0x037F}, {0x0386, 0x0386}, {0x0388, 0x038A},
      {0x038C, 0x038C}, {0x038E, 0x03A1}, {0x03A3, 0x03F5}, {0x03F7, 0x0481}, {0x048A, 0x052F},
      {0x0531, 0x0556}, {0x10A0, 0x10C5}, {0x13A0, 0x13F5}, {0x13F8, 0x13FD}, {0x1C90, 0x1CBA},
      {0x1CBD, 0x1CBF}, {0x1D00, 0x1D2B}, {0x1D6B, 0x1D77}, {0x1D79, 0x1D9A}, {0x1E00, 0x1F15},
      {0x1F18, 0x1F1D}, {0x1F20, 0x1F45}, {0x1F48, 0x1F4D}, {0x1F50, 0x1F57}, {0x1F59, 0x1F59},
      {0x1F5B, 0x1F5B}, {0x1F5D, 0x1F5D}, {0x1F5F, 0x1F7D}, {0x1F80, 0x1FB4}, {0x1FB6, 0x1FBC},
      {0x1FBE, 0x1FBE}, {0x1FC2, 0x1FC4}, {0x1FC6, 0x1FCC}, {0x1FD0, 0x1FD3}, {0x1FD6, 0x1FDB},
      {0x1FE0, 0x1FEC}, {0x1FF2, 0x1FF4}, {0x1FF6, 0x1FFC}, {0x2102, 0x2102}, {0x2107, 0x2107},
      {0x210A, 0x2113}, {0x2115, 0x2115}, {0x2119, 0x211D}, {0x2124, 0x2124}, {0x2126, 0x2126},
      {0x2128, 0x2128}, {0x212A, 0x212D}, {0x212F, 0x2134}, {0x2139, 0x2139}, {0x213C, 0x213F},
      {0x2145, 0x2149}, {0x214E, 0x214E}, {0x2183, 0x2184}, {0x2C00, 0x2C7B}, {0x2C7E, 0x2CE4},
      {0x2CEB, 0x2CEE}, {0x2CF2, 0x2CF3}, {0xA640, 0xA66D}, {0xA680, 0xA69B}, {0xA722, 0xA76F},
      {0xA771, 0xA787}, {0xA78B, 0xA78E}, {0xAB70, 0xABBF}, {0xFB00, 0xFB06}, {0xFB13, 0xFB17},
      {0xFF21, 0xFF3A}, {0xFF41, 0xFF5A}, {0x10400, 0x1044F}, {0x104B0, 0x104D3}, {0x104D8, 0x104FB},
      {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943},
  };
  return in_ranges(kRanges, cpt);
}

// deepseek-llm's punctuation class: [!-/:-~！-／：-～‘-‟　-。]. U+3000 never
// matches: as whitespace it reaches the regex as U+000B.
bool cls_deepseek_punct(uint32_t cpt, uint16_t) {
  static constexpr CptRangeIncl kRanges[] = {
      {0x0021, 0x002F}, {0x003A, 0x007E}, {0xFF01, 0xFF0F}, {0xFF1A, 0xFF5E}, {0x2018, 0x201F}, {0x3000, 0x3002},
  };
  return in_ranges(kRanges, cpt);
}

// [一-龥ࠀ-一가-퟿] (deepseek's CJK and Hangul runs)
bool cls_cjk_hangul(uint32_t cpt, uint16_t) {
  static constexpr CptRangeIncl kRanges[] = {{0x4E00, 0x9FA5}, {0x0800, 0x4E00}, {0xAC00, 0xD7FF}};
  return in_ranges(kRanges, cpt);
}

// [^(\s|.,!?…。，、।۔،)] (bloom, poro, gpt3-finnish, viking)
bool cls_bloom_word(uint32_t cpt, uint16_t flags) {
  if (flags & kWhitespace) return false;
  switch (cpt) {
    case '(': case '|': case '.': case ',': case '!': case '?': case ')':
    case 0x2026: case 0x3002: case 0xFF0C: case 0x3001: case 0x0964: case 0x06D4: case 0x060C:
      return false;
    default:
      return true;
  }
}

// ---- regex sets (llama.cpp: llm_tokenizer_bpe's constructor) ----------------

constexpr SplitStep kGpt2Step{SplitKind::kGpt2};

constexpr SplitStep kSetDefault[] = {
    {SplitKind::kRuns, cls_default_punct},  // [\p{P}\$\+<=>\^~\|]+
    kGpt2Step,
    {SplitKind::kRuns, cls_number},  // \p{N}+
    {SplitKind::kDigitTriples},      // [0-9][0-9][0-9]
};
constexpr SplitStep kSetGpt2[] = {kGpt2Step};
constexpr SplitStep kSetLlama3[] = {{SplitKind::kLlama3}};
constexpr SplitStep kSetQwen2[] = {{SplitKind::kQwen2}};
constexpr SplitStep kSetQwen35[] = {{SplitKind::kQwen35}};
constexpr SplitStep kSetStarcoder[] = {
    {SplitKind::kEach, cls_number},  // \p{N}
    kGpt2Step,
};
constexpr SplitStep kSetFalcon[] = {
    {SplitKind::kRuns, cls_falcon_punct},  // [\p{P}\$\+<=>\^~\|`]+
    kGpt2Step,
    {SplitKind::kDigitTriples},  // [0-9][0-9][0-9]
};
constexpr SplitStep kSetDeepseekLlm[] = {
    {SplitKind::kEach, cls_cr_lf},                                   // [\r\n]
    {SplitKind::kRuns, cls_deepseek_letters, SplitPrefix::kWhitespace},  // \s?[A-Za-zµÀ-Ö...]+
    {SplitKind::kRuns, cls_deepseek_punct, SplitPrefix::kWhitespace},    // \s?[!-/:-~...]+
    {SplitKind::kTrailingSpaces},                                    // \s+$
    {SplitKind::kRuns, cls_cjk_hangul},                              // [一-龥ࠀ-一가-퟿]+
    {SplitKind::kRuns, cls_number},                                  // \p{N}+
};
constexpr SplitStep kSetDeepseekCoder[] = {
    {SplitKind::kEach, cls_cr_lf},                                 // [\r\n]
    {SplitKind::kRuns, cls_letter, SplitPrefix::kWhitespace},       // \s?\p{L}+
    {SplitKind::kRuns, cls_punctuation, SplitPrefix::kWhitespace},  // \s?\p{P}+
    {SplitKind::kRuns, cls_cjk_hangul},                            // [一-龥ࠀ-一가-퟿]+
    {SplitKind::kEach, cls_number},                                // \p{N}
};
constexpr SplitStep kSetBloom[] = {
    {SplitKind::kRuns, cls_bloom_word, SplitPrefix::kSpace},  //  ?[^(\s|.,!?…。，、।۔،)]+
};
// [^\n]+|[\n]+ : runs of newlines are the matches, the text between them the gaps.
constexpr SplitStep kSetLines[] = {{SplitKind::kRuns, cls_lf}};
constexpr SplitStep kSetViking[] = {
    {SplitKind::kRuns, cls_bloom_word, SplitPrefix::kSpace},
    {SplitKind::kEach, cls_number},  // \p{N}
};

// THE table: every tokenizer.ggml.pre value this engine accepts, with the
// regex set and flags llama.cpp's llama_vocab::impl::load gives it.
const PreTokenizer kPreTable[] = {
    {"default", kSetDefault},
    {"llama3", kSetLlama3, true, true},
    {"llama-v3", kSetLlama3, true, true},
    {"llama-bpe", kSetLlama3, true, true},
    {"falcon3", kSetLlama3, true, true},
    {"falcon-h1", kSetLlama3, true, true},
    {"pixtral", kSetLlama3, true, true},
    {"midm-2.0", kSetLlama3, true, true},
    {"lfm2", kSetLlama3, true, true},
    {"jina-v5-nano", kSetLlama3, true, true},
    {"dbrx", kSetLlama3},
    {"smaug-bpe", kSetLlama3},
    {"glm4", kSetLlama3, false, false, true},
    {"chatglm-bpe", kSetLlama3, false, false, true},
    {"qwen2", kSetQwen2},
    {"deepseek-r1-qwen", kSetQwen2},
    {"kormo", kSetQwen2},
    {"f2llmv2", kSetQwen2},
    {"megrez", kSetQwen2},
    {"stablelm2", kSetQwen2},
    {"hunyuan", kSetQwen2},
    {"solar-open", kSetQwen2},
    {"grok-2", kSetQwen2},
    {"qwen35", kSetQwen35},
    {"gpt-2", kSetGpt2},
    {"phi-2", kSetGpt2},
    {"jina-es", kSetGpt2},
    {"jina-de", kSetGpt2},
    {"gigachat", kSetGpt2},
    {"jina-v2-es", kSetGpt2},
    {"jina-v2-de", kSetGpt2},
    {"a.x-4.0", kSetGpt2},
    {"mellum", kSetGpt2},
    {"modern-bert", kSetGpt2},
    {"exaone4", kSetGpt2},
    {"jina-v1-en", kSetGpt2},
    {"jina-v2-code", kSetGpt2},
    {"roberta-bpe", kSetGpt2},
    {"mpt", kSetGpt2},
    {"olmo", kSetGpt2},
    {"jais", kSetGpt2},
    {"trillion", kSetGpt2},
    {"granite-docling", kSetGpt2},
    {"starcoder", kSetStarcoder},
    {"refact", kSetStarcoder},
    {"command-r", kSetStarcoder},
    {"smollm", kSetStarcoder},
    {"codeshell", kSetStarcoder},
    {"exaone", kSetStarcoder},
    {"minerva-7b", kSetStarcoder},
    {"mellum2", kSetStarcoder},
    {"falcon", kSetFalcon},
    {"deepseek-llm", kSetDeepseekLlm},
    {"deepseek-coder", kSetDeepseekCoder},
    {"poro-chat", kSetBloom},
    {"bloom", kSetBloom},
    {"gpt3-finnish", kSetBloom},
    {"viking", kSetViking},
    // The pre-tokenizer of tokenizer.ggml.model = "gemma4" (whatever the file says).
    {"gemma4", kSetLines, false, true, false, true},
};

}  // namespace

const PreTokenizer* find_pre_tokenizer(std::string_view name) {
  if (name.empty()) name = "default";  // llama.cpp: a missing key means 'default'
  for (const PreTokenizer& p : kPreTable) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::vector<std::string_view> pre_tokenizer_names() {
  std::vector<std::string_view> names;
  for (const PreTokenizer& p : kPreTable) names.push_back(p.name);
  return names;
}

void pre_tokenize(const PreTokenizer& pre, const std::vector<uint32_t>& cpts, std::vector<size_t>* lengths,
                  PreTokenizeScratch* scratch) {
  lengths->clear();
  if (cpts.empty()) return;
  scratch->flags.resize(cpts.size());
  for (size_t i = 0; i < cpts.size(); ++i) scratch->flags[i] = unicode::cpt_flags(cpts[i]);

  // Each step re-splits the pieces of the previous one; start from one piece.
  std::vector<size_t>* in = &scratch->pieces;
  std::vector<size_t>* out = lengths;
  in->assign(1, cpts.size());
  for (const SplitStep& step : pre.steps) {
    out->clear();
    size_t begin = 0;
    for (size_t len : *in) {
      apply_step(step, Span{cpts.data(), scratch->flags.data(), begin, begin + len}, out);
      begin += len;
    }
    std::swap(in, out);
  }
  if (in != lengths) lengths->swap(*in);
}

}  // namespace wllm
