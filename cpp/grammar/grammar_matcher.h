// Runs a Grammar over bytes: which byte strings can still become (a prefix
// of) a sentence of the grammar.
//
// The matcher is llama.cpp's pushdown recognizer (src/llama-grammar.cpp): a
// parse is a stack of grammar positions whose top is the next char set to
// match; the bytes so far allow a set of such stacks (the grammar may be
// ambiguous), and a code point moves every stack whose top matches it to
// the positions that may follow, expanding rule references into their
// alternatives until each top is a char set again. An empty stack means the
// whole grammar has been matched. Multi-byte UTF-8 characters are matched
// one byte at a time: while a character is unfinished the stacks wait and
// only the range of code points it can still become is checked, so a token
// that ends inside a character is allowed exactly when that character can
// be finished the grammar's way. Only well-formed UTF-8 is accepted (no
// overlong forms, surrogates or values past U+10FFFF), so the text the
// generation prints is exactly the bytes the grammar matched.
//
// Speed: stacks are persistent linked lists whose nodes are interned, so
// equal stacks are one id and pushing or popping costs one lookup; sets of
// stacks are interned too, and a State (a stack set plus an unfinished
// character) is a node of a lazily built DFA: step(state, byte) is computed
// once and then read from a table of 256 entries per state. Masking a whole
// vocabulary (token_constraint.h) is then a walk of the token trie with one
// table read per trie node. The tables are caches: they grow with the states
// met and are dropped by compact() when they outgrow their budget.
//
// Everything is integer logic on ids made in a fixed order, so every build
// computes the same states and the same masks.
//
// A grammar whose ambiguity grows with the text (s ::= "a" s "b" | "a" s "c"
// | "": 2^n parses after n bytes) would take time and memory without end: a
// step that needs more than kMaxParses stacks at once, or more stack nodes
// than the matcher will hold, fails instead. It returns kDead and sets
// overflowed() (until clear_overflow()), so a caller can tell "the grammar
// rejects this" from "this cannot be followed". The first limit is a
// property of the grammar and the bytes alone; the node limit is a last
// resort against memory exhaustion.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "grammar/grammar.h"

namespace wllm {

class GrammarMatcher {
 public:
  using StateId = int32_t;
  static constexpr StateId kDead = -1;  // no continuation can match
  static constexpr size_t kMaxParses = size_t{1} << 16;  // stacks in one state

  explicit GrammarMatcher(std::shared_ptr<const Grammar> grammar);

  // The state before any byte.
  StateId initial_state() const { return initial_; }
  // The state after `byte`, or kDead. `state` must not be kDead. Inline:
  // the token trie walk calls it once per node.
  StateId step(StateId state, uint8_t byte) {
    const int32_t row = states_[static_cast<size_t>(state)].row;
    if (row >= 0) {
      const StateId next = rows_[static_cast<size_t>(row) * 256 + byte];
      if (next >= kDead) return next;
    }
    return step_and_cache(state, byte);
  }
  // Whether a step failed for want of room (see above) since the last clear_overflow().
  bool overflowed() const { return overflowed_; }
  void clear_overflow() { overflowed_ = false; }
  // The whole grammar may end here (an empty stack, no unfinished character).
  bool can_end(StateId state) const;
  // can_end and nothing else: no byte can follow.
  bool must_end(StateId state) const;

  // Cache size: when over budget, the caller (between tokens) compacts.
  bool over_budget() const;
  // Drops every cached state except `keep`; returns keep's new id.
  StateId compact(StateId keep);
  size_t memory_bytes() const;
  size_t state_count() const { return states_.size(); }
  const Grammar& grammar() const { return *grammar_; }

 private:
  static constexpr int32_t kEmptyStack = -1;   // the stack with nothing left to match
  static constexpr int32_t kUnknown = -2;      // a transition not computed yet
  static constexpr int32_t kOverflow = -3;     // a transition that needs too many stacks (a set or a state)

  struct StackNode {
    int32_t pos;     // grammar position: the next symbol to match
    int32_t parent;  // the rest of the stack (kEmptyStack at the bottom)
  };
  struct State {
    int32_t set;          // interned stack set (uniform: the stacks that accept the character)
    uint32_t partial;     // bits of an unfinished UTF-8 character (0 when uniform)
    uint8_t remaining;    // its continuation bytes still to come (0: none)
    uint8_t length;       // its total length in bytes
    uint8_t uniform;      // 1: every stack of `set` accepts whatever it becomes
    uint8_t second;       // uniform, right after the lead byte: the valid second bytes (kSecondByte)
    int32_t row;          // transition row index, -1 until the first step from here
  };

  StateId step_and_cache(StateId state, uint8_t byte);
  StateId compute_step(StateId state, uint8_t byte);
  // The state of an unfinished character (kDead if no stack can match what it may become).
  StateId partial_state(int32_t set, uint32_t value, uint8_t remaining, uint8_t length);
  // The stack set after matching code point cp (every_stack: a character
  // every stack accepts), -1 if no stack matches it, or kOverflow.
  int32_t advance(int32_t set, uint32_t cp, bool every_stack);
  // Expands `stack` until every top is a char set; adds the stacks to
  // scratch_, each once since the last new_expansion(). Stops early once
  // scratch_ holds more than `limit` stacks.
  void expand(int32_t stack, size_t limit);
  void new_expansion();

  int32_t intern_node(int32_t pos, int32_t parent);
  int32_t intern_set(std::vector<int32_t>* stacks);  // sorts and dedups *stacks
  StateId intern_state(int32_t set, uint32_t partial, uint8_t remaining, uint8_t length, uint8_t uniform,
                       uint8_t second);
  void clear_caches();

  std::shared_ptr<const Grammar> grammar_;
  StateId initial_ = kDead;

  std::vector<StackNode> nodes_;
  std::unordered_map<uint64_t, int32_t> node_ids_;    // (pos, parent) -> node
  std::vector<int32_t> set_stacks_;                    // sets' members, concatenated
  std::vector<uint32_t> set_begin_{0};                 // set i is set_stacks_[set_begin_[i], set_begin_[i+1])
  std::unordered_map<uint64_t, int32_t> set_ids_;      // content hash -> first set with that hash
  std::vector<int32_t> set_next_same_hash_;            // chains sets whose hashes collide
  std::vector<State> states_;
  std::unordered_map<uint64_t, StateId> state_ids_;   // (set, partial char) -> state
  std::vector<StateId> rows_;                          // [row][256] transitions, kUnknown until computed

  // Scratch buffers reused by every step (no allocation once they have grown).
  std::vector<int32_t> scratch_;
  std::vector<int32_t> todo_;
  std::vector<uint32_t> visited_;  // per node: the expansion that last saw it
  uint32_t visit_mark_ = 0;
  bool empty_stack_added_ = false;  // by the current expansion
  bool overflowed_ = false;
};

}  // namespace wllm
