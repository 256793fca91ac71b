// parse_gbnf: GBNF text -> Grammar, a recursive-descent parser with the
// grammar of llama.cpp's llama_grammar_parser (src/llama-grammar.cpp):
//
//   grammar     ::= rule*
//   rule        ::= name "::=" alternates (newline | end)
//   alternates  ::= sequence ("|" sequence)*       newlines may follow "|"
//   sequence    ::= (item repetition*)*             inside ( ) items may span lines
//   item        ::= "literal" | [chars] | [^chars] | name | "(" alternates ")" | "."
//   repetition  ::= "*" | "+" | "?" | "{" m "}" | "{" m "," "}" | "{" m "," n "}"
//
// Repetitions become rules as llama.cpp writes them: S{m,n} is S repeated m
// times, then n-m nested optional rules R_k ::= S R_(k-1) | (empty), so a long
// run never deepens the matcher's stacks (the recursive reference is last).
#include <algorithm>
#include <map>
#include <unordered_map>

#include "grammar/grammar.h"
#include "grammar/text_scan.h"

namespace wllm {
namespace {

using Sequence = std::vector<GrammarSymbol>;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

class GbnfParser {
 public:
  explicit GbnfParser(std::string_view src) : src_(src) {}

  Result<Grammar> parse() {
    skip_space(true);
    while (ok() && pos_ < src_.size()) parse_rule();
    if (!ok()) return status_;
    return finish();
  }

 private:
  struct RuleState {
    std::string name;
    std::vector<Sequence> alternatives;
    bool defined = false;
    size_t defined_at = 0;  // offset of the definition
    size_t first_use = 0;   // offset of the first reference
  };

  bool ok() const { return status_.ok(); }
  char peek(size_t ahead = 0) const { return pos_ + ahead < src_.size() ? src_[pos_ + ahead] : '\0'; }
  bool at_end() const { return pos_ >= src_.size(); }

  // "line L, column C" of a byte offset (columns count code points).
  std::string where(size_t offset) const {
    size_t line = 1, column = 1;
    for (size_t i = 0; i < offset && i < src_.size(); ++i) {
      const auto c = static_cast<uint8_t>(src_[i]);
      if (c == '\n') {
        ++line;
        column = 1;
      } else if ((c & 0xC0) != 0x80) {
        ++column;
      }
    }
    return str_printf("line %zu, column %zu", line, column);
  }

  void fail_at(size_t offset, const std::string& message) {
    if (ok()) status_ = Status(ErrorCode::kInvalidArgument, "grammar: " + where(offset) + ": " + message);
  }
  void fail(const std::string& message) { fail_at(pos_, message); }

  // What is at the current position, for messages: "'x'" or "the end of the text".
  std::string found() const {
    if (at_end()) return "the end of the text";
    const char c = peek();
    if (c == '\n' || c == '\r') return "the end of the line";
    const Utf8Step s = utf8_step(src_.substr(pos_));
    return "'" + std::string(src_.substr(pos_, s.kind == Utf8Step::kValid ? s.length : 1)) + "'";
  }

  // Skips blanks and # comments; newlines too when newline_ok.
  void skip_space(bool newline_ok) {
    while (!at_end()) {
      const char c = peek();
      if (c == ' ' || c == '\t' || (newline_ok && (c == '\r' || c == '\n'))) {
        ++pos_;
      } else if (c == '#') {
        while (!at_end() && peek() != '\r' && peek() != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  uint32_t rule_id(std::string_view name, size_t used_at) {
    const auto [it, inserted] = ids_.emplace(std::string(name), static_cast<uint32_t>(rules_.size()));
    if (inserted) {
      rules_.push_back({std::string(name), {}, false, 0, used_at});
    }
    return it->second;
  }

  // A rule for a group or a repetition inside rule `parent`, named parent#N.
  uint32_t new_helper_rule(uint32_t parent) {
    const uint32_t id = static_cast<uint32_t>(rules_.size());
    rules_.push_back({rules_[parent].name + "#" + std::to_string(++helper_count_), {}, true, pos_, pos_});
    return id;
  }

  void parse_rule() {
    const size_t start = pos_;
    const size_t name_end = scan_name();
    if (name_end == pos_) {
      fail("expected a rule name, found " + found());
      return;
    }
    const std::string_view name = src_.substr(pos_, name_end - pos_);
    pos_ = name_end;
    const uint32_t id = rule_id(name, start);
    skip_space(false);
    if (src_.substr(pos_, 3) != "::=") {
      fail("expected '::=' after the rule name '" + std::string(name) + "', found " + found());
      return;
    }
    if (rules_[id].defined) {
      fail_at(start, "rule '" + std::string(name) + "' is defined twice (first at " + where(rules_[id].defined_at) + ")");
      return;
    }
    rules_[id].defined = true;
    rules_[id].defined_at = start;
    pos_ += 3;
    skip_space(true);
    std::vector<Sequence> alternatives = parse_alternates(id, false);
    if (!ok()) return;
    rules_[id].alternatives = std::move(alternatives);
    if (peek() == '\r') ++pos_;
    if (peek() == '\n') {
      ++pos_;
    } else if (!at_end()) {
      fail("expected the end of the line after rule '" + std::string(name) + "', found " + found());
      return;
    }
    skip_space(true);
  }

  size_t scan_name() const {
    size_t end = pos_;
    while (end < src_.size() && is_rule_name_char(src_[end])) ++end;
    return end;
  }

  std::vector<Sequence> parse_alternates(uint32_t rule, bool nested) {
    std::vector<Sequence> alternatives;
    alternatives.push_back(parse_sequence(rule, nested));
    while (ok() && peek() == '|') {
      ++pos_;
      skip_space(true);
      alternatives.push_back(parse_sequence(rule, nested));
    }
    return alternatives;
  }

  Sequence parse_sequence(uint32_t rule, bool nested) {
    Sequence seq;
    size_t last_item = std::string_view::npos;  // where the last item's symbols start in seq
    while (ok() && !at_end()) {
      const char c = peek();
      const size_t item_start = pos_;
      const size_t size_before = seq.size();
      if (c == '"') {
        ++pos_;
        last_item = seq.size();
        while (ok() && peek() != '"') {
          if (at_end()) {
            fail_at(item_start, "the string literal is not closed");
            break;
          }
          const uint32_t cp = parse_char();
          if (ok()) seq.push_back({GrammarSymbol::kChars, char_set({{cp, cp}}, false)});
        }
        if (!ok()) break;
        ++pos_;
        if (seq.size() == last_item) last_item = std::string_view::npos;  // "" is nothing to repeat
      } else if (c == '[') {
        last_item = seq.size();
        seq.push_back({GrammarSymbol::kChars, parse_char_class()});
      } else if (c == '.') {
        ++pos_;
        last_item = seq.size();
        seq.push_back({GrammarSymbol::kChars, char_set({{0, kMaxCodePoint}}, false)});
      } else if (is_rule_name_char(c)) {
        const size_t end = scan_name();
        last_item = seq.size();
        seq.push_back({GrammarSymbol::kRule, rule_id(src_.substr(pos_, end - pos_), pos_)});
        pos_ = end;
      } else if (c == '(') {
        if (++group_depth_ > kMaxGroupDepth) {
          fail(str_printf("groups nest deeper than %d levels", kMaxGroupDepth));
          break;
        }
        ++pos_;
        skip_space(true);
        const uint32_t group = new_helper_rule(rule);
        std::vector<Sequence> alternatives = parse_alternates(rule, true);
        --group_depth_;
        if (!ok()) break;
        if (peek() != ')') {
          fail("expected ')' to close the group opened at " + where(item_start) + ", found " + found());
          break;
        }
        ++pos_;
        rules_[group].alternatives = std::move(alternatives);
        last_item = seq.size();
        seq.push_back({GrammarSymbol::kRule, group});
      } else if (c == '*' || c == '+' || c == '?' || c == '{') {
        if (last_item == std::string_view::npos) {
          fail(std::string("'") + c + "' has nothing before it to repeat");
          break;
        }
        uint64_t min = 0, max = kUnbounded;
        if (c == '{') {
          if (!parse_braces(&min, &max)) break;
        } else {
          ++pos_;
          min = c == '+' ? 1 : 0;
          max = c == '?' ? 1 : kUnbounded;
        }
        repeat(rule, &seq, last_item, min, max, item_start);  // counts its own symbols
        // As llama.cpp, a second repetition applies to the first's result: x{2}{3} is x{6}.
        if (seq.size() == last_item) last_item = std::string_view::npos;
        if (!ok()) break;
        skip_space(nested);
        continue;
      } else if (c == '<' || c == '!') {
        fail("token references (<[id]>, <text>, !<...>) are not supported; write the text as a string literal");
        break;
      } else {
        break;  // '|', ')', a newline, or an error the caller reports
      }
      if (!ok() || !spend(seq.size() - std::min(seq.size(), size_before), item_start)) break;
      skip_space(nested);
    }
    return seq;
  }

  // {m}, {m,} or {m,n} at pos_.
  bool parse_braces(uint64_t* min, uint64_t* max) {
    const size_t open = pos_;
    ++pos_;
    skip_space(true);
    if (!parse_count(min)) return false;
    skip_space(true);
    if (peek() == '}') {
      *max = *min;
    } else if (peek() == ',') {
      ++pos_;
      skip_space(true);
      if (is_digit(peek()) && !parse_count(max)) return false;
      skip_space(true);
      if (peek() != '}') {
        fail("expected '}' to close the repetition opened at " + where(open) + ", found " + found());
        return false;
      }
      if (*max < *min) {
        fail_at(open, str_printf("the repetition {%llu,%llu} has its maximum below its minimum",
                                 static_cast<unsigned long long>(*min), static_cast<unsigned long long>(*max)));
        return false;
      }
    } else {
      fail("expected ',' or '}' in the repetition opened at " + where(open) + ", found " + found());
      return false;
    }
    ++pos_;
    return true;
  }

  bool parse_count(uint64_t* value) {
    const size_t start = pos_;
    if (!is_digit(peek())) {
      fail("expected a number in the repetition, found " + found());
      return false;
    }
    uint64_t v = 0;
    while (is_digit(peek())) {
      v = v * 10 + static_cast<uint64_t>(peek() - '0');
      ++pos_;
      if (v > kMaxRepetitions) {
        fail_at(start, str_printf("the repetition count is larger than %llu",
                                  static_cast<unsigned long long>(kMaxRepetitions)));
        return false;
      }
    }
    *value = v;
    return true;
  }

  // Rewrites the item seq[item..] into item{min,max} (max kUnbounded: no maximum).
  void repeat(uint32_t rule, Sequence* seq, size_t item, uint64_t min, uint64_t max, size_t at) {
    const Sequence body(seq->begin() + static_cast<ptrdiff_t>(item), seq->end());
    seq->resize(item);
    const uint64_t optional = max == kUnbounded ? 1 : max - min;
    // The copies of the body and the helper rules' own symbols.
    if (!spend(body.size() * (min + 2 * optional) + 2 * optional, at)) return;
    for (uint64_t i = 0; i < min; ++i) seq->insert(seq->end(), body.begin(), body.end());
    if (max == kUnbounded) {
      // R ::= body R | (empty)
      const uint32_t r = new_helper_rule(rule);
      Sequence loop = body;
      loop.push_back({GrammarSymbol::kRule, r});
      rules_[r].alternatives = {std::move(loop), {}};
      seq->push_back({GrammarSymbol::kRule, r});
      return;
    }
    // R_1 ::= body | (empty);  R_k ::= body R_(k-1) | (empty)
    uint32_t inner = 0;
    for (uint64_t k = 1; k <= optional; ++k) {
      const uint32_t r = new_helper_rule(rule);
      Sequence alt = body;
      if (k > 1) alt.push_back({GrammarSymbol::kRule, inner});
      rules_[r].alternatives = {std::move(alt), {}};
      inner = r;
    }
    if (optional > 0) seq->push_back({GrammarSymbol::kRule, inner});
  }

  // One character of a literal or char class: an escape or a UTF-8 character.
  uint32_t parse_char() {
    const size_t start = pos_;
    if (peek() == '\\') {
      const char e = peek(1);
      pos_ += 2;
      switch (e) {
        case 'x': return parse_hex(2, start);
        case 'u': return parse_hex(4, start);
        case 'U': return parse_hex(8, start);
        case 't': return '\t';
        case 'r': return '\r';
        case 'n': return '\n';
        case '\\': case '"': case '[': case ']': case '-': return static_cast<uint8_t>(e);
        default:
          pos_ = start;
          fail(e == '\0' ? std::string("the text ends in an escape")
                         : "unknown escape '\\" + std::string(1, e) + "' (known: \\x \\u \\U \\t \\r \\n \\\\ \\\" \\[ \\] \\-)");
          return 0;
      }
    }
    uint32_t cp = 0;
    if (!next_utf8_char(src_, &pos_, &cp)) fail("the text is not valid UTF-8 here");
    return cp;
  }

  uint32_t parse_hex(int digits, size_t start) {
    uint32_t v = 0;
    for (int i = 0; i < digits; ++i) {
      const int d = hex_digit(peek());
      if (d < 0) {
        fail_at(start, str_printf("the escape needs %d hexadecimal digits", digits));
        return 0;
      }
      v = v * 16 + static_cast<uint32_t>(d);
      ++pos_;
    }
    if (v > kMaxCodePoint) {
      fail_at(start, str_printf("U+%X is beyond the last code point U+10FFFF", v));
      return 0;
    }
    return v;
  }

  // [abc], [a-z0-9], [^"\\] at pos_; returns the char set's index.
  uint32_t parse_char_class() {
    const size_t open = pos_;
    ++pos_;
    const bool negated = peek() == '^';
    if (negated) ++pos_;
    std::vector<CodePointRange> ranges;
    while (ok() && peek() != ']') {
      if (at_end()) {
        fail_at(open, "the character set is not closed with ']'");
        return 0;
      }
      const size_t item = pos_;
      const uint32_t lo = parse_char();
      uint32_t hi = lo;
      if (ok() && peek() == '-' && peek(1) != ']' && pos_ + 1 < src_.size()) {
        ++pos_;
        hi = parse_char();
        if (ok() && hi < lo) {
          fail_at(item, str_printf("the range U+%04X-U+%04X is empty (its end is below its start)", lo, hi));
        }
      }
      ranges.push_back({lo, hi});
    }
    if (!ok()) return 0;
    ++pos_;
    if (ranges.empty()) {
      fail_at(open, negated ? "the character set [^] is empty" : "the character set [] is empty");
      return 0;
    }
    return char_set(std::move(ranges), negated);
  }

  // Interns a char set (normalised: sorted and merged, complemented if negated).
  uint32_t char_set(std::vector<CodePointRange> ranges, bool negated) {
    std::vector<CodePointRange> merged = normalize_ranges(std::move(ranges));
    if (negated) {
      merged = complement_ranges(merged);
      if (merged.empty()) {
        fail("the negated character set excludes every character");
        return 0;
      }
    }
    std::string key(reinterpret_cast<const char*>(merged.data()), merged.size() * sizeof(CodePointRange));
    const auto [it, inserted] = set_ids_.emplace(std::move(key), static_cast<uint32_t>(grammar_.set_begin.size() - 1));
    if (inserted) {
      grammar_.ranges.insert(grammar_.ranges.end(), merged.begin(), merged.end());
      grammar_.set_begin.push_back(static_cast<uint32_t>(grammar_.ranges.size()));
    }
    return it->second;
  }

  Result<Grammar> finish() {
    for (const RuleState& r : rules_) {
      if (!r.defined) return error_at(r.first_use, "rule '" + r.name + "' is used but never defined");
    }
    const auto root = ids_.find("root");
    if (root == ids_.end()) {
      return Status(ErrorCode::kInvalidArgument, "grammar: there is no 'root' rule (the rule the whole output must match)");
    }
    grammar_.root = root->second;
    for (RuleState& r : rules_) {
      GrammarRule rule{std::move(r.name), {}};
      for (const Sequence& alt : r.alternatives) {
        rule.alternatives.push_back(static_cast<uint32_t>(grammar_.symbols.size()));
        grammar_.symbols.insert(grammar_.symbols.end(), alt.begin(), alt.end());
        grammar_.symbols.push_back({GrammarSymbol::kEnd, 0});
      }
      grammar_.rules.push_back(std::move(rule));
    }
    if (grammar_.symbols.size() > kMaxGrammarSymbols) {
      return Status::error(ErrorCode::kInvalidArgument, "grammar: the grammar is too large (more than %zu symbols)",
                           kMaxGrammarSymbols);
    }
    WLLM_RETURN_IF_ERROR(check_no_left_recursion(grammar_));
    return std::move(grammar_);
  }

  Status error_at(size_t offset, const std::string& message) const {
    return Status(ErrorCode::kInvalidArgument, "grammar: " + where(offset) + ": " + message);
  }

  // Counts symbols as they are made, so a hostile grammar is refused before
  // it takes the memory.
  bool spend(uint64_t symbols, size_t at) {
    symbols_made_ += symbols;
    if (symbols_made_ <= kMaxGrammarSymbols) return true;
    fail_at(at, str_printf("the grammar is too large (more than %zu symbols)", kMaxGrammarSymbols));
    return false;
  }

  static constexpr uint64_t kUnbounded = ~uint64_t{0};
  static constexpr int kMaxGroupDepth = 256;  // the parser recurses per group

  std::string_view src_;
  size_t pos_ = 0;
  Status status_;
  std::vector<RuleState> rules_;
  std::unordered_map<std::string, uint32_t> ids_;
  std::unordered_map<std::string, uint32_t> set_ids_;
  uint32_t helper_count_ = 0;
  uint64_t symbols_made_ = 0;
  int group_depth_ = 0;
  Grammar grammar_;
};

}  // namespace

Result<Grammar> parse_gbnf(std::string_view text) { return GbnfParser(text).parse(); }

}  // namespace wllm
