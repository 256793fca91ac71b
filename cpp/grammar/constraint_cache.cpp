#include "grammar/constraint_cache.h"

#include <chrono>

namespace wllm {
namespace {

// The control tokens among `texts` (each the whole text of one token). Other
// texts need nothing: ordinary and user-defined tokens print their text anyway.
std::vector<TokenMasker::PreservedToken> control_tokens(const std::vector<std::string>& texts,
                                                        const Tokenizer& tokenizer) {
  std::vector<TokenMasker::PreservedToken> out;
  for (const std::string& text : texts) {
    const std::vector<int32_t> ids = tokenizer.encode(text, false, true);
    if (ids.size() == 1 && tokenizer.is_control(ids[0]) && !tokenizer.is_end_of_generation(ids[0])) {
      out.push_back({ids[0], text});
    }
  }
  return out;
}

}  // namespace

Result<TokenMasker*> ConstraintCache::masker_for(const OutputConstraint& constraint, const Tokenizer& tokenizer) {
  if (masker_ && constraint == constraint_) return masker_.get();
  WLLM_ASSIGN_OR_RETURN(const std::string gbnf, constraint_gbnf(constraint));
  WLLM_ASSIGN_OR_RETURN(Grammar grammar, parse_gbnf(gbnf));
  if (!trie_) {
    const auto start = std::chrono::steady_clock::now();
    trie_ = std::make_unique<TokenTrie>(tokenizer);
    trie_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  masker_.reset();  // before its replacement is built: only one set of caches at a time
  masker_ = std::make_unique<TokenMasker>(std::make_shared<const Grammar>(std::move(grammar)), *trie_,
                                          control_tokens(constraint.preserved_tokens, tokenizer));
  constraint_ = constraint;
  return masker_.get();
}

void ConstraintCache::clear() {
  masker_.reset();
  trie_.reset();
  constraint_ = {};
}

}  // namespace wllm
