#include "grammar/token_trie.h"

#include <algorithm>
#include <string_view>

namespace wllm {

TokenTrie::TokenTrie(const Tokenizer& tokenizer) : tokenizer_(tokenizer), n_vocab_(tokenizer.n_vocab()) {
  std::vector<int32_t> ids;
  for (int32_t id = 0; id < n_vocab_; ++id) {
    if (tokenizer.is_end_of_generation(id)) {
      end_tokens_.push_back(id);
    } else if (!tokenizer.piece_view(id).empty()) {
      ids.push_back(id);
    }
  }
  // Sorted by bytes, a token's path shares its longest common prefix with the
  // previous token's path: only the bytes after it make new nodes, and the
  // nodes come out in pre-order.
  std::sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) {
    const int c = tokenizer.piece_view(a).compare(tokenizer.piece_view(b));
    return c < 0 || (c == 0 && a < b);
  });
  std::vector<uint32_t> path;  // node at each depth of the previous token's path
  std::string_view previous;
  for (int32_t id : ids) {
    const std::string_view bytes = tokenizer.piece_view(id);
    size_t common = 0;
    while (common < previous.size() && common < bytes.size() && previous[common] == bytes[common]) ++common;
    // Nodes deeper than the common prefix are finished: their subtrees end here.
    for (size_t d = common; d < path.size(); ++d) subtree_end_[path[d]] = static_cast<uint32_t>(byte_.size());
    path.resize(common);
    for (size_t d = common; d < bytes.size(); ++d) {
      path.push_back(static_cast<uint32_t>(byte_.size()));
      byte_.push_back(static_cast<uint8_t>(bytes[d]));
      depth_.push_back(static_cast<uint32_t>(d + 1));
      subtree_end_.push_back(0);
      token_begin_.push_back(static_cast<uint32_t>(tokens_.size()));
    }
    tokens_.push_back(id);
    max_depth_ = std::max(max_depth_, static_cast<uint32_t>(bytes.size()));
    previous = bytes;
  }
  for (uint32_t node : path) subtree_end_[node] = static_cast<uint32_t>(byte_.size());
  token_begin_.push_back(static_cast<uint32_t>(tokens_.size()));
  // Release the growth slack: the trie lives as long as the engine.
  byte_.shrink_to_fit();
  depth_.shrink_to_fit();
  subtree_end_.shrink_to_fit();
  token_begin_.shrink_to_fit();
  tokens_.shrink_to_fit();
}

size_t TokenTrie::memory_bytes() const {
  return byte_.capacity() + depth_.capacity() * 4 + subtree_end_.capacity() * 4 + token_begin_.capacity() * 4 +
         tokens_.capacity() * 4 + end_tokens_.capacity() * 4;
}

}  // namespace wllm
