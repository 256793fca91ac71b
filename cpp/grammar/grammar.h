// A context-free grammar over Unicode code points, in the form the matcher
// runs: llama.cpp's GBNF (grammars/README.md) after parsing, with every
// repetition (* + ? {m,n}) rewritten into plain rules the way
// src/llama-grammar.cpp does, and every character set ("a", [a-z], [^"], .)
// turned into a sorted list of code point ranges.
//
// Layout: the alternatives of all rules are sequences in one array of
// symbols, each sequence ended by a kEnd symbol; a position in the grammar is
// an index into that array. A rule lists where its alternatives start.
//
//   symbols: [Char 0][Rule 2][End] [End] [Char 1][Rule 1][End] ...
//             \ rule 0, alt 0 /   \alt 1/ \ rule 1, alt 0  /
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace wllm {

inline constexpr uint32_t kMaxCodePoint = 0x10FFFF;

struct CodePointRange {
  uint32_t lo, hi;  // inclusive
};

// Sorts and merges ranges (overlapping or adjacent ones become one).
std::vector<CodePointRange> normalize_ranges(std::vector<CodePointRange> ranges);
// The code points of [0, kMaxCodePoint] not in `ranges` (normalized).
std::vector<CodePointRange> complement_ranges(const std::vector<CodePointRange>& ranges);

struct GrammarSymbol {
  enum Kind : uint8_t { kEnd, kChars, kRule };
  Kind kind;
  uint32_t value;  // kChars: char set index; kRule: rule index
};

struct GrammarRule {
  std::string name;
  std::vector<uint32_t> alternatives;  // positions of each alternative's first symbol
};

struct Grammar {
  std::vector<GrammarSymbol> symbols;
  std::vector<GrammarRule> rules;
  // Char set i is ranges[set_begin[i], set_begin[i+1]): sorted, disjoint, not adjacent.
  std::vector<CodePointRange> ranges;
  std::vector<uint32_t> set_begin{0};
  uint32_t root = 0;

  // Whether char set `set` contains `cp`, or any code point of [lo, hi].
  bool set_contains(uint32_t set, uint32_t cp) const;
  bool set_intersects(uint32_t set, uint32_t lo, uint32_t hi) const;
  // Whether char set `set` contains every code point of [lo, hi].
  bool set_covers(uint32_t set, uint32_t lo, uint32_t hi) const;
  size_t memory_bytes() const;
};

// Caps that keep a hostile grammar from exhausting memory; a grammar beyond
// them is refused with a message that names the cap.
inline constexpr size_t kMaxGrammarSymbols = size_t{1} << 20;
inline constexpr uint64_t kMaxRepetitions = 10000;  // m and n of x{m,n}

// kInvalidArgument if a rule can reach itself again without matching a
// character (left recursion), which the matcher could not expand.
Status check_no_left_recursion(const Grammar& grammar);

// Parses GBNF text. Errors (kInvalidArgument) read
//   "grammar: line 3, column 14: expected ')' to close the group opened at line 3, column 5"
// and name the rule where that helps: an undefined or twice-defined rule, a
// missing root, left recursion. Supported: rules `name ::= ...`, alternatives
// `|`, groups `( )`, string literals, char sets with ranges and negation,
// `.`, repetition `* + ? {m} {m,} {m,n}`, `#` comments, the escapes \xXX
// \uXXXX \UXXXXXXXX \t \r \n \\ \" \[ \] \-. Not supported (an error):
// token references <[id]>, <text> and !<...>.
Result<Grammar> parse_gbnf(std::string_view text);

}  // namespace wllm
