// SentencePiece-style BPE over token scores, as llama.cpp's
// llm_tokenizer_spm_session (src/llama-vocab.cpp): start from single UTF-8
// characters, repeatedly merge the adjacent pair whose concatenation is the
// highest-scoring token (ties: leftmost), then emit each symbol's token or,
// failing that, its bytes as byte tokens.
#include <algorithm>
#include <vector>

#include "tokenizer/tokenizer_data.h"
#include "tokenizer/utf8.h"

namespace wllm {

namespace {

struct Symbol {
  int32_t prev;
  int32_t next;
  size_t offset;  // into the escaped text
  size_t n;       // bytes; 0 once merged into its left neighbour
};

struct Bigram {
  int32_t left;
  int32_t right;
  float score;
  size_t size;  // bytes of the merged text when queued: stale entries differ
};

// Highest score on top; equal scores: leftmost first.
struct BigramOrder {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

// Encodes one raw-text fragment, `space_prefix` adding a leading space.
void encode_fragment(const TokenizerData& d, std::string_view raw, bool space_prefix, std::vector<int32_t>* out) {
  // Spaces become U+2581 ("▁"), as llama_escape_whitespace.
  std::string text;
  text.reserve(raw.size() + raw.size() / 4 + 3);
  if (space_prefix) text += "\xE2\x96\x81";
  for (char c : raw) {
    if (c == ' ') {
      text += "\xE2\x96\x81";
    } else {
      text += c;
    }
  }
  if (text.empty()) return;

  std::vector<Symbol> symbols;
  symbols.reserve(text.size());
  for (size_t offs = 0; offs < text.size();) {
    const size_t n = std::min(utf8_seq_len(static_cast<uint8_t>(text[offs])), text.size() - offs);
    const int32_t index = static_cast<int32_t>(symbols.size());
    symbols.push_back({index - 1, offs + n == text.size() ? -1 : index + 1, offs, n});
    offs += n;
  }

  std::vector<Bigram> heap;  // a max-heap under BigramOrder, as std::priority_queue
  const auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const std::string_view merged(text.data() + symbols[left].offset, symbols[left].n + symbols[right].n);
    const int32_t id = d.find(merged);
    if (id < 0) return;
    heap.push_back({left, right, d.scores[id], merged.size()});
    std::push_heap(heap.begin(), heap.end(), BigramOrder{});
  };
  for (int32_t i = 1; i < static_cast<int32_t>(symbols.size()); ++i) try_add(i - 1, i);

  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), BigramOrder{});
    const Bigram b = heap.back();
    heap.pop_back();
    Symbol& left = symbols[b.left];
    Symbol& right = symbols[b.right];
    if (left.n == 0 || right.n == 0 || left.n + right.n != b.size) continue;  // stale
    left.n += right.n;
    right.n = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = b.left;
    try_add(left.prev, b.left);
    try_add(b.left, left.next);
  }

  for (int32_t i = 0; i != -1; i = symbols[i].next) {
    const Symbol& s = symbols[i];
    const std::string_view piece(text.data() + s.offset, s.n);
    const int32_t id = d.find(piece);
    if (id >= 0) {
      out->push_back(id);
      continue;
    }
    // Byte fallback. llama.cpp throws when a byte has no token; we fall back
    // to the unknown token, or drop the byte if there is none.
    for (char c : piece) {
      const int32_t byte_id = d.byte_tokens[static_cast<uint8_t>(c)];
      if (byte_id >= 0) {
        out->push_back(byte_id);
      } else if (d.unk >= 0) {
        out->push_back(d.unk);
      }
    }
  }
}

}  // namespace

void spm_encode(const TokenizerData& d, std::string_view text, const std::vector<Fragment>& fragments,
                std::vector<int32_t>* out) {
  // llama.cpp adds the space prefix at the start and after every special
  // token, so "<s>Hi" and "Hi" both see " Hi".
  bool prev_special = true;
  for (const Fragment& f : fragments) {
    if (f.token >= 0) {
      out->push_back(f.token);
      prev_special = true;
    } else {
      encode_fragment(d, text.substr(f.offset, f.length), d.add_space_prefix && prev_special, out);
      prev_special = false;
    }
  }
}

}  // namespace wllm
