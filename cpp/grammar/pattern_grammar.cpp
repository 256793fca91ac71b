#include "grammar/pattern_grammar.h"

#include "grammar/gbnf_text.h"
#include "grammar/text_scan.h"

namespace wllm {
namespace {

using Ranges = std::vector<CodePointRange>;

const Ranges kDigit = {{'0', '9'}};
const Ranges kWord = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
// ECMAScript's \s: WhiteSpace and LineTerminator.
const Ranges kSpace = {{0x09, 0x0D}, {0x20, 0x20},     {0xA0, 0xA0},     {0x1680, 0x1680}, {0x2000, 0x200A},
                       {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
// What '.' matches: all but the line terminators.
const Ranges kDot = {{0, 0x09}, {0x0B, 0x0C}, {0x0E, 0x2027}, {0x202A, kMaxCodePoint}};

// A translated piece of pattern: its GBNF and whether it can match "".
struct Piece {
  std::string gbnf;
  bool nullable;
};

class PatternTranslator {
 public:
  PatternTranslator(std::string_view pattern, std::string_view any_char) : src_(pattern), any_char_(any_char) {}

  Result<std::string> translate() {
    // Top level: alternatives, each anchored or not at either end.
    std::vector<std::string> alts;
    for (;;) {
      const bool anchored_start = peek() == '^';
      if (anchored_start) ++pos_;
      Piece seq = parse_sequence(/*top_level=*/true);
      bool anchored_end = false;
      if (ok() && peek() == '$') {
        ++pos_;
        anchored_end = true;
        if (!at_end() && peek() != '|') fail("'$' is supported only at the end of the pattern or of an alternative");
      }
      if (!ok()) return status_;
      std::string alt;
      if (!anchored_start) alt += std::string(any_char_) + "* ";
      alt += seq.gbnf.empty() ? "" : "(" + seq.gbnf + ")";
      if (!anchored_end) alt += " " + std::string(any_char_) + "*";
      alts.push_back(alt.empty() ? "\"\"" : alt);
      if (at_end()) break;
      if (peek() == ')') {
        fail("')' closes no group");
        return status_;
      }
      ++pos_;  // '|'
    }
    std::string out;
    for (const std::string& a : alts) out += (out.empty() ? "" : " | ") + a;
    return alts.size() == 1 ? out : "(" + out + ")";
  }

 private:
  bool ok() const { return status_.ok(); }
  bool at_end() const { return pos_ >= src_.size(); }
  char peek() const { return at_end() ? '\0' : src_[pos_]; }
  void fail_at(size_t offset, const std::string& message) {
    if (ok()) status_ = Status(ErrorCode::kInvalidArgument, str_printf("pattern at offset %zu: ", offset) + message);
  }
  void fail(const std::string& message) { fail_at(pos_, message); }

  // Items until '|', ')' or the end (or '$' at the top level).
  Piece parse_sequence(bool top_level) {
    Piece seq{"", true};
    while (ok() && !at_end() && peek() != '|' && peek() != ')') {
      if (top_level && peek() == '$') break;
      Piece item = parse_quantified();
      if (!ok()) break;
      if (!item.gbnf.empty()) seq.gbnf += (seq.gbnf.empty() ? "" : " ") + item.gbnf;
      seq.nullable = seq.nullable && item.nullable;
    }
    return seq;
  }

  Piece parse_alternation() {
    std::vector<Piece> alts{parse_sequence(false)};
    while (ok() && peek() == '|') {
      ++pos_;
      alts.push_back(parse_sequence(false));
    }
    Piece out{"", false};
    for (const Piece& a : alts) {
      out.gbnf += (out.gbnf.empty() ? "" : " | ") + (a.gbnf.empty() ? std::string("\"\"") : a.gbnf);
      out.nullable = out.nullable || a.nullable;
    }
    out.gbnf = "(" + out.gbnf + ")";
    return out;
  }

  Piece parse_quantified() {
    const size_t start = pos_;
    Piece atom = parse_atom();
    if (!ok()) return atom;
    const char q = peek();
    uint64_t min = 1, max = 1;
    bool unbounded = false;
    if (q == '*' || q == '+' || q == '?') {
      ++pos_;
      min = q == '+' ? 1 : 0;
      max = q == '?' ? 1 : 0;
      unbounded = q != '?';
    } else if (q == '{') {
      if (!parse_braces(&min, &max, &unbounded)) return atom;
    } else {
      return atom;
    }
    if (peek() == '?') ++pos_;  // lazy: the same strings
    if (peek() == '*' || peek() == '+' || peek() == '?' || peek() == '{') {
      fail("a quantifier cannot follow another quantifier");
      return atom;
    }
    if (unbounded && atom.nullable) {
      fail_at(start, "a repeated part that can match the empty string, such as (a*)*, is not supported");
      return atom;
    }
    std::string item = atom.gbnf.empty() ? "\"\"" : atom.gbnf;
    std::string suffix;
    if (unbounded) {
      suffix = min == 0 ? "*" : min == 1 ? "+" : str_printf("{%llu,}", static_cast<unsigned long long>(min));
    } else if (min == 0 && max == 1) {
      suffix = "?";
    } else if (min == max) {
      suffix = str_printf("{%llu}", static_cast<unsigned long long>(min));
    } else {
      suffix = str_printf("{%llu,%llu}", static_cast<unsigned long long>(min), static_cast<unsigned long long>(max));
    }
    if (max == 0 && !unbounded) return {"", true};  // x{0}
    return {"(" + item + ")" + suffix, atom.nullable || min == 0};
  }

  bool parse_braces(uint64_t* min, uint64_t* max, bool* unbounded) {
    const size_t open = pos_;
    ++pos_;
    const auto number = [&](uint64_t* v) {
      if (!(peek() >= '0' && peek() <= '9')) return false;
      *v = 0;
      while (peek() >= '0' && peek() <= '9') {
        *v = *v * 10 + static_cast<uint64_t>(peek() - '0');
        ++pos_;
        if (*v > kMaxRepetitions) {
          fail_at(open, str_printf("the repetition count is larger than %llu",
                                   static_cast<unsigned long long>(kMaxRepetitions)));
          return false;
        }
      }
      return true;
    };
    if (!number(min)) {
      fail_at(open, "a '{' that starts no quantifier {n}, {n,} or {n,m} (escape it as \\{)");
      return false;
    }
    *max = *min;
    if (peek() == ',') {
      ++pos_;
      if (peek() == '}') {
        *unbounded = true;
      } else if (!number(max)) {
        if (ok()) fail_at(open, "expected a number or '}' after ',' in the quantifier");
        return false;
      }
    }
    if (peek() != '}') {
      if (ok()) fail_at(open, "the quantifier is not closed with '}'");
      return false;
    }
    ++pos_;
    if (!*unbounded && *max < *min) {
      fail_at(open, "the quantifier's maximum is below its minimum");
      return false;
    }
    return true;
  }

  Piece parse_atom() {
    const size_t start = pos_;
    const char c = peek();
    switch (c) {
      case '(': {
        if (++group_depth_ > kMaxGroupDepth) {
          fail(str_printf("groups nest deeper than %d levels", kMaxGroupDepth));
          return {};
        }
        ++pos_;
        if (peek() == '?') {
          if (src_.substr(pos_, 2) == "?:") {
            pos_ += 2;
          } else if (src_.substr(pos_, 2) == "?<" && src_.substr(pos_, 3) != "?<=" && src_.substr(pos_, 3) != "?<!") {
            const size_t close = src_.find('>', pos_);
            if (close == std::string_view::npos) {
              fail_at(start, "the group name is not closed with '>'");
              return {};
            }
            pos_ = close + 1;
          } else {
            fail_at(start, "lookahead, lookbehind and other (?...) groups are not supported");
            return {};
          }
        }
        Piece inner = parse_alternation();
        --group_depth_;
        if (!ok()) return inner;
        if (peek() != ')') {
          fail_at(start, "the group is not closed with ')'");
          return {};
        }
        ++pos_;
        return inner;
      }
      case '[': return chars(parse_class());
      case '.': ++pos_; return chars(kDot);
      case '\\': return parse_escape_atom();
      case '^': fail("'^' is supported only at the start of the pattern or of an alternative"); return {};
      case '$': fail("'$' is supported only at the end of the pattern or of an alternative"); return {};
      case '*': case '+': case '?': fail(std::string("'") + c + "' has nothing before it to repeat"); return {};
      case '{': fail("'{' has nothing before it to repeat (escape it as \\{)"); return {};
      case '}': case ']': fail(std::string("a lone '") + c + "' (escape it)"); return {};
      default: {
        const uint32_t cp = next_code_point();
        return chars({{cp, cp}});
      }
    }
  }

  // A piece matching one character of `set`.
  Piece chars(const Ranges& set) {
    if (!ok()) return {};
    const std::string g = json_char_gbnf(set);
    if (g.empty()) {
      fail("this matches no character a JSON string can hold");
      return {};
    }
    return {g, false};
  }

  uint32_t next_code_point() {
    uint32_t cp = 0;
    if (!next_utf8_char(src_, &pos_, &cp)) fail("the pattern is not valid UTF-8 here");
    return cp;
  }

  Piece parse_escape_atom() {
    const char e = pos_ + 1 < src_.size() ? src_[pos_ + 1] : '\0';
    if (e == 'b' || e == 'B') {
      fail("word boundaries \\b and \\B are not supported");
      return {};
    }
    if ((e >= '1' && e <= '9') || e == 'k') {
      fail("backreferences are not supported");
      return {};
    }
    Ranges set;
    if (!parse_escape(&set, /*in_class=*/false)) return {};
    return chars(set);
  }

  // An escape at pos_ ('\\') into *set; false (and an error) if unsupported.
  bool parse_escape(Ranges* set, bool in_class) {
    const size_t start = pos_;
    ++pos_;
    if (at_end()) {
      fail_at(start, "the pattern ends in a backslash");
      return false;
    }
    const char e = src_[pos_++];
    const auto one = [&](uint32_t cp) {
      *set = {{cp, cp}};
      return true;
    };
    switch (e) {
      case 'd': *set = kDigit; return true;
      case 'D': *set = complement_ranges(kDigit); return true;
      case 'w': *set = kWord; return true;
      case 'W': *set = complement_ranges(kWord); return true;
      case 's': *set = kSpace; return true;
      case 'S': *set = complement_ranges(kSpace); return true;
      case 't': return one('\t');
      case 'n': return one('\n');
      case 'r': return one('\r');
      case 'v': return one('\v');
      case 'f': return one('\f');
      case 'b':
        if (in_class) return one('\b');
        break;
      case '0':
        if (!(peek() >= '0' && peek() <= '9')) return one(0);
        break;
      case 'c': {
        const char x = peek();
        if ((x >= 'a' && x <= 'z') || (x >= 'A' && x <= 'Z')) {
          ++pos_;
          return one(static_cast<uint32_t>(x) % 32);
        }
        break;
      }
      case 'x': {
        uint32_t v;
        if (hex(2, &v)) return one(v);
        break;
      }
      case 'u': {
        uint32_t v;
        if (peek() == '{') {
          ++pos_;
          const size_t digits_at = pos_;
          v = 0;
          while (pos_ < src_.size() && src_[pos_] != '}' && pos_ - digits_at < 7) {
            uint32_t d;
            if (!hex(1, &d)) break;
            v = v * 16 + d;
          }
          if (peek() == '}' && pos_ > digits_at && v <= kMaxCodePoint) {
            ++pos_;
            return one(v);
          }
          break;
        }
        if (!hex(4, &v)) break;
        // A surrogate pair written as two escapes is one character.
        if (v >= 0xD800 && v <= 0xDBFF && src_.substr(pos_, 2) == "\\u") {
          const size_t save = pos_;
          pos_ += 2;
          uint32_t low;
          if (hex(4, &low) && low >= 0xDC00 && low <= 0xDFFF) return one(0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00));
          pos_ = save;
        }
        return one(v);
      }
      case '-':
        if (in_class) return one('-');
        break;
      case '^': case '$': case '\\': case '.': case '*': case '+': case '?': case '(': case ')':
      case '[': case ']': case '{': case '}': case '|': case '/':
        return one(static_cast<uint8_t>(e));
      case 'p': case 'P':
        fail_at(start, "Unicode property escapes \\p{...} are not supported");
        return false;
      default: break;
    }
    fail_at(start, "the escape '\\" + std::string(1, e) + "' is not supported");
    return false;
  }

  bool hex(int digits, uint32_t* v) {
    *v = 0;
    for (int i = 0; i < digits; ++i) {
      const int d = hex_digit(peek());
      if (d < 0) return false;
      *v = *v * 16 + static_cast<uint32_t>(d);
      ++pos_;
    }
    return true;
  }

  // [...] or [^...] at pos_.
  Ranges parse_class() {
    const size_t open = pos_;
    ++pos_;
    const bool negated = peek() == '^';
    if (negated) ++pos_;
    Ranges set;
    while (ok() && peek() != ']') {
      if (at_end()) {
        fail_at(open, "the character class is not closed with ']'");
        return {};
      }
      Ranges lo;
      if (!class_atom(&lo)) return {};
      if (peek() == '-' && pos_ + 1 < src_.size() && src_[pos_ + 1] != ']') {
        const size_t dash = pos_;
        ++pos_;
        Ranges hi;
        if (!class_atom(&hi)) return {};
        if (lo.size() != 1 || hi.size() != 1 || lo[0].lo != lo[0].hi || hi[0].lo != hi[0].hi) {
          fail_at(dash, "a range in a class must be between two single characters");
          return {};
        }
        if (hi[0].lo < lo[0].lo) {
          fail_at(dash, "the range's end is below its start");
          return {};
        }
        set.push_back({lo[0].lo, hi[0].lo});
      } else {
        set.insert(set.end(), lo.begin(), lo.end());
      }
    }
    if (!ok()) return {};
    ++pos_;
    set = normalize_ranges(std::move(set));
    return negated ? complement_ranges(set) : set;
  }

  bool class_atom(Ranges* out) {
    if (peek() == '\\') return parse_escape(out, /*in_class=*/true);
    const uint32_t cp = next_code_point();
    *out = {{cp, cp}};
    return ok();
  }

  static constexpr int kMaxGroupDepth = 256;  // the translator recurses per group

  std::string_view src_;
  std::string_view any_char_;
  size_t pos_ = 0;
  int group_depth_ = 0;
  Status status_;
};

// How JSON writes a character that must be escaped (", \ and controls).
std::string json_escape_of(uint32_t cp) {
  switch (cp) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\b': return "\\b";
    case '\f': return "\\f";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default: return str_printf("\\u%04x", cp);
  }
}

}  // namespace

std::string json_char_gbnf(const std::vector<CodePointRange>& set) {
  // Written raw: everything but '"', '\' and controls (and surrogates, which no text holds).
  static const Ranges kRaw = {{0x20, 0x21}, {0x23, 0x5B}, {0x5D, 0xD7FF}, {0xE000, kMaxCodePoint}};
  Ranges raw;
  std::vector<std::string> alts;
  for (const CodePointRange& r : set) {
    for (const CodePointRange& k : kRaw) {
      const uint32_t lo = std::max(r.lo, k.lo), hi = std::min(r.hi, k.hi);
      if (lo <= hi) raw.push_back({lo, hi});
    }
    for (uint32_t cp = r.lo; cp <= std::min<uint32_t>(r.hi, 0x5C); ++cp) {
      if (cp < 0x20 || cp == '"' || cp == '\\') alts.push_back(gbnf_literal(json_escape_of(cp)));
    }
  }
  if (raw.size() == 1 && raw[0].lo == raw[0].hi) {
    std::string one;
    append_utf8(raw[0].lo, &one);
    alts.insert(alts.begin(), gbnf_literal(one));
  } else if (!raw.empty()) {
    alts.insert(alts.begin(), gbnf_char_class(raw));
  }
  std::string out;
  for (const std::string& a : alts) out += (out.empty() ? "" : " | ") + a;
  return alts.size() > 1 ? "(" + out + ")" : out;
}

Result<std::string> pattern_gbnf(std::string_view pattern, std::string_view any_char) {
  return PatternTranslator(pattern, any_char).translate();
}

}  // namespace wllm
