#include "grammar/grammar.h"

#include <algorithm>

namespace wllm {

std::vector<CodePointRange> normalize_ranges(std::vector<CodePointRange> ranges) {
  std::sort(ranges.begin(), ranges.end(), [](const CodePointRange& a, const CodePointRange& b) { return a.lo < b.lo; });
  std::vector<CodePointRange> merged;
  for (const CodePointRange& r : ranges) {
    if (!merged.empty() && r.lo <= merged.back().hi + 1) {
      merged.back().hi = std::max(merged.back().hi, r.hi);
    } else {
      merged.push_back(r);
    }
  }
  return merged;
}

std::vector<CodePointRange> complement_ranges(const std::vector<CodePointRange>& ranges) {
  std::vector<CodePointRange> out;
  uint32_t next = 0;
  for (const CodePointRange& r : ranges) {
    if (r.lo > next) out.push_back({next, r.lo - 1});
    next = r.hi + 1;
  }
  if (next <= kMaxCodePoint) out.push_back({next, kMaxCodePoint});
  return out;
}

bool Grammar::set_contains(uint32_t set, uint32_t cp) const {
  return set_intersects(set, cp, cp);
}

bool Grammar::set_intersects(uint32_t set, uint32_t lo, uint32_t hi) const {
  const CodePointRange* begin = ranges.data() + set_begin[set];
  const CodePointRange* end = ranges.data() + set_begin[set + 1];
  // The first range that ends at or after lo; it intersects if it starts at or before hi.
  const CodePointRange* it = std::lower_bound(begin, end, lo, [](const CodePointRange& r, uint32_t v) { return r.hi < v; });
  return it != end && it->lo <= hi;
}

bool Grammar::set_covers(uint32_t set, uint32_t lo, uint32_t hi) const {
  const CodePointRange* begin = ranges.data() + set_begin[set];
  const CodePointRange* end = ranges.data() + set_begin[set + 1];
  // Ranges are merged, so [lo, hi] is covered only by the one range holding lo.
  const CodePointRange* it = std::lower_bound(begin, end, lo, [](const CodePointRange& r, uint32_t v) { return r.hi < v; });
  return it != end && it->lo <= lo && it->hi >= hi;
}

size_t Grammar::memory_bytes() const {
  size_t bytes = symbols.capacity() * sizeof(GrammarSymbol) + ranges.capacity() * sizeof(CodePointRange) +
                 set_begin.capacity() * sizeof(uint32_t);
  for (const GrammarRule& r : rules) bytes += sizeof(GrammarRule) + r.name.capacity() + r.alternatives.capacity() * 4;
  return bytes;
}

// The matcher expands a rule reference into its alternatives' first symbols
// until it reaches characters; a rule that can reach itself that way without
// consuming a character (A ::= A "x", or A ::= B A with B able to match
// nothing) would expand forever. llama.cpp refuses such grammars too
// (llama_grammar_detect_left_recursion).
Status check_no_left_recursion(const Grammar& g) {
  const size_t n_rules = g.rules.size();
  // Which rules can match the empty string: a worklist over alternatives, each
  // waiting for its remaining symbols to be known nullable.
  std::vector<uint8_t> nullable(n_rules, 0);
  struct Alt {
    uint32_t rule, start;
  };
  std::vector<Alt> alts;
  std::vector<uint32_t> remaining;
  std::vector<std::vector<uint32_t>> used_in(n_rules);  // rule -> alternatives (with repeats) that use it
  std::vector<uint32_t> queue;
  for (uint32_t r = 0; r < n_rules; ++r) {
    for (uint32_t start : g.rules[r].alternatives) {
      const uint32_t a = static_cast<uint32_t>(alts.size());
      alts.push_back({r, start});
      uint32_t count = 0;
      bool has_chars = false;
      for (uint32_t p = start; g.symbols[p].kind != GrammarSymbol::kEnd; ++p) {
        if (g.symbols[p].kind == GrammarSymbol::kChars) has_chars = true;
        ++count;
      }
      remaining.push_back(has_chars ? ~0u : count);
      if (has_chars) continue;
      for (uint32_t p = start; g.symbols[p].kind != GrammarSymbol::kEnd; ++p) used_in[g.symbols[p].value].push_back(a);
      if (count == 0 && !nullable[r]) {
        nullable[r] = 1;
        queue.push_back(r);
      }
    }
  }
  while (!queue.empty()) {
    const uint32_t r = queue.back();
    queue.pop_back();
    for (uint32_t a : used_in[r]) {
      if (--remaining[a] == 0 && !nullable[alts[a].rule]) {
        nullable[alts[a].rule] = 1;
        queue.push_back(alts[a].rule);
      }
    }
  }

  // Edges to the rules each rule can start with; a cycle among them is left recursion.
  std::vector<std::vector<uint32_t>> starts(n_rules);
  for (uint32_t r = 0; r < n_rules; ++r) {
    for (uint32_t start : g.rules[r].alternatives) {
      for (uint32_t p = start; g.symbols[p].kind == GrammarSymbol::kRule; ++p) {
        starts[r].push_back(g.symbols[p].value);
        if (!nullable[g.symbols[p].value]) break;
      }
    }
  }
  // Iterative depth-first search (helper rules can nest thousands deep).
  enum : uint8_t { kNew, kOnPath, kDone };
  std::vector<uint8_t> color(n_rules, kNew);
  std::vector<std::pair<uint32_t, size_t>> path;  // (rule, next edge)
  for (uint32_t first = 0; first < n_rules; ++first) {
    if (color[first] != kNew) continue;
    color[first] = kOnPath;
    path.push_back({first, 0});
    while (!path.empty()) {
      auto& [r, edge] = path.back();
      if (edge == starts[r].size()) {
        color[r] = kDone;
        path.pop_back();
        continue;
      }
      const uint32_t next = starts[r][edge++];
      if (color[next] == kOnPath) {
        std::string name = g.rules[next].name;
        name = name.substr(0, name.find('#'));  // a group or repetition inside it
        return Status(ErrorCode::kInvalidArgument,
                      "grammar: rule '" + name +
                          "' is left-recursive: it can reach itself again before matching a character");
      }
      if (color[next] == kNew) {
        color[next] = kOnPath;
        path.push_back({next, 0});
      }
    }
  }
  return {};
}

}  // namespace wllm
