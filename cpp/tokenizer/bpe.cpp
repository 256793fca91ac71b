// Byte-level BPE, as llama.cpp's llm_tokenizer_bpe_session
// (src/llama-vocab.cpp): pre-tokenize into words, map each word's UTF-8
// bytes to GPT-2's byte characters, then repeatedly merge the adjacent pair
// with the lowest merge rank (ties: leftmost). SentencePiece-style BPE
// (gemma4) writes spaces as U+2581 first and merges the words' UTF-8 as it is.
#include <algorithm>
#include <vector>

#include "tokenizer/tokenizer_data.h"
#include "tokenizer/unicode.h"
#include "tokenizer/utf8.h"

namespace wllm {

namespace {

struct Symbol {
  int32_t prev;
  int32_t next;
  uint32_t offset;  // into the encoded word
  uint32_t n;       // bytes; 0 once merged into its left neighbour
  int32_t id;       // token of the symbol's text, -1 if none
};

struct Bigram {
  int32_t rank;
  int32_t left;
  int32_t right;
  int32_t left_id;  // the texts when queued: a changed symbol makes it stale
  int32_t right_id;
  int32_t result;
};

// Lowest rank on top; equal ranks: leftmost first.
struct BigramOrder {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

inline uint64_t pair_key(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

class BpeSession {
 public:
  explicit BpeSession(const TokenizerData& d) : d_(d) {}

  // Encodes one raw-text fragment.
  void encode(std::string_view raw, std::vector<int32_t>* out) {
    const bool spm_style = d_.pre->spm_style;
    if (spm_style) {  // ' ' -> U+2581
      escaped_.clear();
      for (char c : raw) {
        if (c == ' ') {
          escaped_ += "\xE2\x96\x81";
        } else {
          escaped_ += c;
        }
      }
      raw = escaped_;
    }
    decode_utf8_lenient(raw, &cpts_);
    pre_tokenize(*d_.pre, cpts_, &lengths_, &scratch_);
    size_t begin = 0;
    for (size_t len : lengths_) {
      // The word's bytes (re-encoded from code points, as llama.cpp does, so
      // invalid input has become U+FFFD), each as its GPT-2 character.
      word_.clear();
      for (size_t i = begin; i < begin + len; ++i) {
        if (spm_style) {
          append_utf8(cpts_[i], &word_);
          continue;
        }
        utf8_.clear();
        append_utf8(cpts_[i], &utf8_);
        for (char c : utf8_) append_utf8(unicode::gpt2_byte_to_cpt(static_cast<uint8_t>(c)), &word_);
      }
      begin += len;
      encode_word(out);
    }
  }

 private:
  void try_add(int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols_[left];
    const Symbol& r = symbols_[right];
    if (l.id < 0 || r.id < 0) return;  // every merge joins two tokens (checked at load)
    const auto it = d_.merges.find(pair_key(l.id, r.id));
    if (it == d_.merges.end()) return;
    heap_.push_back({it->second.rank, left, right, l.id, r.id, it->second.result});
    std::push_heap(heap_.begin(), heap_.end(), BigramOrder{});
  }

  void encode_word(std::vector<int32_t>* out) {
    // Taken whole if it is a token: any word (ignore_merges), or a word of
    // newlines (gemma4).
    const bool newlines = d_.pre->spm_style && word_.find_first_not_of('\n') == std::string::npos;
    if (d_.ignore_merges || newlines) {
      const int32_t id = d_.find(word_);
      if (id >= 0) {
        out->push_back(id);
        return;
      }
    }
    symbols_.clear();
    for (uint32_t offs = 0; offs < word_.size();) {
      const uint32_t n = static_cast<uint32_t>(
          std::min<size_t>(utf8_seq_len(static_cast<uint8_t>(word_[offs])), word_.size() - offs));
      const int32_t index = static_cast<int32_t>(symbols_.size());
      const int32_t id = d_.find(std::string_view(word_).substr(offs, n));
      symbols_.push_back({index - 1, offs + n == word_.size() ? -1 : index + 1, offs, n, id});
      offs += n;
    }
    heap_.clear();
    for (int32_t i = 1; i < static_cast<int32_t>(symbols_.size()); ++i) try_add(i - 1, i);

    while (!heap_.empty()) {
      std::pop_heap(heap_.begin(), heap_.end(), BigramOrder{});
      const Bigram b = heap_.back();
      heap_.pop_back();
      Symbol& left = symbols_[b.left];
      Symbol& right = symbols_[b.right];
      if (left.n == 0 || right.n == 0 || left.id != b.left_id || right.id != b.right_id) continue;  // stale
      left.n += right.n;
      left.id = b.result;
      right.n = 0;
      left.next = right.next;
      if (right.next >= 0) symbols_[right.next].prev = b.left;
      try_add(left.prev, b.left);
      try_add(b.left, left.next);
    }

    for (const Symbol& s : symbols_) {
      if (s.n == 0) continue;
      if (s.id >= 0) {
        out->push_back(s.id);
        continue;
      }
      // Not a token: each byte of the encoded text alone (gemma4: its <0xXX>
      // token), if that is a token (llama.cpp drops the others).
      for (uint32_t k = 0; k < s.n; ++k) {
        const int32_t id = d_.pre->spm_style ? d_.byte_tokens[static_cast<uint8_t>(word_[s.offset + k])]
                                             : d_.find(std::string_view(word_).substr(s.offset + k, 1));
        if (id >= 0) out->push_back(id);
      }
    }
  }

  const TokenizerData& d_;
  std::vector<uint32_t> cpts_;
  std::vector<size_t> lengths_;
  PreTokenizeScratch scratch_;
  std::string escaped_;  // the fragment with spaces as U+2581 (gemma4)
  std::string word_;
  std::string utf8_;
  std::vector<Symbol> symbols_;
  std::vector<Bigram> heap_;  // a max-heap under BigramOrder, as std::priority_queue
};

}  // namespace

void bpe_encode(const TokenizerData& d, std::string_view text, const std::vector<Fragment>& fragments,
                std::vector<int32_t>* out) {
  BpeSession session(d);
  for (const Fragment& f : fragments) {
    if (f.token >= 0) {
      out->push_back(f.token);
    } else {
      session.encode(text.substr(f.offset, f.length), out);
    }
  }
}

}  // namespace wllm
