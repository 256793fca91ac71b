#include "grammar/grammar_matcher.h"

#include <algorithm>

namespace wllm {
namespace {

// Cache budgets. Rows are the big part (1 KiB each); a state beyond the row
// budget still works, its transitions are just recomputed each time.
constexpr size_t kMaxRows = 8192;
constexpr size_t kMaxStates = size_t{1} << 16;
constexpr size_t kMaxNodes = size_t{1} << 20;
constexpr size_t kMaxSetEntries = size_t{1} << 22;
// Past the budget the caller compacts between tokens; within one token's
// mask, stack nodes (about 50 bytes each with their index) and the sets'
// members (4 bytes each) stop here.
constexpr size_t kHardMaxNodes = 2 * kMaxNodes;
constexpr size_t kHardMaxSetEntries = 2 * kMaxSetEntries;

constexpr uint32_t kSurrogateLo = 0xD800, kSurrogateHi = 0xDFFF;

// The smallest code point a UTF-8 sequence of `length` bytes may encode.
uint32_t min_code_point(uint8_t length) {
  switch (length) {
    case 2: return 0x80;
    case 3: return 0x800;
    case 4: return 0x10000;
    default: return 0;
  }
}

// The valid second bytes of a character after its lead (UTF-8's Table 3-7):
// any continuation byte, or the narrower ranges after E0, ED, F0 and F4.
struct ByteRange {
  uint8_t lo, hi;
};
constexpr ByteRange kSecondByte[] = {{0x80, 0xBF}, {0xA0, 0xBF}, {0x80, 0x9F}, {0x90, 0xBF}, {0x80, 0x8F}};

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h * 0xFF51AFD7ED558CCDull;
}

}  // namespace

GrammarMatcher::GrammarMatcher(std::shared_ptr<const Grammar> grammar) : grammar_(std::move(grammar)) {
  clear_caches();
}

void GrammarMatcher::clear_caches() {
  nodes_.clear();
  node_ids_.clear();
  set_stacks_.clear();
  set_begin_.assign(1, 0);
  set_ids_.clear();
  set_next_same_hash_.clear();
  states_.clear();
  state_ids_.clear();
  rows_.clear();
  visited_.clear();
  visit_mark_ = 0;
  // The initial stacks: each alternative of root, expanded.
  const Grammar& g = *grammar_;
  scratch_.clear();
  new_expansion();
  for (uint32_t start : g.rules[g.root].alternatives) {
    expand(g.symbols[start].kind == GrammarSymbol::kEnd ? kEmptyStack : intern_node(static_cast<int32_t>(start), kEmptyStack),
           SIZE_MAX);  // the grammar's size bounds the first state
  }
  initial_ = intern_state(intern_set(&scratch_), 0, 0, 0, 0, 0);
}

GrammarMatcher::StateId GrammarMatcher::step_and_cache(StateId state, uint8_t byte) {
  const int32_t known_row = states_[static_cast<size_t>(state)].row;
  StateId next = known_row >= 0 ? rows_[static_cast<size_t>(known_row) * 256 + byte] : kUnknown;
  if (next == kUnknown) {
    next = compute_step(state, byte);
    State& s = states_[static_cast<size_t>(state)];
    if (s.row < 0 && rows_.size() / 256 < kMaxRows) {
      s.row = static_cast<int32_t>(rows_.size() / 256);
      rows_.resize(rows_.size() + 256, kUnknown);
    }
    if (s.row >= 0) rows_[static_cast<size_t>(s.row) * 256 + byte] = next;
  }
  if (next == kOverflow) {
    overflowed_ = true;
    return kDead;
  }
  return next;
}

GrammarMatcher::StateId GrammarMatcher::compute_step(StateId state, uint8_t byte) {
  const State s = states_[static_cast<size_t>(state)];  // a copy: interning may grow states_
  uint32_t value;
  uint8_t remaining, length;
  if (s.remaining > 0) {
    if ((byte & 0xC0) != 0x80) return kDead;
    if (s.uniform) {
      if (byte < kSecondByte[s.second].lo || byte > kSecondByte[s.second].hi) return kDead;
      if (s.remaining > 1) return intern_state(s.set, 0, static_cast<uint8_t>(s.remaining - 1), s.length, 1, 0);
      const int32_t set = advance(s.set, 0, /*every_stack=*/true);
      if (set == kOverflow) return kOverflow;
      return set < 0 ? kDead : intern_state(set, 0, 0, 0, 0, 0);
    }
    value = (s.partial << 6) | (byte & 0x3F);
    remaining = static_cast<uint8_t>(s.remaining - 1);
    length = s.length;
  } else if (byte < 0x80) {
    value = byte;
    remaining = 0;
    length = 1;
  } else if (byte >= 0xC2 && byte <= 0xDF) {
    value = byte & 0x1F;
    remaining = 1;
    length = 2;
  } else if (byte >= 0xE0 && byte <= 0xEF) {
    value = byte & 0x0F;
    remaining = 2;
    length = 3;
  } else if (byte >= 0xF0 && byte <= 0xF4) {
    value = byte & 0x07;
    remaining = 3;
    length = 4;
  } else {
    return kDead;  // a stray continuation byte, or a lead byte no valid character has
  }
  if (remaining > 0) return partial_state(s.set, value, remaining, length);
  if (value < min_code_point(length) || (value >= kSurrogateLo && value <= kSurrogateHi) || value > kMaxCodePoint) {
    return kDead;
  }
  const int32_t set = advance(s.set, value, /*every_stack=*/false);
  if (set == kOverflow) return kOverflow;
  return set < 0 ? kDead : intern_state(set, 0, 0, 0, 0, 0);
}

GrammarMatcher::StateId GrammarMatcher::partial_state(int32_t set, uint32_t value, uint8_t remaining, uint8_t length) {
  // The valid code points this unfinished character can still become: a
  // range, without the surrogates (so up to two pieces).
  const uint32_t shift = 6u * remaining;
  const uint32_t lo = std::max(value << shift, min_code_point(length));
  const uint32_t hi = std::min((value << shift) | ((1u << shift) - 1), kMaxCodePoint);
  CodePointRange pieces[2];
  int n_pieces = 0;
  if (lo <= hi && lo < kSurrogateLo) pieces[n_pieces++] = {lo, std::min(hi, kSurrogateLo - 1)};
  if (lo <= hi && hi > kSurrogateHi) pieces[n_pieces++] = {std::max(lo, kSurrogateHi + 1), hi};
  if (n_pieces == 0) return kDead;
  // Sort the stacks: those whose char set holds all of it, those it touches.
  const Grammar& g = *grammar_;
  scratch_.clear();
  bool uniform = true, any = false;
  for (uint32_t i = set_begin_[static_cast<size_t>(set)]; i < set_begin_[static_cast<size_t>(set) + 1]; ++i) {
    const int32_t stack = set_stacks_[i];
    if (stack == kEmptyStack) continue;
    const uint32_t chars = g.symbols[static_cast<size_t>(nodes_[static_cast<size_t>(stack)].pos)].value;
    bool covers = true, touches = false;
    for (int p = 0; p < n_pieces; ++p) {
      covers = covers && g.set_covers(chars, pieces[p].lo, pieces[p].hi);
      touches = touches || g.set_intersects(chars, pieces[p].lo, pieces[p].hi);
    }
    if (covers) scratch_.push_back(stack);
    uniform = uniform && (covers || !touches);
    any = any || touches;
  }
  if (!any) return kDead;
  if (!uniform) return intern_state(set, value, remaining, length, 0, 0);
  if (set_stacks_.size() + scratch_.size() > kHardMaxSetEntries) return kOverflow;
  // Whatever the character becomes, exactly the stacks kept here match it:
  // its bits no longer matter, only which second bytes are valid UTF-8 (this
  // is what keeps a JSON string's multi-byte characters from making a state
  // per partial character).
  uint8_t second = 0;
  if (remaining == length - 1) {
    if (length == 3 && value == 0x0) second = 1;       // E0: A0-BF (no overlong form)
    if (length == 3 && value == 0xD) second = 2;       // ED: 80-9F (no surrogate)
    if (length == 4 && value == 0x0) second = 3;       // F0: 90-BF (no overlong form)
    if (length == 4 && value == 0x4) second = 4;       // F4: 80-8F (nothing past U+10FFFF)
  }
  return intern_state(intern_set(&scratch_), 0, remaining, length, 1, second);
}

int32_t GrammarMatcher::advance(int32_t set, uint32_t cp, bool every_stack) {
  const Grammar& g = *grammar_;
  scratch_.clear();
  new_expansion();
  const uint32_t begin = set_begin_[static_cast<size_t>(set)], end = set_begin_[static_cast<size_t>(set) + 1];
  for (uint32_t i = begin; i < end; ++i) {
    const int32_t stack = set_stacks_[i];
    if (stack == kEmptyStack) continue;
    const StackNode node = nodes_[static_cast<size_t>(stack)];
    if (!every_stack && !g.set_contains(g.symbols[static_cast<size_t>(node.pos)].value, cp)) continue;
    // Matched: the top moves to the next symbol, or is popped at the end of its alternative.
    const int32_t next = node.pos + 1;
    expand(g.symbols[static_cast<size_t>(next)].kind == GrammarSymbol::kEnd ? node.parent : intern_node(next, node.parent),
           kMaxParses);
    if (scratch_.size() > kMaxParses || nodes_.size() > kHardMaxNodes) return kOverflow;
  }
  if (scratch_.empty()) return -1;
  if (set_stacks_.size() + scratch_.size() > kHardMaxSetEntries) return kOverflow;
  return intern_set(&scratch_);
}

void GrammarMatcher::new_expansion() {
  empty_stack_added_ = false;
  if (++visit_mark_ == 0) {  // the marks wrapped around: forget them all
    std::fill(visited_.begin(), visited_.end(), 0);
    visit_mark_ = 1;
  }
}

void GrammarMatcher::expand(int32_t stack, size_t limit) {
  const Grammar& g = *grammar_;
  todo_.clear();
  todo_.push_back(stack);
  while (!todo_.empty() && scratch_.size() <= limit) {
    const int32_t s = todo_.back();
    todo_.pop_back();
    if (s == kEmptyStack) {
      if (!empty_stack_added_) scratch_.push_back(s);
      empty_stack_added_ = true;
      continue;
    }
    if (static_cast<size_t>(s) >= visited_.size()) visited_.resize(nodes_.size() + 64, 0);
    if (visited_[static_cast<size_t>(s)] == visit_mark_) continue;
    visited_[static_cast<size_t>(s)] = visit_mark_;
    const StackNode node = nodes_[static_cast<size_t>(s)];
    const GrammarSymbol sym = g.symbols[static_cast<size_t>(node.pos)];
    if (sym.kind == GrammarSymbol::kChars) {
      scratch_.push_back(s);
      continue;
    }
    // A rule reference: below, the symbol after it (nothing if it ends the
    // alternative, so right recursion does not grow the stack); on top, the
    // first symbol of each of the rule's alternatives.
    const int32_t after = node.pos + 1;
    const int32_t base = g.symbols[static_cast<size_t>(after)].kind == GrammarSymbol::kEnd ? node.parent
                                                                                          : intern_node(after, node.parent);
    for (uint32_t start : g.rules[sym.value].alternatives) {
      todo_.push_back(g.symbols[start].kind == GrammarSymbol::kEnd ? base : intern_node(static_cast<int32_t>(start), base));
    }
  }
}

int32_t GrammarMatcher::intern_node(int32_t pos, int32_t parent) {
  const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(pos)) << 32) | static_cast<uint32_t>(parent);
  const auto [it, inserted] = node_ids_.emplace(key, static_cast<int32_t>(nodes_.size()));
  if (inserted) nodes_.push_back({pos, parent});
  return it->second;
}

int32_t GrammarMatcher::intern_set(std::vector<int32_t>* stacks) {
  std::sort(stacks->begin(), stacks->end());
  stacks->erase(std::unique(stacks->begin(), stacks->end()), stacks->end());
  uint64_t h = stacks->size();
  for (int32_t s : *stacks) h = mix(h, static_cast<uint32_t>(s));
  const auto it = set_ids_.find(h);
  int32_t id = it == set_ids_.end() ? -1 : it->second;
  for (; id >= 0; id = set_next_same_hash_[static_cast<size_t>(id)]) {
    const uint32_t b = set_begin_[static_cast<size_t>(id)], e = set_begin_[static_cast<size_t>(id) + 1];
    if (e - b == stacks->size() && std::equal(stacks->begin(), stacks->end(), set_stacks_.begin() + b)) return id;
  }
  id = static_cast<int32_t>(set_begin_.size() - 1);
  set_stacks_.insert(set_stacks_.end(), stacks->begin(), stacks->end());
  set_begin_.push_back(static_cast<uint32_t>(set_stacks_.size()));
  set_next_same_hash_.push_back(it == set_ids_.end() ? -1 : it->second);
  set_ids_[h] = id;
  return id;
}

GrammarMatcher::StateId GrammarMatcher::intern_state(int32_t set, uint32_t partial, uint8_t remaining, uint8_t length,
                                                     uint8_t uniform, uint8_t second) {
  // partial has at most 15 bits (a 4-byte character after 2 of its continuation bytes).
  const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(set)) << 24) | (uint64_t{partial} << 9) |
                       (uint64_t{second} << 6) | (uint64_t{uniform} << 5) | (uint64_t{remaining} << 3) | length;
  const auto [it, inserted] = state_ids_.emplace(key, static_cast<StateId>(states_.size()));
  if (inserted) states_.push_back({set, partial, remaining, length, uniform, second, -1});
  return it->second;
}

bool GrammarMatcher::can_end(StateId state) const {
  const State& s = states_[static_cast<size_t>(state)];
  // Sets are sorted, so the empty stack (-1) comes first.
  return s.remaining == 0 && set_stacks_[set_begin_[static_cast<size_t>(s.set)]] == kEmptyStack;
}

bool GrammarMatcher::must_end(StateId state) const {
  const State& s = states_[static_cast<size_t>(state)];
  return can_end(state) && set_begin_[static_cast<size_t>(s.set) + 1] - set_begin_[static_cast<size_t>(s.set)] == 1;
}

bool GrammarMatcher::over_budget() const {
  return rows_.size() / 256 >= kMaxRows || states_.size() > kMaxStates || nodes_.size() > kMaxNodes ||
         set_stacks_.size() > kMaxSetEntries;
}

GrammarMatcher::StateId GrammarMatcher::compact(StateId keep) {
  // Write keep's stacks out as position lists, rebuild, and intern them again.
  const State s = states_[static_cast<size_t>(keep)];
  std::vector<std::vector<int32_t>> stacks;
  for (uint32_t i = set_begin_[static_cast<size_t>(s.set)]; i < set_begin_[static_cast<size_t>(s.set) + 1]; ++i) {
    std::vector<int32_t> positions;  // bottom last
    for (int32_t n = set_stacks_[i]; n != kEmptyStack; n = nodes_[static_cast<size_t>(n)].parent) {
      positions.push_back(nodes_[static_cast<size_t>(n)].pos);
    }
    stacks.push_back(std::move(positions));
  }
  clear_caches();
  std::vector<int32_t> members;
  for (const std::vector<int32_t>& positions : stacks) {
    int32_t node = kEmptyStack;
    for (auto it = positions.rbegin(); it != positions.rend(); ++it) node = intern_node(*it, node);
    members.push_back(node);
  }
  return intern_state(intern_set(&members), s.partial, s.remaining, s.length, s.uniform, s.second);
}

size_t GrammarMatcher::memory_bytes() const {
  // Hash maps: about two words per entry plus a bucket pointer.
  constexpr size_t kMapEntry = 3 * sizeof(void*) + 16;
  return nodes_.capacity() * sizeof(StackNode) + node_ids_.size() * kMapEntry + set_stacks_.capacity() * 4 +
         set_begin_.capacity() * 4 + set_ids_.size() * kMapEntry + set_next_same_hash_.capacity() * 4 +
         states_.capacity() * sizeof(State) + state_ids_.size() * kMapEntry + rows_.capacity() * sizeof(StateId) +
         visited_.capacity() * 4 + grammar_->memory_bytes();
}

}  // namespace wllm
