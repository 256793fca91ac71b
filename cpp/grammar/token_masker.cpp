#include "grammar/token_masker.h"

#include <algorithm>

namespace wllm {
namespace {

constexpr size_t kCachedMasks = 8;

}  // namespace

TokenMasker::TokenMasker(std::shared_ptr<const Grammar> grammar, const TokenTrie& trie,
                         std::vector<PreservedToken> preserved)
    : matcher_(std::move(grammar)),
      trie_(trie),
      cache_(kCachedMasks),
      state_at_depth_(trie.max_depth() + 1) {
  // A token named twice (a preserved text given twice) is one token: it is allowed, and counted, once.
  for (PreservedToken& p : preserved) {
    if (!preserved_text(p.id)) preserved_.push_back(std::move(p));
  }
  const size_t words = (static_cast<size_t>(trie.n_vocab()) + 31) / 32;
  for (CachedMask& m : cache_) m.bits.assign(words, 0);
}

const uint32_t* TokenMasker::mask(StateId state, size_t* count) {
  ++uses_;
  CachedMask* slot = &cache_[0];
  for (CachedMask& m : cache_) {
    if (m.state == state) {
      m.last_use = uses_;
      *count = m.count;
      overflowed_ = m.overflowed;
      return m.bits.data();
    }
    if (m.last_use < slot->last_use) slot = &m;  // the least recently used
  }
  matcher_.clear_overflow();
  walk(state, slot);
  slot->last_use = uses_;
  slot->overflowed = overflowed_ = matcher_.overflowed();
  *count = slot->count;
  return slot->bits.data();
}

void TokenMasker::walk(StateId state, CachedMask* out) {
  uint32_t* bits = out->bits.data();
  std::fill(out->bits.begin(), out->bits.end(), 0u);
  size_t count = 0;
  const auto allow = [&](int32_t token) {
    bits[token >> 5] |= 1u << (token & 31);
    ++count;
  };
  // Pre-order walk: the state of a node's prefix is its parent's state
  // stepped by the node's byte; a dead state skips the subtree.
  state_at_depth_[0] = state;
  const size_t n = trie_.node_count();
  for (size_t i = 0; i < n;) {
    const uint32_t depth = trie_.depth(i);
    const StateId s = matcher_.step(state_at_depth_[depth - 1], trie_.byte(i));
    if (s == GrammarMatcher::kDead) {
      // Overflowed: the mask cannot be complete and the generation fails, so
      // no more time goes into it (each such step is costly).
      if (matcher_.overflowed()) break;
      i = trie_.subtree_end(i);
      continue;
    }
    state_at_depth_[depth] = s;
    for (const int32_t* t = trie_.tokens_begin(i); t != trie_.tokens_end(i); ++t) allow(*t);
    ++i;
  }
  for (const PreservedToken& p : preserved_) {
    if (!matcher_.overflowed() && feed(state, p.text) != GrammarMatcher::kDead) allow(p.id);
  }
  if (matcher_.can_end(state)) {
    for (int32_t t : trie_.end_tokens()) allow(t);
  }
  out->state = state;
  out->count = count;
}

TokenMasker::StateId TokenMasker::accept(StateId state, int32_t token) {
  overflowed_ = false;
  if (token < 0 || token >= trie_.n_vocab() || trie_.is_end_token(token)) return GrammarMatcher::kDead;
  const std::string_view bytes = token_bytes(token);
  if (bytes.empty()) return GrammarMatcher::kDead;
  return accept_bytes(state, bytes);
}

std::string_view TokenMasker::token_bytes(int32_t token) const {
  const std::string* text = preserved_text(token);
  return text ? std::string_view(*text) : trie_.bytes(token);
}

const std::string* TokenMasker::preserved_text(int32_t token) const {
  for (const PreservedToken& p : preserved_) {
    if (p.id == token) return &p.text;
  }
  return nullptr;
}

TokenMasker::StateId TokenMasker::accept_bytes(StateId state, std::string_view bytes) {
  matcher_.clear_overflow();
  state = feed(state, bytes);
  overflowed_ = matcher_.overflowed();
  return state;
}

TokenMasker::StateId TokenMasker::feed(StateId state, std::string_view bytes) {
  for (const char c : bytes) {
    state = matcher_.step(state, static_cast<uint8_t>(c));
    if (state == GrammarMatcher::kDead) break;
  }
  return state;
}

void TokenMasker::compact_if_needed(StateId* state) {
  if (!matcher_.over_budget()) return;
  *state = matcher_.compact(*state);
  for (CachedMask& m : cache_) m.state = GrammarMatcher::kDead;  // the ids changed
}

size_t TokenMasker::memory_bytes() const {
  size_t bytes = matcher_.memory_bytes() + state_at_depth_.capacity() * sizeof(StateId);
  for (const CachedMask& m : cache_) bytes += m.bits.capacity() * 4;
  return bytes;
}

}  // namespace wllm
