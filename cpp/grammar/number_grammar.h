// Grammars for JSON numbers between bounds, exact: a bound is kept as the
// decimal digits it was written with, and the grammar compares digit
// strings, so `"minimum": 0.1` admits 0.1 and nothing below it however it
// would round. Bounded numbers are written without an exponent (1e3 is valid
// JSON for 1000, but a grammar cannot compare it digit by digit); free runs
// of digits are capped (kMaxFreeDigits, as llama.cpp's 16) so a model cannot
// write digits forever.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace wllm {

inline constexpr int kMaxFreeDigits = 16;

// An exact decimal: [-] int_digits . frac_digits.
struct Decimal {
  bool negative = false;    // never for zero
  std::string int_digits;   // no leading zeros; "0" for a zero integer part
  std::string frac_digits;  // no trailing zeros; may be empty
};

// From JSON number text (exponents applied). kInvalidArgument for exponents
// beyond +-400 (no bound needs them).
Result<Decimal> parse_decimal(std::string_view json_number);
// <0, 0, >0 as a is below, equal to or above b.
int compare_decimals(const Decimal& a, const Decimal& b);

struct NumberBound {
  Decimal value;
  bool exclusive = false;
};

// Makes a rule with this GBNF body and returns its name (JsonGrammarBuilder::add_rule).
using AddRule = std::function<std::string(const std::string& body)>;

// A GBNF expression for the JSON numbers x with lower <= x <= upper (< when
// exclusive; either bound may be absent, not both), integers only if
// integer_only. kInvalidArgument (message names the bounds) if no number fits.
// The expression nests a group per digit of a bound; with add_rule, parts
// nested deeply become rules, so a bound of hundreds of digits (1e-300)
// stays within the GBNF parser's nesting limit.
Result<std::string> bounded_number_gbnf(const std::optional<NumberBound>& lower,
                                        const std::optional<NumberBound>& upper, bool integer_only,
                                        const AddRule& add_rule = nullptr);

}  // namespace wllm
