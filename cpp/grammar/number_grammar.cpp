// How a bounded number becomes a grammar. A JSON number is
//   [-] I [. F]       I: digits without leading zeros, F: one digit or more
// and its magnitude compares first by I (as an integer), then by F read as
// a fraction (0.F, so "5" and "50" are equal and shorter means padded with
// zeros). So the numbers in [L, U] (both >= 0) are
//   I == L.int with F >= L.frac  |  L.int < I < U.int with any F  |  I == U.int with F <= U.frac
// (one branch with both fraction bounds when L.int == U.int). Integers in a
// range are written as llama.cpp's build_min_max_int writes them (one
// alternative per digit count, and per digit where a bound's digits split
// the range); fraction languages are built one digit at a time. Negative
// numbers are "-" followed by a magnitude in the mirrored range, and never
// "-0".
#include "grammar/number_grammar.h"

#include <algorithm>
#include <vector>

namespace wllm {
namespace {

constexpr int kMaxExponent = 400;
// A bound's digits nest the expressions a level per digit; every this many
// levels a sub-expression becomes a rule of its own, so that a bound of many
// digits (1e-300, 10^300 + 1) stays within a GBNF parser's nesting limit.
constexpr int kLevelsPerRule = 32;

std::string digits_any(int min, int max) {
  if (min == max) return min == 1 ? "[0-9]" : str_printf("[0-9]{%d}", min);
  return str_printf("[0-9]{%d,%d}", min, max);
}

std::string digit_class(char from, char to) {
  return from == to ? std::string("[") + from + "]" : std::string("[") + from + "-" + to + "]";
}

std::string join(const std::vector<std::string>& alternatives) {
  std::string out;
  for (const std::string& a : alternatives) {
    if (!out.empty()) out += " | ";
    out += a;
  }
  return out;
}

// The alternatives as one item of a sequence (in parentheses unless it is a
// single alternative without '|').
std::string group(const std::vector<std::string>& alternatives) {
  const std::string joined = join(alternatives);
  return joined.find('|') == std::string::npos ? joined : "(" + joined + ")";
}

bool all_of(std::string_view s, char c) {
  return std::all_of(s.begin(), s.end(), [c](char x) { return x == c; });
}

// Sub-expressions at a recursion depth: a group, or every kLevelsPerRule
// levels a rule (when there is an add_rule to make one).
struct Nesting {
  const AddRule& add_rule;
  bool as_rule(int depth) const { return add_rule && depth % kLevelsPerRule == 0; }
  // `expr` as one item of a sequence.
  std::string item(const std::string& expr, int depth) const { return as_rule(depth) ? add_rule(expr) : group({expr}); }
  // `expr` or nothing.
  std::string optional(const std::string& expr, int depth) const {
    return as_rule(depth) ? add_rule(expr) + "?" : "(" + expr + ")?";
  }
};

// ---- integers: digit strings without leading zeros ----

bool int_less(const std::string& a, const std::string& b) {
  return a.size() != b.size() ? a.size() < b.size() : a < b;
}

std::string int_plus_one(std::string s) {
  for (size_t i = s.size(); i-- > 0;) {
    if (s[i] != '9') {
      ++s[i];
      return s;
    }
    s[i] = '0';
  }
  return "1" + s;
}

std::string int_minus_one(std::string s) {  // s >= 1
  for (size_t i = s.size(); i-- > 0;) {
    if (s[i] != '0') {
      --s[i];
      break;
    }
    s[i] = '9';
  }
  const size_t first = s.find_first_not_of('0');
  return first == std::string::npos ? "0" : s.substr(first);
}

// Digit strings of one length between lo and hi (lo <= hi, compared as text).
std::string fixed_range(const std::string& lo, const std::string& hi, const Nesting& nesting, int depth) {
  size_t i = 0;
  while (i < lo.size() && lo[i] == hi[i]) ++i;
  if (i == lo.size()) return "\"" + lo + "\"";
  std::string prefix = i > 0 ? "\"" + lo.substr(0, i) + "\" " : "";
  const int rest = static_cast<int>(lo.size() - i - 1);
  if (rest == 0) return prefix + digit_class(lo[i], hi[i]);
  const std::string lo_rest = lo.substr(i + 1), hi_rest = hi.substr(i + 1);
  const bool lo_free = all_of(lo_rest, '0'), hi_free = all_of(hi_rest, '9');
  std::vector<std::string> alts;
  if (!lo_free) {
    alts.push_back(std::string("\"") + lo[i] + "\" " +
                   nesting.item(fixed_range(lo_rest, std::string(rest, '9'), nesting, depth + 1), depth + 1));
  }
  const char from = lo_free ? lo[i] : static_cast<char>(lo[i] + 1);
  const char to = hi_free ? hi[i] : static_cast<char>(hi[i] - 1);
  if (from <= to) alts.push_back(digit_class(from, to) + " " + digits_any(rest, rest));
  if (!hi_free) {
    alts.push_back(std::string("\"") + hi[i] + "\" " +
                   nesting.item(fixed_range(std::string(rest, '0'), hi_rest, nesting, depth + 1), depth + 1));
  }
  return prefix + group(alts);
}

// Integers in [a, b], or [a, oo) without b (up to kMaxFreeDigits digits, or a's
// length if longer); "" if there are none.
std::string int_range(const std::string& a, const std::optional<std::string>& b, const Nesting& nesting) {
  if (b && int_less(*b, a)) return "";
  const int first_len = static_cast<int>(a.size());
  const int last_len = b ? static_cast<int>(b->size()) : std::max(kMaxFreeDigits, first_len);
  std::vector<std::string> alts;
  int full_from = -1;  // a run of lengths whose every number is in range
  const auto flush_full = [&](int to) {
    if (full_from < 0) return;
    if (full_from == 1) {
      alts.push_back(to == 1 ? "[0-9]" : "[0-9] | [1-9] " + digits_any(1, to - 1));
    } else {
      alts.push_back("[1-9] " + digits_any(full_from - 1, to - 1));
    }
    full_from = -1;
  };
  for (int len = first_len; len <= last_len; ++len) {
    const std::string smallest = len == 1 ? "0" : "1" + std::string(static_cast<size_t>(len - 1), '0');
    const std::string lo = len == first_len ? a : smallest;
    const std::string hi = (b && len == last_len) ? *b : std::string(static_cast<size_t>(len), '9');
    if (lo == smallest && all_of(hi, '9')) {
      if (full_from < 0) full_from = len;
      continue;
    }
    flush_full(len - 1);
    alts.push_back(fixed_range(lo, hi, nesting, 1));
  }
  flush_full(last_len);
  return join(alts);
}

// ---- fractions: the digits F after the point, compared as 0.F ----

struct FracBound {
  std::string digits;  // no trailing zeros ("" is 0)
  bool strict;
};

// A set of digit strings F: whether it holds "" (no fraction at all), and a
// GBNF expression for its non-empty members ("" if none).
struct FracLang {
  bool empty_ok;
  std::string nonempty;
};

const FracLang kAnyFraction{true, digits_any(1, kMaxFreeDigits)};

// {F : lo <= 0.F <= hi} (strict bounds exclude equality; absent ones do not bound).
FracLang frac_lang(std::optional<FracBound> lo, std::optional<FracBound> hi, const Nesting& nesting, int depth) {
  if (lo && lo->digits.empty() && !lo->strict) lo.reset();  // 0.F >= 0 always holds
  if (!lo && !hi) return kAnyFraction;
  if (hi && hi->digits.empty()) {  // 0.F <= 0: only zeros
    if (hi->strict || lo) return {false, ""};
    return {true, str_printf("\"0\"{1,%d}", kMaxFreeDigits)};
  }
  if (lo && lo->digits.empty() && !hi) {  // 0.F > 0: some digit is not zero
    return {false, str_printf("\"0\"{0,%d} [1-9] ", kMaxFreeDigits) + digits_any(0, kMaxFreeDigits)};
  }
  // The first digit d: between the bounds' first digits any rest will do;
  // on a bound's digit, the rest must meet the rest of that bound.
  const char lo0 = lo && !lo->digits.empty() ? lo->digits[0] : '0';
  const char hi0 = hi ? hi->digits[0] : '9';
  const auto rest_of = [](const FracBound& b) {
    return FracBound{b.digits.empty() ? "" : b.digits.substr(1), b.strict};
  };
  std::vector<std::string> alts;
  const auto add = [&](char d, const FracLang& rest) {
    const std::string digit = std::string("\"") + d + "\"";
    if (rest.nonempty.empty()) {
      if (rest.empty_ok) alts.push_back(digit);
    } else {
      alts.push_back(digit + " " + (rest.empty_ok ? nesting.optional(rest.nonempty, depth + 1)
                                                  : nesting.item(rest.nonempty, depth + 1)));
    }
  };
  const std::optional<FracBound> lo_rest = lo ? std::optional<FracBound>(rest_of(*lo)) : std::nullopt;
  const std::optional<FracBound> hi_rest = hi ? std::optional<FracBound>(rest_of(*hi)) : std::nullopt;
  if (lo0 == hi0) {
    add(lo0, frac_lang(lo_rest, hi_rest, nesting, depth + 1));
  } else {
    add(lo0, frac_lang(lo_rest, std::nullopt, nesting, depth + 1));
    const char from = static_cast<char>(lo0 + 1);
    const char to = hi ? static_cast<char>(hi0 - 1) : '9';
    if (from <= to) alts.push_back(digit_class(from, to) + " " + digits_any(0, kMaxFreeDigits - 1));
    if (hi) add(hi0, frac_lang(std::nullopt, hi_rest, nesting, depth + 1));
  }
  // "" (0.0) meets the lower bound only if there is none.
  return {!lo, join(alts)};
}

// The fraction part for a set of F: "", "("." F)?" or "." F; nullopt if the set
// is empty (integer_only: only "" counts).
std::optional<std::string> fraction_suffix(const FracLang& lang, bool integer_only) {
  if (integer_only || lang.nonempty.empty()) {
    if (!lang.empty_ok) return std::nullopt;
    return "";
  }
  const std::string part = "\".\" " + group({lang.nonempty});
  return lang.empty_ok ? " (" + part + ")?" : " " + part;
}

struct MagnitudeBound {
  std::string int_digits, frac_digits;
  bool strict;
};

// Non-negative numbers m with lo <= m <= hi (absent: unbounded), as "I[.F]" text.
std::vector<std::string> magnitude_alternatives(const std::optional<MagnitudeBound>& lo,
                                                const std::optional<MagnitudeBound>& hi, bool integer_only,
                                                const Nesting& nesting) {
  std::vector<std::string> alts;
  const auto add = [&](const std::string& integer, const FracLang& lang) {
    if (integer.empty()) return;
    const std::optional<std::string> suffix = fraction_suffix(lang, integer_only);
    if (suffix) alts.push_back(group({integer}) + *suffix);
  };
  const auto frac_of = [](const std::optional<MagnitudeBound>& b) {
    return b ? std::optional<FracBound>(FracBound{b->frac_digits, b->strict}) : std::nullopt;
  };
  const std::string lo_int = lo ? lo->int_digits : "0";
  const auto literal = [](const std::string& digits) { return "\"" + digits + "\""; };
  if (hi && lo_int == hi->int_digits) {
    add(literal(lo_int), frac_lang(frac_of(lo), frac_of(hi), nesting, 1));
    return alts;
  }
  add(literal(lo_int), frac_lang(frac_of(lo), std::nullopt, nesting, 1));
  const std::optional<std::string> mid_hi = hi ? std::optional<std::string>(int_minus_one(hi->int_digits)) : std::nullopt;
  add(int_range(int_plus_one(lo_int), mid_hi, nesting), kAnyFraction);
  if (hi) add(literal(hi->int_digits), frac_lang(std::nullopt, frac_of(hi), nesting, 1));
  return alts;
}

bool is_zero(const Decimal& d) { return d.int_digits == "0" && d.frac_digits.empty(); }

std::string describe(const Decimal& d) {
  return (d.negative ? "-" : "") + d.int_digits + (d.frac_digits.empty() ? "" : "." + d.frac_digits);
}

}  // namespace

Result<Decimal> parse_decimal(std::string_view text) {
  Decimal d;
  size_t i = 0;
  if (i < text.size() && text[i] == '-') {
    d.negative = true;
    ++i;
  }
  std::string digits;
  long point = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') digits.push_back(text[i++]);
  point = static_cast<long>(digits.size());
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') digits.push_back(text[i++]);
  }
  if (digits.empty()) return Status::error(ErrorCode::kInvalidArgument, "'%.*s' is not a number", static_cast<int>(text.size()), text.data());
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool negative_exp = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative_exp = text[i++] == '-';
    long exp = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      exp = exp * 10 + (text[i++] - '0');
      if (exp > kMaxExponent) {
        return Status::error(ErrorCode::kInvalidArgument, "the bound %.*s has an exponent beyond +-%d",
                             static_cast<int>(text.size()), text.data(), kMaxExponent);
      }
    }
    point += negative_exp ? -exp : exp;
  }
  if (i != text.size()) return Status::error(ErrorCode::kInvalidArgument, "'%.*s' is not a number", static_cast<int>(text.size()), text.data());
  // Place the decimal point `point` digits into `digits`.
  if (point <= 0) {
    d.int_digits = "0";
    d.frac_digits = std::string(static_cast<size_t>(-point), '0') + digits;
  } else if (point >= static_cast<long>(digits.size())) {
    d.int_digits = digits + std::string(static_cast<size_t>(point) - digits.size(), '0');
  } else {
    d.int_digits = digits.substr(0, static_cast<size_t>(point));
    d.frac_digits = digits.substr(static_cast<size_t>(point));
  }
  const size_t first = d.int_digits.find_first_not_of('0');
  d.int_digits = first == std::string::npos ? "0" : d.int_digits.substr(first);
  const size_t last = d.frac_digits.find_last_not_of('0');
  d.frac_digits = last == std::string::npos ? "" : d.frac_digits.substr(0, last + 1);
  if (is_zero(d)) d.negative = false;
  return d;
}

int compare_decimals(const Decimal& a, const Decimal& b) {
  if (a.negative != b.negative) return a.negative ? -1 : 1;
  const int sign = a.negative ? -1 : 1;
  if (a.int_digits != b.int_digits) return int_less(a.int_digits, b.int_digits) ? -sign : sign;
  const size_t n = std::max(a.frac_digits.size(), b.frac_digits.size());
  for (size_t i = 0; i < n; ++i) {
    const char x = i < a.frac_digits.size() ? a.frac_digits[i] : '0';
    const char y = i < b.frac_digits.size() ? b.frac_digits[i] : '0';
    if (x != y) return x < y ? -sign : sign;
  }
  return 0;
}

Result<std::string> bounded_number_gbnf(const std::optional<NumberBound>& lower, const std::optional<NumberBound>& upper,
                                        bool integer_only, const AddRule& add_rule) {
  const Nesting nesting{add_rule};
  const auto empty = [&] {
    std::string range = (lower ? (lower->exclusive ? "(" : "[") + describe(lower->value) : std::string("(-inf")) + ", " +
                        (upper ? describe(upper->value) + (upper->exclusive ? ")" : "]") : std::string("inf)"));
    return Status(ErrorCode::kInvalidArgument,
                  std::string("no ") + (integer_only ? "integer" : "number") + " lies in " + range);
  };
  if (lower && upper) {
    const int c = compare_decimals(lower->value, upper->value);
    if (c > 0 || (c == 0 && (lower->exclusive || upper->exclusive))) return empty();
  }
  std::vector<std::string> alts;
  // x >= 0: lower clipped at zero, and empty if the upper bound is below zero.
  const bool nonneg_possible = !upper || (!upper->value.negative && !(is_zero(upper->value) && upper->exclusive));
  if (nonneg_possible) {
    std::optional<MagnitudeBound> lo, hi;
    if (lower && !lower->value.negative) lo = MagnitudeBound{lower->value.int_digits, lower->value.frac_digits, lower->exclusive};
    if (upper) hi = MagnitudeBound{upper->value.int_digits, upper->value.frac_digits, upper->exclusive};
    for (std::string& a : magnitude_alternatives(lo, hi, integer_only, nesting)) alts.push_back(std::move(a));
  }
  // x < 0: "-" and a magnitude m > 0 with -lower >= m >= -upper.
  if (!lower || lower->value.negative) {
    std::optional<MagnitudeBound> lo = MagnitudeBound{"0", "", true};
    std::optional<MagnitudeBound> hi;
    if (upper && upper->value.negative) lo = MagnitudeBound{upper->value.int_digits, upper->value.frac_digits, upper->exclusive};
    if (lower) hi = MagnitudeBound{lower->value.int_digits, lower->value.frac_digits, lower->exclusive};
    const std::vector<std::string> negative = magnitude_alternatives(lo, hi, integer_only, nesting);
    if (!negative.empty()) alts.push_back("\"-\" " + group(negative));
  }
  if (alts.empty()) return empty();
  return group(alts);
}

}  // namespace wllm
