// Unigram (tokenizer.ggml.model = "t5": XLM-RoBERTa's SentencePiece
// vocabulary in nomic-embed-text-v2, bge-m3, bge-reranker-v2-m3, T5), as
// llama.cpp's llm_tokenizer_ugm_session (src/llama-vocab.cpp):
//   1. normalise: the longest prefix the precompiled charsmap maps is
//      replaced (SentencePiece's NFKC tables), spaces become U+2581, runs of
//      them collapse (remove_extra_whitespaces) and a leading one is added;
//   2. Viterbi over the normalised bytes: the tokenization whose scores
//      (log probabilities; user-defined tokens 0) sum highest, a code point
//      no token covers costing the lowest score minus 10 as the unknown
//      token; consecutive unknowns merge into one.
#include <algorithm>
#include <cfloat>
#include <string>
#include <vector>

#include "tokenizer/tokenizer_data.h"
#include "tokenizer/utf8.h"

namespace wllm {

namespace {

constexpr std::string_view kEscapedSpace = "\xE2\x96\x81";

// Length of the UTF-8 character at text[offset], or 0 if llama.cpp's
// unicode_cpt_from_utf8 rejects it (bad lead or continuation bits, or cut
// off by the end; overlong forms and surrogates pass).
size_t llama_utf8_length(std::string_view text, size_t offset) {
  const auto at = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  const uint8_t lead = at(offset);
  size_t n;
  if (!(lead & 0x80)) return 1;
  if (!(lead & 0x40)) return 0;
  if (!(lead & 0x20)) {
    n = 2;
  } else if (!(lead & 0x10)) {
    n = 3;
  } else if (!(lead & 0x08)) {
    n = 4;
  } else {
    return 0;
  }
  if (offset + n > text.size()) return 0;
  for (size_t i = 1; i < n; ++i) {
    if ((at(offset + i) & 0xC0) != 0x80) return 0;
  }
  return n;
}

// The charsmap's XOR-compressed compact double array (Kanda 2018), one
// packed entry per node: BASE in bits 10-30 (shifted by 8 when bit 9 is
// set), LCHECK in bits 0-7 (bit 31 marks an entry no byte matches), LEAF in
// bit 8. An index outside the array ends the walk (llama.cpp throws there).
class DoubleArray {
 public:
  explicit DoubleArray(const std::vector<uint32_t>& nodes) : nodes_(nodes) {}
  bool node(size_t i, uint32_t* packed) const {
    if (i >= nodes_.size()) return false;
    *packed = nodes_[i];
    return true;
  }
  static uint32_t base(uint32_t p) { return (p >> 10) << ((p & (1u << 9)) >> 6); }
  static uint32_t lcheck(uint32_t p) { return p & ((1u << 31) | 0xFF); }
  static bool leaf(uint32_t p) { return (p >> 8) & 1; }
  static uint32_t value(uint32_t p) { return p & ((1u << 31) - 1); }

 private:
  const std::vector<uint32_t>& nodes_;
};

struct Normalized {
  std::string_view text;  // what replaces the consumed bytes
  size_t consumed;
};

class UgmSession {
 public:
  explicit UgmSession(const TokenizerData& d) : d_(d), u_(d.ugm) {}

  void encode(std::string_view raw, std::vector<int32_t>* out) {
    normalize(raw);
    viterbi(out);
  }

 private:
  // The normalisation of the input's next few bytes at `offset`.
  Normalized normalize_prefix(std::string_view input, size_t offset) const {
    // A user-defined token's text is kept as it is; llama.cpp's trie walk
    // counts the deepest node reached, a whole token or not.
    size_t user_defined = 0;
    for (int32_t node = 0; offset + user_defined < input.size();) {
      node = u_.user_defined.child(node, static_cast<uint8_t>(input[offset + user_defined]));
      if (node < 0) break;
      ++user_defined;
    }
    if (user_defined > 0) return {input.substr(offset, user_defined), user_defined};

    // The longest prefix the charsmap has a replacement for.
    size_t longest = 0, replacement = 0;
    const DoubleArray xcda(u_.charsmap_xcda);
    uint32_t packed = 0;
    if (xcda.node(0, &packed)) {
      uint32_t index = DoubleArray::base(packed);
      for (size_t p = offset; p < input.size(); ++p) {
        const uint8_t c = static_cast<uint8_t>(input[p]);
        if (c == 0) break;
        index ^= c;
        if (!xcda.node(index, &packed) || DoubleArray::lcheck(packed) != c) break;
        const bool is_leaf = DoubleArray::leaf(packed);
        index ^= DoubleArray::base(packed);
        if (is_leaf) {
          if (!xcda.node(index, &packed)) break;
          longest = p - offset + 1;
          replacement = DoubleArray::value(packed);
        }
      }
    }
    if (longest > 0 && replacement < u_.charsmap_strings.size()) {
      const std::string_view strings(u_.charsmap_strings);
      const size_t end = strings.find('\0', replacement);
      if (end != std::string_view::npos) return {strings.substr(replacement, end - replacement), longest};
    }
    // No replacement: a valid character as it is, else one byte as U+FFFD.
    const size_t n = llama_utf8_length(input, offset);
    if (n > 0) return {input.substr(offset, n), n};
    return {"\xEF\xBF\xBD", 1};
  }

  // normalized_ = the input normalised, spaces escaped (llama.cpp's normalize).
  void normalize(std::string_view input) {
    normalized_.clear();
    const bool prepend_space = d_.add_space_prefix;  // (T5's treat_whitespace_as_suffix is never set)
    const bool merge_spaces = u_.remove_extra_whitespaces;
    bool space_prepended = false;
    bool in_word = false;
    for (size_t offset = 0; offset < input.size();) {
      const Normalized r = normalize_prefix(input, offset);
      for (char c : r.text) {
        if (c != ' ') {
          if (!in_word) {
            in_word = true;
            if ((prepend_space && !space_prepended) || merge_spaces) {
              normalized_ += kEscapedSpace;
              space_prepended = true;
            }
          }
          normalized_ += c;
        } else {
          in_word = false;
          if (!merge_spaces) normalized_ += kEscapedSpace;
        }
      }
      offset += r.consumed;
    }
  }

  struct Best {
    int32_t token;
    size_t start;  // where the token begins
    double score;  // of the best tokenization of the text up to here
  };

  void viterbi(std::vector<int32_t>* out) {
    const std::string_view text(normalized_);
    const size_t n = text.size();
    if (n == 0) return;
    best_.assign(n + 1, {d_.unk, 0, -DBL_MAX});
    best_[0] = {d_.unk, 0, 0.0};
    for (size_t offset = 0; offset < n;) {
      const size_t cpt_bytes = std::min(utf8_seq_len(static_cast<uint8_t>(text[offset])), n - offset);
      const Best& here = best_[offset];
      bool whole_cpt_token = false;
      for (size_t len = 1; len <= u_.max_piece_bytes && offset + len <= n; ++len) {
        const int32_t id = d_.find(text.substr(offset, len));
        if (id < 0 || !u_.matchable[id]) continue;
        if (len == cpt_bytes) whole_cpt_token = true;
        const double score = here.score + ((d_.attrs[id] & kAttrUserDefined) ? 0.0 : static_cast<double>(d_.scores[id]));
        if (score > best_[offset + len].score) best_[offset + len] = {id, offset, score};
      }
      if (!whole_cpt_token) {
        const double score = here.score + u_.unknown_score;
        if (score > best_[offset + cpt_bytes].score) best_[offset + cpt_bytes] = {d_.unk, offset, score};
      }
      offset += cpt_bytes;
    }
    // Back from the end; the ids come out reversed.
    const size_t first = out->size();
    bool prev_unknown = false;
    for (size_t at = n;;) {
      const Best& b = best_[at];
      const bool unknown = b.token == d_.unk;
      if (!(prev_unknown && unknown) && b.token >= 0) out->push_back(b.token);
      if (b.start == 0) break;
      prev_unknown = unknown;
      at = b.start;
    }
    std::reverse(out->begin() + static_cast<std::ptrdiff_t>(first), out->end());
  }

  const TokenizerData& d_;
  const UgmData& u_;
  std::string normalized_;
  std::vector<Best> best_;
};

}  // namespace

void ugm_encode(const TokenizerData& d, std::string_view text, const std::vector<Fragment>& fragments,
                std::vector<int32_t>* out) {
  UgmSession session(d);
  for (const Fragment& f : fragments) {
    if (f.token >= 0) {
      out->push_back(f.token);
    } else {
      session.encode(text.substr(f.offset, f.length), out);
    }
  }
}

Status parse_ugm_charsmap(const std::vector<uint8_t>& bytes, UgmData* u) {
  if (bytes.empty()) return {};
  if (bytes.size() < 4) {
    return Status::error(ErrorCode::kBadFile, "tokenizer: precompiled charsmap of %zu bytes is too short", bytes.size());
  }
  const uint32_t blob = static_cast<uint32_t>(bytes[0]) | static_cast<uint32_t>(bytes[1]) << 8 |
                        static_cast<uint32_t>(bytes[2]) << 16 | static_cast<uint32_t>(bytes[3]) << 24;
  if (uint64_t{blob} + 4 >= bytes.size()) {
    return Status::error(ErrorCode::kBadFile, "tokenizer: precompiled charsmap's double array (%u bytes) overruns its "
                         "%zu bytes", blob, bytes.size());
  }
  u->charsmap_xcda.resize(blob / 4);
  for (size_t i = 0; i < u->charsmap_xcda.size(); ++i) {
    const uint8_t* p = bytes.data() + 4 + 4 * i;
    u->charsmap_xcda[i] = static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
                          static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
  }
  u->charsmap_strings.assign(reinterpret_cast<const char*>(bytes.data()) + 4 + blob, bytes.size() - 4 - blob);
  return {};
}

}  // namespace wllm
