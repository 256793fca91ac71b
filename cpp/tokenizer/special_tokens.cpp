// Special-token partitioning, as llama.cpp's tokenizer_st_partition
// (src/llama-vocab.cpp): for each special token, longest first, every raw
// fragment is split around the token's non-overlapping occurrences, searched
// left to right. User-defined tokens are always cut out; control and unknown
// ones only with parse_special. LSTRIP/RSTRIP tokens eat the ASCII whitespace
// next to them.
#include <vector>

#include "tokenizer/tokenizer_data.h"

namespace wllm {

namespace {

// C-locale isspace, as llama.cpp applies it to (signed) chars.
inline bool is_c_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// Marks in *present which special tokens occur anywhere in `text`; only those
// need a search pass. (A token cut by an earlier, longer one may be marked
// but not found: harmless.)
void find_present(const TokenizerData& d, std::string_view text, std::vector<uint8_t>* present) {
  present->assign(d.specials.size(), 0);
  const SpecialTrie& trie = d.special_trie;
  for (size_t i = 0; i < text.size(); ++i) {
    int32_t node = 0;
    for (size_t j = i; j < text.size(); ++j) {
      node = trie.child(node, static_cast<uint8_t>(text[j]));
      if (node < 0) break;
      const int32_t s = trie.nodes[node].special_index;
      if (s >= 0) (*present)[s] = 1;
    }
  }
}

}  // namespace

void partition_specials(const TokenizerData& d, std::string_view text, bool parse_special,
                        std::vector<Fragment>* out) {
  out->clear();
  if (text.empty()) return;
  out->push_back({-1, 0, text.size()});
  if (d.specials.empty()) return;

  std::vector<uint8_t> present;
  find_present(d, text, &present);

  std::vector<Fragment> next;
  for (size_t si = 0; si < d.specials.size(); ++si) {
    if (!present[si]) continue;
    const int32_t id = d.specials[si];
    const uint16_t attr = d.attrs[id];
    if (!parse_special && (attr & (kAttrControl | kAttrUnknown))) continue;
    const std::string_view tok = d.text(id);

    next.clear();
    bool changed = false;
    for (const Fragment& f : *out) {
      if (f.token >= 0) {
        next.push_back(f);
        continue;
      }
      size_t base = f.offset;
      size_t len = f.length;
      while (true) {
        const size_t match = text.substr(0, base + len).find(tok, base);
        if (match == std::string_view::npos) {
          next.push_back({-1, base, len});
          break;
        }
        changed = true;
        if (match > base) {  // text left of the token
          size_t left_len = match - base;
          if (attr & kAttrLstrip) {
            while (left_len > 0 && is_c_space(text[base + left_len - 1])) --left_len;
          }
          if (left_len > 0) next.push_back({-1, base, left_len});
        }
        next.push_back({id, 0, 0});
        const size_t tok_end = match + tok.size();
        if (tok_end >= base + len) break;  // nothing right of it
        size_t right = tok_end;
        size_t right_len = base + len - tok_end;
        if (attr & kAttrRstrip) {
          while (right_len > 0 && is_c_space(text[right])) {
            ++right;
            --right_len;
          }
        }
        if (right_len == 0) break;
        base = right;  // keep searching the right side
        len = right_len;
      }
    }
    if (changed) out->swap(next);
  }
}

}  // namespace wllm
