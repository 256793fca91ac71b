// WordPiece (tokenizer.ggml.model = "bert": BERT, bge, MiniLM, e5), as
// llama.cpp's llm_tokenizer_wpm_session (src/llama-vocab.cpp):
//   1. normalise like BERT's BasicTokenizer: decode (invalid bytes become
//      U+FFFD), keep only the first code point of each one's NFD and drop
//      marks (strip_accents), lower-case, drop NUL, U+FFFD and control
//      characters;
//   2. split into words at whitespace, and make each punctuation mark, ASCII
//      symbol and CJK ideograph a word of its own;
//   3. match each word greedily, longest token first, as "▁word" (the GGUF
//      vocabulary marks word starts with U+2581 where BERT's marks
//      continuations with "##"); a word with a part no token matches becomes
//      the unknown token.
#include <algorithm>
#include <string>
#include <vector>

#include "tokenizer/tokenizer_data.h"
#include "tokenizer/unicode.h"
#include "tokenizer/utf8.h"

namespace wllm {

namespace {

// llama.cpp's is_chinese_char: the CJK ideograph blocks BERT splits around
// (its 0x2B920 start of one range, not 0x2B820, follows Hugging Face's code).
bool is_cjk_ideograph(uint32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// Steps 1 and 2: the words of `text`, each prefixed with U+2581, appended
// to *words as [begin, end) offsets into *buffer.
void split_words(const TokenizerData& d, std::string_view text, std::string* buffer,
                 std::vector<std::pair<size_t, size_t>>* words) {
  static constexpr std::string_view kWordStart = "\xE2\x96\x81";
  std::vector<uint32_t> cpts;
  decode_utf8_lenient(text, &cpts);
  size_t start = std::string::npos;  // offset of the word being built
  const auto end_word = [&] {
    if (start != std::string::npos && buffer->size() > start + kWordStart.size()) {
      words->emplace_back(start, buffer->size());
    } else if (start != std::string::npos) {
      buffer->resize(start);  // an empty word: nothing but its prefix
    }
    start = std::string::npos;
  };
  const auto begin_word = [&] {
    if (start == std::string::npos) {
      start = buffer->size();
      buffer->append(kWordStart);
    }
  };
  for (uint32_t cpt : cpts) {
    if (d.strip_accents) cpt = unicode::nfd_first(cpt);
    const uint16_t flags = unicode::cpt_flags(cpt);
    if (flags & unicode::kWhitespace) {
      end_word();
      continue;
    }
    if (cpt == 0 || cpt == kReplacementChar || (flags & unicode::kControl)) continue;
    if (d.strip_accents && (flags & unicode::kMark)) continue;
    const uint32_t c = d.lowercase ? unicode::to_lower(cpt) : cpt;
    if ((flags & unicode::kPunctuation) || (cpt < 0x7F && (flags & unicode::kSymbol)) || is_cjk_ideograph(cpt)) {
      end_word();
      begin_word();
      append_utf8(c, buffer);
      end_word();
    } else {
      begin_word();
      append_utf8(c, buffer);
    }
  }
  end_word();
}

// Step 3 for one word (with its U+2581 prefix).
void match_word(const TokenizerData& d, std::string_view word, std::vector<int32_t>* out) {
  const size_t first = out->size();
  const size_t n = word.size();
  for (size_t i = 0; i < n; ++i) {
    bool matched = false;
    for (size_t j = std::min(n, i + d.max_token_len + 1); j > i; --j) {
      const int32_t id = d.find(word.substr(i, j - i));
      if (id >= 0) {
        out->push_back(id);
        matched = true;
        i = j - 1;
        break;
      }
    }
    if (!matched) {  // the word cannot be spelt with tokens: drop its tokens
      out->resize(first);
      break;
    }
  }
  if (out->size() == first && d.unk >= 0) out->push_back(d.unk);
}

}  // namespace

void wpm_encode(const TokenizerData& d, std::string_view text, const std::vector<Fragment>& fragments,
                std::vector<int32_t>* out) {
  std::string buffer;
  std::vector<std::pair<size_t, size_t>> words;
  for (const Fragment& f : fragments) {
    if (f.token >= 0) {
      out->push_back(f.token);
      continue;
    }
    buffer.clear();
    words.clear();
    split_words(d, text.substr(f.offset, f.length), &buffer, &words);
    for (const auto& [begin, end] : words) match_word(d, std::string_view(buffer).substr(begin, end - begin), out);
  }
}

}  // namespace wllm
