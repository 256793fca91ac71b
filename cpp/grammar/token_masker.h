// Which tokens of a vocabulary may come next under a grammar: the bridge
// between the byte-level GrammarMatcher and the sampler.
//
// mask(state) walks the TokenTrie from the matcher state: one cached
// transition per trie node, a rejected prefix skips its subtree. The result
// is a bit per token (end-of-generation tokens set where the grammar can
// end). Masks of recent states are kept, since the same state often comes
// back (every token inside a JSON string leaves the matcher where it was).
//
// Preserved tokens are control tokens (no bytes in the trie) that count as
// their text: the grammar matches "<|python_tag|>" against that token too.
//
// One TokenMasker per grammar, reused by every generation with that grammar
// (its caches stay warm); one generation at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/grammar_matcher.h"
#include "grammar/token_trie.h"

namespace wllm {

class TokenMasker {
 public:
  using StateId = GrammarMatcher::StateId;

  struct PreservedToken {
    int32_t id;
    std::string text;
  };

  TokenMasker(std::shared_ptr<const Grammar> grammar, const TokenTrie& trie,
              std::vector<PreservedToken> preserved = {});

  StateId initial_state() const { return matcher_.initial_state(); }
  // Bits of the allowed tokens (token t: bit t % 32 of word t / 32), valid
  // until the next call; *count: how many are set.
  const uint32_t* mask(StateId state, size_t* count);
  // The state after `token`'s bytes, or kDead if the grammar rejects them (or
  // the token is an end-of-generation token or has no bytes).
  StateId accept(StateId state, int32_t token);
  // The state after `bytes` (e.g. text forced into the output), or kDead.
  StateId accept_bytes(StateId state, std::string_view bytes);
  // Whether the last mask(), accept() or accept_bytes() met bytes the
  // matcher could not follow (GrammarMatcher::overflowed(): a grammar too
  // ambiguous): its answer is incomplete (a mask stops at the first such
  // token), and the generation must fail.
  bool overflowed() const { return overflowed_; }
  // The bytes the grammar sees for `token`: a preserved token's text, else
  // its piece ("" for other control tokens).
  std::string_view token_bytes(int32_t token) const;
  bool is_preserved(int32_t token) const { return preserved_text(token) != nullptr; }
  bool can_end(StateId state) const { return matcher_.can_end(state); }
  bool must_end(StateId state) const { return matcher_.must_end(state); }
  // Between tokens: drops the caches if they outgrew their budget (the
  // state's id may change).
  void compact_if_needed(StateId* state);

  size_t memory_bytes() const;
  const TokenTrie& trie() const { return trie_; }

 private:
  struct CachedMask {
    StateId state = GrammarMatcher::kDead;
    size_t count = 0;
    uint64_t last_use = 0;
    bool overflowed = false;
    std::vector<uint32_t> bits;
  };
  void walk(StateId state, CachedMask* out);
  // accept_bytes() within a walk: the matcher's overflow flag keeps what the walk met.
  StateId feed(StateId state, std::string_view bytes);
  const std::string* preserved_text(int32_t token) const;

  GrammarMatcher matcher_;
  const TokenTrie& trie_;
  std::vector<PreservedToken> preserved_;  // a few: searched linearly
  std::vector<CachedMask> cache_;       // a few recent masks
  uint64_t uses_ = 0;
  bool overflowed_ = false;
  std::vector<StateId> state_at_depth_;  // walk scratch: [trie depth]
};

}  // namespace wllm
