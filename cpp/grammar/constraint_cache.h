// What constrained generation keeps between requests, owned by the Engine:
// the vocabulary's token trie (built on the first constrained request, as
// most requests need none) and the TokenMasker of the last constraint, so a
// constraint that repeats (the same schema for every request) is compiled
// once and keeps its matcher and mask caches warm.
#pragma once

#include <cstddef>
#include <memory>

#include "grammar/output_constraint.h"
#include "grammar/token_masker.h"
#include "grammar/token_trie.h"
#include "tokenizer/tokenizer.h"

namespace wllm {

class ConstraintCache {
 public:
  // The masker for `constraint` over `tokenizer`'s vocabulary, compiling the
  // grammar unless it is the last one. kInvalidArgument for a bad grammar or
  // schema (the message names the rule or keyword and its position).
  Result<TokenMasker*> masker_for(const OutputConstraint& constraint, const Tokenizer& tokenizer);
  // Forgets everything (a new model, maybe a new vocabulary).
  void clear();

  size_t trie_bytes() const { return trie_ ? trie_->memory_bytes() : 0; }
  size_t memory_bytes() const { return trie_bytes() + (masker_ ? masker_->memory_bytes() : 0); }
  double trie_build_seconds() const { return trie_seconds_; }

 private:
  std::unique_ptr<TokenTrie> trie_;
  double trie_seconds_ = 0;
  OutputConstraint constraint_;
  std::unique_ptr<TokenMasker> masker_;  // for constraint_
};

}  // namespace wllm
