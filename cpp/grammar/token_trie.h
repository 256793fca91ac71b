// The vocabulary's token bytes as a trie, laid out for one forward pass:
// nodes in depth-first pre-order, each with its byte, its depth and the
// index just past its subtree. Masking walks it once per generated token
// (token_constraint.h): a node whose prefix the grammar rejects is skipped
// with its whole subtree, so the work is proportional to the prefixes the
// grammar still allows, not to the vocabulary size.
//
// The bytes of a token are exactly what generation prints for it
// (Tokenizer::piece_view: SPM's U+2581 as a space, <0xNN> byte tokens as
// their byte, GPT-2 byte characters as raw bytes). Tokens with no bytes
// (control and unknown tokens) and end-of-generation tokens are left out:
// the former can never continue a grammar, the latter are allowed only where
// the grammar can end. Built once per vocabulary.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace wllm {

class TokenTrie {
 public:
  explicit TokenTrie(const Tokenizer& tokenizer);

  size_t node_count() const { return byte_.size(); }
  uint8_t byte(size_t node) const { return byte_[node]; }
  uint32_t depth(size_t node) const { return depth_[node]; }  // 1 for a first byte
  uint32_t subtree_end(size_t node) const { return subtree_end_[node]; }
  // The tokens whose bytes end at `node`: tokens_[token_begin_[node], token_begin_[node + 1]).
  const int32_t* tokens_begin(size_t node) const { return tokens_.data() + token_begin_[node]; }
  const int32_t* tokens_end(size_t node) const { return tokens_.data() + token_begin_[node + 1]; }
  uint32_t max_depth() const { return max_depth_; }
  // End-of-generation tokens (Tokenizer::is_end_of_generation), ascending.
  const std::vector<int32_t>& end_tokens() const { return end_tokens_; }
  bool is_end_token(int32_t id) const { return tokenizer_.is_end_of_generation(id); }
  // A token's bytes ("" for ids out of range).
  std::string_view bytes(int32_t id) const { return tokenizer_.piece_view(id); }
  int32_t n_vocab() const { return n_vocab_; }
  size_t memory_bytes() const;

 private:
  Tokenizer tokenizer_;  // a copy shares the vocabulary
  int32_t n_vocab_ = 0;
  std::vector<uint8_t> byte_;          // [node]
  std::vector<uint32_t> depth_;        // [node]
  std::vector<uint32_t> subtree_end_;  // [node] the first node after its subtree
  std::vector<uint32_t> token_begin_;  // [node + 1]
  std::vector<int32_t> tokens_;        // token ids, grouped by the node they end at
  std::vector<int32_t> end_tokens_;
  uint32_t max_depth_ = 0;
};

}  // namespace wllm
