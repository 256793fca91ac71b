// Tests for cpp/grammar: the GBNF parser (its errors and their positions),
// the matcher (what it accepts and rejects, byte by byte, UTF-8 included),
// the JSON reader, exact number ranges (against a brute-force oracle), regex
// patterns, every JSON Schema keyword (and the errors for the unsupported
// ones), grammars that embed schemas, lazy grammars' triggers, and token
// masking: the trie walk must give exactly the tokens whose bytes the
// matcher accepts one by one, on real vocabularies (preserved control
// tokens included).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/grammar_matcher.h"
#include "grammar/json.h"
#include "grammar/json_schema.h"
#include "grammar/number_grammar.h"
#include "grammar/output_constraint.h"
#include "grammar/pattern_grammar.h"
#include "grammar/token_masker.h"
#include "grammar/token_trie.h"
#include "grammar/trigger_scanner.h"
#include "shared_vocab.h"
#include "tokenizer/tokenizer.h"

namespace wllm {
namespace {

void expect_error(const Status& s, const std::string& part) {
  ASSERT_FALSE(s.ok()) << "expected an error containing: " << part;
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.message();
  EXPECT_NE(s.message().find(part), std::string::npos) << "message: " << s.message() << "\nexpected: " << part;
}

std::shared_ptr<const Grammar> must_parse(const std::string& gbnf) {
  Result<Grammar> g = parse_gbnf(gbnf);
  if (!g.ok()) {
    ADD_FAILURE() << g.status().message() << "\nin:\n" << gbnf;
    return std::make_shared<const Grammar>(*parse_gbnf("root ::= \"\"\n"));
  }
  return std::make_shared<const Grammar>(std::move(*g));
}

// The matcher state after `text`, or kDead.
GrammarMatcher::StateId run(GrammarMatcher& m, std::string_view text) {
  GrammarMatcher::StateId s = m.initial_state();
  for (const char c : text) {
    s = m.step(s, static_cast<uint8_t>(c));
    if (s == GrammarMatcher::kDead) break;
  }
  return s;
}

// A grammar and the texts it accepts whole, or as a beginning.
class Matches {
 public:
  explicit Matches(const std::string& gbnf) : matcher_(must_parse(gbnf)) {}
  bool whole(std::string_view text) {
    const auto s = run(matcher_, text);
    return s != GrammarMatcher::kDead && matcher_.can_end(s);
  }
  bool prefix(std::string_view text) { return run(matcher_, text) != GrammarMatcher::kDead; }
  GrammarMatcher& matcher() { return matcher_; }

 private:
  GrammarMatcher matcher_;
};

std::string schema_grammar(const std::string& schema) {
  Result<std::string> g = json_schema_gbnf(schema);
  if (!g.ok()) {
    ADD_FAILURE() << g.status().message() << "\nschema: " << schema;
    return "root ::= \"\"\n";
  }
  return *g;
}

// ---------------------------------------------------------------------------
// GBNF parser

TEST(GbnfParser, ErrorsNameTheProblemAndWhereItIs) {
  expect_error(parse_gbnf("root ::= \"abc\n").status(), "line 1, column 10: the string literal is not closed");
  expect_error(parse_gbnf("root ::= item\n").status(), "line 1, column 10: rule 'item' is used but never defined");
  expect_error(parse_gbnf("item ::= \"x\"\n").status(), "there is no 'root' rule");
  expect_error(parse_gbnf("root ::= \"a\"\nroot ::= \"b\"\n").status(),
               "line 2, column 1: rule 'root' is defined twice (first at line 1, column 1)");
  expect_error(parse_gbnf("root ::= (\"a\" | \"b\"\n").status(), "line 2, column 1: expected ')' to close the group opened at line 1, column 10");
  expect_error(parse_gbnf("root = \"a\"\n").status(), "line 1, column 6: expected '::=' after the rule name 'root'");
  expect_error(parse_gbnf("root ::= \"a\" )\n").status(), "line 1, column 14: expected the end of the line after rule 'root', found ')'");
  expect_error(parse_gbnf("root ::= * \"a\"\n").status(), "line 1, column 10: '*' has nothing before it to repeat");
  expect_error(parse_gbnf("root ::= [ab").status(), "line 1, column 10: the character set is not closed");
  expect_error(parse_gbnf("root ::= [z-a]\n").status(), "line 1, column 11: the range U+007A-U+0061 is empty");
  expect_error(parse_gbnf("root ::= []\n").status(), "the character set [] is empty");
  expect_error(parse_gbnf("root ::= \"\\q\"\n").status(), "line 1, column 11: unknown escape '\\q'");
  expect_error(parse_gbnf("root ::= \"\\x4\"\n").status(), "the escape needs 2 hexadecimal digits");
  expect_error(parse_gbnf("root ::= \"a\"{20000}\n").status(), "the repetition count is larger than 10000");
  expect_error(parse_gbnf("root ::= \"a\"{3,2}\n").status(), "has its maximum below its minimum");
  expect_error(parse_gbnf("root ::= \"a\"{2\n").status(), "expected ',' or '}' in the repetition");
  expect_error(parse_gbnf("root ::= <[1000]>\n").status(), "token references (<[id]>, <text>, !<...>) are not supported");
  expect_error(parse_gbnf("root ::= \"\xff\"\n").status(), "not valid UTF-8");
  // Multi-byte characters count as one column.
  expect_error(parse_gbnf("root ::= \"é\" oops\n").status(), "line 1, column 14: rule 'oops'");
}

TEST(GbnfParser, LeftRecursionIsRefusedByName) {
  expect_error(parse_gbnf("root ::= root \"a\" | \"b\"\n").status(), "rule 'root' is left-recursive");
  expect_error(parse_gbnf("root ::= x\nx ::= y \"a\"\ny ::= \"\" | x\n").status(), "is left-recursive");
  // Through a rule that can match nothing.
  expect_error(parse_gbnf("root ::= e root \"a\" | \"b\"\ne ::= \"x\"?\n").status(), "rule 'root' is left-recursive");
  // A repeated part that can match nothing loops without consuming: (x?)* is refused, as llama.cpp does.
  expect_error(parse_gbnf("root ::= (\"a\"?)*\n").status(), "left-recursive");
  // Right recursion is fine.
  EXPECT_TRUE(parse_gbnf("root ::= \"a\" root | \"b\"\n").ok());
}

TEST(GbnfParser, DeepNestingIsRefusedNotACrash) {
  expect_error(parse_gbnf("root ::= " + std::string(100000, '(') + "\"a\"" + std::string(100000, ')') + "\n").status(),
               "groups nest deeper than 256 levels");
  expect_error(pattern_gbnf(std::string(100000, '(') + "a" + std::string(100000, ')'), "char").status(),
               "groups nest deeper than 256 levels");
  EXPECT_TRUE(parse_gbnf("root ::= " + std::string(200, '(') + "\"a\"" + std::string(200, ')') + "\n").ok());
}

TEST(GbnfParser, TooLargeGrammarsAreRefused) {
  // 10000 copies of a 200-character literal, 10000 times: refused before it is built.
  std::string big(200, 'a');
  expect_error(parse_gbnf("root ::= (\"" + big + "\"{10000}){10000}\n").status(), "the grammar is too large");
}

TEST(GbnfParser, CommentsNewlinesAndWindowsLineEnds) {
  Matches m(
      "# a comment\r\n"
      "root ::= item (\n"
      "    \",\" item  # inside a group, rules may span lines\n"
      "  )* |\n"
      "  \"none\"\r\n"
      "item ::= [a-z]+\n");
  EXPECT_TRUE(m.whole("abc,de"));
  EXPECT_TRUE(m.whole("none"));
  EXPECT_FALSE(m.whole("abc,"));
}

// ---------------------------------------------------------------------------
// Matcher

TEST(GrammarMatcher, LiteralsClassesAndRepetitions) {
  Matches m("root ::= \"ab\" [c-eX]+ [^0-9]? \".\"{2} x{1,3} y{2,}\nx ::= \"x\"\ny ::= \"y\"\n");
  EXPECT_TRUE(m.whole("abcX..xyy"));
  EXPECT_TRUE(m.whole("abeeZ..xxxyyyyy"));
  EXPECT_FALSE(m.whole("abeeZ..xxxxyy"));  // x{1,3}
  EXPECT_FALSE(m.whole("abc..xy"));        // y{2,}
  EXPECT_FALSE(m.whole("ab1..xyy"));       // [c-eX]+ needs one
  EXPECT_FALSE(m.prefix("abc5"));          // [^0-9]
  EXPECT_TRUE(m.prefix("abc"));
  EXPECT_FALSE(m.whole("abc"));
}

TEST(GrammarMatcher, EmptyStackMeansTheGrammarCanEnd) {
  Matches m("root ::= \"a\" \"b\"?\n");
  const auto a = run(m.matcher(), "a");
  EXPECT_TRUE(m.matcher().can_end(a));
  EXPECT_FALSE(m.matcher().must_end(a));  // "b" may follow
  const auto ab = run(m.matcher(), "ab");
  EXPECT_TRUE(m.matcher().must_end(ab));
  EXPECT_EQ(m.matcher().step(ab, 'b'), GrammarMatcher::kDead);
}

TEST(GrammarMatcher, AmbiguousGrammarsKeepEveryParse) {
  Matches m("root ::= x* \"a\" \"b\"\nx ::= \"a\" | \"ab\"\n");
  EXPECT_TRUE(m.whole("ab"));
  EXPECT_TRUE(m.whole("aab"));
  EXPECT_TRUE(m.whole("ababab"));
  EXPECT_FALSE(m.whole("abb"));
}

TEST(GrammarMatcher, Utf8OneByteAtATime) {
  Matches m("root ::= [ぁ-ゟ]+ \"é\" .\n");  // hiragana (3 bytes), é (2 bytes), any character
  EXPECT_TRUE(m.whole("あいé😀"));
  EXPECT_FALSE(m.whole("あ"));
  // A character split between tokens is allowed while it can still complete the grammar's way.
  EXPECT_TRUE(m.prefix("\xE3"));          // the lead byte of U+3000..U+3FFF
  EXPECT_TRUE(m.prefix("\xE3\x81"));      // U+3040..U+307F: overlaps the range
  EXPECT_FALSE(m.prefix("\xE3\x80"));     // U+3000..U+303F: none in it
  EXPECT_FALSE(m.prefix("\xE4"));         // U+4000..: none
  // Ill-formed UTF-8 is never accepted, even where '.' matches anything.
  Matches any("root ::= .*\n");
  EXPECT_TRUE(any.whole("a\xC3\xA9\xF0\x9F\x98\x80"));
  EXPECT_FALSE(any.prefix("\x80"));             // a lone continuation byte
  EXPECT_FALSE(any.prefix("\xC0\x80"));         // overlong NUL
  EXPECT_FALSE(any.prefix("\xE0\x80"));         // an overlong 3-byte form
  EXPECT_FALSE(any.prefix("\xED\xA0\x80"));     // a surrogate
  EXPECT_FALSE(any.prefix("\xF4\x90"));         // past U+10FFFF
  EXPECT_FALSE(any.prefix("\xF8"));
  EXPECT_TRUE(any.prefix("\xF4\x8F\xBF"));      // U+10FFFF is still to come
  EXPECT_FALSE(any.whole("\xC3"));              // an unfinished character cannot end
}

TEST(GrammarMatcher, CompactKeepsTheState) {
  Matches m("root ::= \"[\" (x (\",\" x)*)? \"]\"\nx ::= [0-9]+ | root\n");
  GrammarMatcher& g = m.matcher();
  auto s = run(g, "[[1,[22");
  ASSERT_NE(s, GrammarMatcher::kDead);
  s = g.compact(s);
  for (const char c : std::string("],3]]")) s = g.step(s, static_cast<uint8_t>(c));
  ASSERT_NE(s, GrammarMatcher::kDead);
  EXPECT_TRUE(g.must_end(s));
}

TEST(GrammarMatcher, AmbiguityGrowingWithTheTextFailsInsteadOfExhaustingMemory) {
  // Each "a" may close with "b" or "c", so n bytes have 3 * 2^n parses; past
  // kMaxParses a step fails, and says so, instead of exhausting memory.
  Matches m("root ::= \"a\" root \"b\" | \"a\" root \"c\" | \"d\"\n");
  GrammarMatcher& g = m.matcher();
  GrammarMatcher::StateId s = g.initial_state();
  int steps = 0;
  while (steps < 40 && (s = g.step(s, 'a')) != GrammarMatcher::kDead) ++steps;
  EXPECT_EQ(steps, 14);  // 3 * 2^14 parses fit in kMaxParses, 3 * 2^15 do not
  EXPECT_TRUE(g.overflowed());
  g.clear_overflow();
  // The same step again (now cached) fails the same way; a rejected byte is no overflow.
  s = run(g, std::string(14, 'a'));
  ASSERT_NE(s, GrammarMatcher::kDead);
  EXPECT_EQ(g.step(s, 'a'), GrammarMatcher::kDead);
  EXPECT_TRUE(g.overflowed());
  g.clear_overflow();
  EXPECT_EQ(g.step(s, 'x'), GrammarMatcher::kDead);
  EXPECT_FALSE(g.overflowed());
  EXPECT_TRUE(m.whole("aadbc"));
  // Many parses at once that do not multiply are fine: 50000 words, one parse each.
  std::string words = "root ::= \"w\" ( ";
  for (int i = 0; i < 50000; ++i) words += (i ? " | \"" : "\"") + std::to_string(100000 + i) + "\"";
  Matches many(words + " )\n");
  EXPECT_TRUE(many.whole("w123456"));
  EXPECT_FALSE(many.whole("w153456"));
  EXPECT_FALSE(many.matcher().overflowed());
}

// ---------------------------------------------------------------------------
// JSON reader

TEST(Json, ReadsStrictJson) {
  Result<JsonValue> v = parse_json(R"({"a": [1, -2.5e3, true, null, "x\u00e9\ud83d\ude00\n"], "b": {}})");
  ASSERT_TRUE(v.ok()) << v.status().message();
  const JsonValue& a = *v->find("a");
  ASSERT_EQ(a.items.size(), 5u);
  EXPECT_EQ(a.items[1].text, "-2.5e3");  // numbers keep their text
  EXPECT_EQ(a.items[4].text, "x\xC3\xA9\xF0\x9F\x98\x80\n");
  EXPECT_EQ(v->dump(), R"({"a":[1,-2.5e3,true,null,"xé😀\n"],"b":{}})");
  expect_error(parse_json("{\"a\": 1,}", "schema").status(), "schema: line 1, column 9: expected a member name");
  expect_error(parse_json("{\"a\": 1, \"a\": 2}").status(), "two members named 'a'");
  expect_error(parse_json("[1 2]").status(), "expected ',' or ']'");
  expect_error(parse_json("\"\\ud800\"").status(), "high surrogate escape without a low surrogate");
  expect_error(parse_json("01").status(), "after the JSON value");
  expect_error(parse_json("{\n  \"a\": tru\n}").status(), "line 2, column 8: expected a JSON value");
  expect_error(parse_json(std::string(300, '[') + std::string(300, ']')).status(), "nests deeper than 256");
}

// ---------------------------------------------------------------------------
// Numbers between bounds: every number of a grid, against comparisons of doubles
// (exact for these short decimals).

struct Bounds {
  const char* lower;  // nullptr: none
  bool lower_exclusive;
  const char* upper;
  bool upper_exclusive;
};

std::optional<NumberBound> bound(const char* text, bool exclusive) {
  if (!text) return std::nullopt;
  return NumberBound{*parse_decimal(text), exclusive};
}

TEST(NumberGrammar, BoundedNumbersMatchExactlyTheNumbersInRange) {
  const Bounds cases[] = {
      {"0", false, "100", false},   {"0", true, "100", true},      {"1.5", false, nullptr, false},
      {nullptr, false, "-2.25", true}, {"-10", false, "10", false}, {"-10.05", true, "-0.5", false},
      {"0.001", false, "0.01", true}, {"7", false, "7", false},      {"-3", true, "12.5", false},
      {"99", false, "1001", false}, {"-0.75", false, "0.75", true},  {"3.14", true, "3.15", false},
  };
  std::vector<std::string> numbers;
  for (const char* sign : {"", "-"}) {
    for (int i : {0, 1, 2, 3, 5, 7, 9, 10, 11, 12, 13, 50, 99, 100, 101, 999, 1000, 1001, 1002, 12345}) {
      for (const char* frac : {"", ".0", ".00", ".001", ".009", ".01", ".05", ".14", ".15", ".151", ".2", ".25", ".250",
                               ".3", ".5", ".50", ".51", ".7", ".75", ".76", ".99"}) {
        numbers.push_back(sign + std::to_string(i) + frac);
      }
    }
  }
  for (const Bounds& b : cases) {
    for (bool integer_only : {false, true}) {
      Result<std::string> expr = bounded_number_gbnf(bound(b.lower, b.lower_exclusive), bound(b.upper, b.upper_exclusive),
                                                     integer_only);
      if (integer_only && !expr.ok()) {  // [0.001, 0.01) holds no integer
        expect_error(expr.status(), "no integer lies in");
        continue;
      }
      ASSERT_TRUE(expr.ok()) << expr.status().message();
      Matches m("root ::= " + *expr + "\n");
      for (const std::string& n : numbers) {
        const double x = std::strtod(n.c_str(), nullptr);
        bool in = true;
        if (b.lower) in = in && (b.lower_exclusive ? x > std::strtod(b.lower, nullptr) : x >= std::strtod(b.lower, nullptr));
        if (b.upper) in = in && (b.upper_exclusive ? x < std::strtod(b.upper, nullptr) : x <= std::strtod(b.upper, nullptr));
        if (integer_only) in = in && n.find('.') == std::string::npos;
        if (n[0] == '-' && x == 0) in = false;  // "-0" is never written
        EXPECT_EQ(m.whole(n), in) << n << " in " << (b.lower ? b.lower : "-inf") << ".." << (b.upper ? b.upper : "inf")
                                  << (integer_only ? " (integers)" : "") << "\n" << *expr;
      }
    }
  }
}

TEST(NumberGrammar, EmptyRangesAreErrors) {
  expect_error(bounded_number_gbnf(bound("5", false), bound("4", false), false).status(), "no number lies in [5, 4]");
  expect_error(bounded_number_gbnf(bound("5", true), bound("5", false), false).status(), "no number lies in (5, 5]");
  expect_error(bounded_number_gbnf(bound("1.2", false), bound("1.8", false), true).status(), "no integer lies in [1.2, 1.8]");
  EXPECT_EQ(parse_decimal("-1.25e2")->int_digits, "125");
  EXPECT_EQ(parse_decimal("0.0012e-1")->frac_digits, "00012");
  expect_error(parse_decimal("1e999").status(), "exponent beyond");
}

// ---------------------------------------------------------------------------
// Patterns: the JSON text between the quotes, for the string the regex matches.

std::string pattern_grammar(const std::string& pattern) {
  Result<std::string> p = pattern_gbnf(pattern, "char");
  if (!p.ok()) {
    ADD_FAILURE() << p.status().message();
    return "root ::= \"\"\n";
  }
  return "root ::= " + *p + "\nchar ::= [^\"\\\\\\x00-\\x1F] | \"\\\\\" [\"\\\\/bfnrt]\n";
}

TEST(PatternGrammar, RegexFeatures) {
  Matches phone(pattern_grammar(R"(^\(\d{3}\) \d{3}-\d{4}$)"));
  EXPECT_TRUE(phone.whole("(555) 123-4567"));
  EXPECT_FALSE(phone.whole("555-123-4567"));
  Matches words(pattern_grammar(R"(^(?:[A-Z][a-z]*)(?: [A-Z][a-z]*){0,2}$)"));
  EXPECT_TRUE(words.whole("Alice Liddell"));
  EXPECT_FALSE(words.whole("alice"));
  EXPECT_FALSE(words.whole("A B C D"));
  Matches alternation(pattern_grammar("^(cat|dog)s?$|^bird$"));
  EXPECT_TRUE(alternation.whole("dogs"));
  EXPECT_TRUE(alternation.whole("bird"));
  EXPECT_FALSE(alternation.whole("birds"));
  // Unanchored: the match may be anywhere.
  Matches anywhere(pattern_grammar("ab+"));
  EXPECT_TRUE(anywhere.whole("xxabbbyy"));
  EXPECT_FALSE(anywhere.whole("xxayy"));
  // Characters JSON must escape are written escaped.
  Matches quote(pattern_grammar(R"(^a"b\\c\td$)"));
  EXPECT_TRUE(quote.whole(R"(a\"b\\c\td)"));
  EXPECT_FALSE(quote.prefix("a\""));
  Matches dot(pattern_grammar("^.$"));
  EXPECT_TRUE(dot.whole("\xC3\xA9"));
  EXPECT_FALSE(dot.whole("\\n"));  // '.' is no line terminator
  Matches classes(pattern_grammar(R"(^[\w.-]+@[^\s@]+$)"));
  EXPECT_TRUE(classes.whole("a.b-c_9@example.org"));
  EXPECT_FALSE(classes.whole("a b@x"));
}

TEST(PatternGrammar, UnsupportedRegexIsAnError) {
  expect_error(pattern_gbnf("^(?=a)b$", "char").status(), "pattern at offset 1: lookahead");
  expect_error(pattern_gbnf(R"(^(a)\1$)", "char").status(), "backreferences are not supported");
  expect_error(pattern_gbnf(R"(\bword)", "char").status(), "word boundaries");
  expect_error(pattern_gbnf(R"(^\p{L}+$)", "char").status(), "Unicode property escapes");
  expect_error(pattern_gbnf("^a^b$", "char").status(), "pattern at offset 2: '^' is supported only at the start");
  expect_error(pattern_gbnf("^(a*)*$", "char").status(), "a repeated part that can match the empty string");
  expect_error(pattern_gbnf("^a{2,1}$", "char").status(), "maximum is below its minimum");
  expect_error(pattern_gbnf("^(ab", "char").status(), "pattern at offset 1: the group is not closed with ')'");
  expect_error(pattern_gbnf("^[ab$", "char").status(), "not closed with ']'");
  expect_error(pattern_gbnf("^\\q$", "char").status(), "the escape '\\q' is not supported");
}

// ---------------------------------------------------------------------------
// JSON Schema: each keyword, through the whole pipeline (schema -> GBNF -> matcher).

TEST(JsonSchema, Types) {
  Matches s(schema_grammar(R"({"type": "string"})"));
  EXPECT_TRUE(s.whole(R"("a \"quoted\" \u00e9 word")"));
  EXPECT_FALSE(s.whole("12"));
  EXPECT_FALSE(s.prefix("\"\\ud800"));  // a lone surrogate escape
  Matches n(schema_grammar(R"({"type": "number"})"));
  EXPECT_TRUE(n.whole("-12.5e10"));
  EXPECT_FALSE(n.whole("01"));
  EXPECT_FALSE(n.whole("1e100"));  // exponents have at most 2 digits: every number stays finite
  Matches i(schema_grammar(R"({"type": "integer"})"));
  EXPECT_TRUE(i.whole("-42"));
  EXPECT_FALSE(i.whole("4.2"));
  Matches several(schema_grammar(R"({"type": ["boolean", "null"]})"));
  EXPECT_TRUE(several.whole("true"));
  EXPECT_TRUE(several.whole(" null "));
  EXPECT_FALSE(several.whole("0"));
  Matches any(schema_grammar("{}"));
  EXPECT_TRUE(any.whole(R"({"a": [1, {"b": null}], "c": "d"})"));
  Matches also_any(schema_grammar("true"));
  EXPECT_TRUE(also_any.whole("[]"));
}

TEST(JsonSchema, Objects) {
  Matches m(schema_grammar(R"({"type": "object", "properties": {
      "name": {"type": "string"}, "age": {"type": "integer"}, "nick": {"type": "string"}},
      "required": ["name"]})"));
  EXPECT_TRUE(m.whole(R"({"name": "Al"})"));
  EXPECT_TRUE(m.whole(R"({"name": "Al", "age": 3, "nick": "a"})"));
  EXPECT_TRUE(m.whole(R"({"name": "Al", "nick": "a"})"));
  EXPECT_FALSE(m.whole(R"({"age": 3})"));                 // name is required
  EXPECT_FALSE(m.whole(R"({"name": "Al", "other": 1})"));  // no additional properties unless allowed
  Matches none_required(schema_grammar(R"({"properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}})"));
  EXPECT_TRUE(none_required.whole("{}"));
  EXPECT_TRUE(none_required.whole(R"({"b": 2})"));
  EXPECT_TRUE(none_required.whole(R"({"a": 1, "b": 2})"));
  EXPECT_FALSE(none_required.whole(R"({"b": 2, "a": 1})"));  // properties in schema order
  Matches extra(schema_grammar(R"({"properties": {"id": {"type": "integer"}}, "required": ["id"],
      "additionalProperties": {"type": "string"}})"));
  EXPECT_TRUE(extra.whole(R"({"id": 1, "x": "y", "idx": "z"})"));
  EXPECT_FALSE(extra.whole(R"({"id": 1, "id": "y"})"));  // an additional key is never a declared one
  EXPECT_FALSE(extra.whole(R"({"id": 1, "x": 2})"));
  Matches open(schema_grammar(R"({"type": "object", "additionalProperties": true, "properties": {"a": {"const": 1}}})"));
  EXPECT_TRUE(open.whole(R"({"a": 1, "b": [true]})"));
  Matches required_only(schema_grammar(R"({"type": "object", "required": ["k"]})"));
  EXPECT_TRUE(required_only.whole(R"({"k": [1], "other": 2})"));
  EXPECT_FALSE(required_only.whole(R"({"other": 2})"));
}

TEST(JsonSchema, RequiredNamesOutsidePropertiesTakeAdditionalProperties) {
  // Found by tests/fuzz/grammar_fuzz.cpp: a required name that properties do
  // not list is an additional property, so additionalProperties decides its value.
  Matches typed(schema_grammar(R"({"properties": {"a": {"type": "integer"}}, "required": ["a", "b"],
      "additionalProperties": {"type": "string"}})"));
  EXPECT_TRUE(typed.whole(R"({"a": 1, "b": "x"})"));
  EXPECT_FALSE(typed.whole(R"({"a": 1, "b": 2})"));
  expect_error(json_schema_gbnf(R"({"properties": {"a": {"type": "integer"}}, "required": ["a", "b"],
      "additionalProperties": false})").status(),
               "JSON schema at the root: the required property 'b' is not in properties and additionalProperties is "
               "false: no value is valid");
  // Absent, additionalProperties allows any value for it (only unnamed extras are left out).
  Matches absent(schema_grammar(R"({"properties": {"a": {"type": "integer"}}, "required": ["b"]})"));
  EXPECT_TRUE(absent.whole(R"({"b": [null]})"));
  EXPECT_FALSE(absent.whole(R"({"b": 1, "c": 2})"));
}

TEST(JsonSchema, LongPropertyNamesBesideAdditionalProperties) {
  // Found by tests/fuzz/grammar_fuzz.cpp: the keys other than a declared
  // name nested a group per character of the name, so a name of 130
  // characters gave GBNF deeper than the parser takes.
  const std::string name(300, 'k');
  Matches m(schema_grammar(R"({"properties": {")" + name + R"(": {"type": "integer"}, "kz": {"type": "integer"}},
      "required": [")" + name + R"("], "additionalProperties": {"type": "boolean"}})"));
  EXPECT_TRUE(m.whole("{\"" + name + "\": 1, \"k\": true}"));
  EXPECT_TRUE(m.whole("{\"" + name + "\": 1, \"kz\": 2, \"" + name + "k\": false}"));
  EXPECT_TRUE(m.whole("{\"" + name + "\": 1, \"" + name.substr(1) + "\": true, \"kzz\": true}"));
  EXPECT_FALSE(m.whole("{\"" + name + "\": 1, \"" + name + "\": true}"));  // a declared name is no additional key
  EXPECT_FALSE(m.whole("{\"" + name + "\": 1, \"kz\": true}"));
}

TEST(JsonSchema, Arrays) {
  Matches m(schema_grammar(R"({"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 3})"));
  EXPECT_TRUE(m.whole("[1, 2]"));
  EXPECT_TRUE(m.whole("[1,2,3]"));
  EXPECT_FALSE(m.whole("[1]"));
  EXPECT_FALSE(m.whole("[1,2,3,4]"));
  EXPECT_FALSE(m.whole("[1,\"2\"]"));
  Matches optional(schema_grammar(R"({"items": {"type": "boolean"}})"));
  EXPECT_TRUE(optional.whole("[]"));
  EXPECT_TRUE(optional.whole("[true, false, true]"));
  Matches empty(schema_grammar(R"({"type": "array", "maxItems": 0})"));
  EXPECT_TRUE(empty.whole("[ ]"));
  EXPECT_FALSE(empty.whole("[1]"));
  Matches unique_false(schema_grammar(R"({"type": "array", "uniqueItems": false})"));
  EXPECT_TRUE(unique_false.whole("[1, 1]"));
}

TEST(JsonSchema, Strings) {
  Matches len(schema_grammar(R"({"type": "string", "minLength": 2, "maxLength": 3})"));
  EXPECT_TRUE(len.whole(R"("ab")"));
  EXPECT_TRUE(len.whole(R"("a\n\u00e9")"));  // an escape is one character
  EXPECT_TRUE(len.whole("\"日本\""));
  EXPECT_FALSE(len.whole(R"("a")"));
  EXPECT_FALSE(len.whole(R"("abcd")"));
  Matches pattern(schema_grammar(R"({"type": "string", "pattern": "^[A-Z]{2}-[0-9]+$"})"));
  EXPECT_TRUE(pattern.whole(R"("AB-123")"));
  EXPECT_FALSE(pattern.whole(R"("Ab-123")"));
  Matches date(schema_grammar(R"({"type": "string", "format": "date"})"));
  EXPECT_TRUE(date.whole(R"("2024-02-28")"));
  EXPECT_FALSE(date.whole(R"("2024-02-30")"));
  EXPECT_FALSE(date.whole(R"("2024-04-31")"));
  Matches date_time(schema_grammar(R"({"format": "date-time"})"));
  EXPECT_TRUE(date_time.whole(R"("2024-12-31T23:59:59.5+01:00")"));
  Matches uuid(schema_grammar(R"({"format": "uuid"})"));
  EXPECT_TRUE(uuid.whole(R"("123e4567-e89b-12d3-a456-426614174000")"));
}

TEST(JsonSchema, NumbersWithBounds) {
  Matches m(schema_grammar(R"({"type": "number", "minimum": -1.5, "exclusiveMaximum": 2})"));
  EXPECT_TRUE(m.whole("-1.5"));
  EXPECT_TRUE(m.whole("1.999"));
  EXPECT_FALSE(m.whole("2"));
  EXPECT_FALSE(m.whole("-1.51"));
  Matches i(schema_grammar(R"({"type": "integer", "exclusiveMinimum": 0, "maximum": 150})"));
  EXPECT_TRUE(i.whole("1"));
  EXPECT_TRUE(i.whole("150"));
  EXPECT_FALSE(i.whole("0"));
  EXPECT_FALSE(i.whole("151"));
  Matches draft4(schema_grammar(R"({"type": "integer", "minimum": 5, "exclusiveMinimum": true})"));
  EXPECT_FALSE(draft4.whole("5"));
  EXPECT_TRUE(draft4.whole("6"));
}

TEST(JsonSchema, BoundsOfHundredsOfDigits) {
  // The number grammar nests a group per digit of a bound: 1e-300, 10^300 + 1
  // (after minimum 1e300) or a bound of 300 significant digits gave GBNF
  // nested deeper than the parser takes; deep parts are now rules of their own.
  Matches tiny(schema_grammar(R"({"type": "number", "exclusiveMinimum": 5e-324})"));
  EXPECT_TRUE(tiny.whole("0.0000000000000001"));
  EXPECT_TRUE(tiny.whole("2"));
  EXPECT_FALSE(tiny.whole("0"));
  EXPECT_FALSE(tiny.whole("-0.5"));
  const std::string e300 = "1" + std::string(300, '0');
  Matches huge(schema_grammar(R"({"type": "integer", "minimum": 1e300})"));
  EXPECT_TRUE(huge.whole(e300));
  EXPECT_TRUE(huge.whole(e300.substr(0, 300) + "7"));
  EXPECT_FALSE(huge.whole(std::string(300, '9')));
  const std::string eights(300, '8');
  Matches ragged(schema_grammar(R"({"type": "integer", "minimum": -)" + eights + R"(, "maximum": )" + eights + "}"));
  EXPECT_TRUE(ragged.whole(eights));
  EXPECT_TRUE(ragged.whole("-" + eights.substr(0, 299) + "7"));
  EXPECT_FALSE(ragged.whole(eights.substr(0, 299) + "9"));
  EXPECT_FALSE(ragged.whole("-" + eights + "0"));
}

TEST(JsonSchema, EnumAndConst) {
  Matches e(schema_grammar(R"({"enum": ["red", 2, null, {"a": [1]}]})"));
  EXPECT_TRUE(e.whole(R"("red")"));
  EXPECT_TRUE(e.whole("2"));
  EXPECT_TRUE(e.whole("null"));
  EXPECT_TRUE(e.whole(R"({"a":[1]})"));
  EXPECT_FALSE(e.whole(R"("blue")"));
  Matches typed(schema_grammar(R"({"type": "string", "enum": ["x", 1]})"));  // 1 is no string
  EXPECT_TRUE(typed.whole(R"("x")"));
  EXPECT_FALSE(typed.whole("1"));
  Matches c(schema_grammar(R"({"const": "a\"b"})"));
  EXPECT_TRUE(c.whole(R"("a\"b")"));
}

TEST(JsonSchema, AnyOfOneOfAndRefs) {
  Matches any(schema_grammar(R"({"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 1}]})"));
  EXPECT_TRUE(any.whole("12"));
  EXPECT_TRUE(any.whole(R"("a")"));
  EXPECT_FALSE(any.whole(R"("ab")"));
  Matches one(schema_grammar(R"({"oneOf": [
      {"type": "object", "properties": {"kind": {"const": "circle"}, "r": {"type": "number"}}, "required": ["kind", "r"]},
      {"type": "object", "properties": {"kind": {"const": "square"}, "side": {"type": "number"}}, "required": ["kind", "side"]}]})"));
  EXPECT_TRUE(one.whole(R"({"kind": "circle", "r": 1})"));
  EXPECT_FALSE(one.whole(R"({"kind": "circle", "side": 1})"));
  Matches tree(schema_grammar(R"({"$ref": "#/$defs/node", "$defs": {"node": {"type": "object",
      "properties": {"value": {"type": "integer"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
      "required": ["value"]}}})"));
  EXPECT_TRUE(tree.whole(R"({"value": 1, "children": [{"value": 2}, {"value": 3, "children": []}]})"));
  EXPECT_FALSE(tree.whole(R"({"value": 1, "children": [{"children": []}]})"));
  Matches legacy(schema_grammar(R"({"definitions": {"a b": {"type": "boolean"}}, "items": {"$ref": "#/definitions/a%20b"}})"));
  EXPECT_TRUE(legacy.whole("[true]"));
}

TEST(JsonSchema, UnsupportedOrInvalidIsAnError) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"type": "number", "multipleOf": 2})", "JSON schema at the root: 'multipleOf' is not supported"},
      {R"({"properties": {"a": {"not": {}}}})", "JSON schema at /properties/a: 'not' is not supported"},
      {R"({"allOf": [{}]})", "'allOf' is not supported"},
      {R"({"if": {}, "then": {}})", "'if' is not supported"},
      {R"({"type": "object", "patternProperties": {}})", "'patternProperties' is not supported"},
      {R"({"type": "array", "prefixItems": []})", "'prefixItems' is not supported"},
      {R"({"type": "array", "uniqueItems": true})", "at /uniqueItems: only false is supported"},
      {R"({"type": "array", "items": [{}]})", "at /items: a list of schemas (a tuple) is not supported"},
      {R"({"type": "string", "format": "email"})", "format 'email' is not supported"},
      {R"j({"type": "string", "pattern": "^(?!x)"})j", "at /pattern: pattern at offset 1: lookahead"},
      {R"({"type": "string", "pattern": "^a$", "maxLength": 3})", "combining two of 'pattern'"},
      {R"({"$ref": "https://example.com/s.json"})", "only references inside the schema"},
      {R"({"$ref": "#/$defs/missing"})", "$ref '#/$defs/missing' points to nothing"},
      {R"({"$ref": "#/$defs/a", "minimum": 1, "$defs": {"a": {}}})", "'minimum' beside '$ref' is not supported"},
      {R"({"type": "integer", "oneOf": [{}]})", "'type' beside 'oneOf' is not supported"},
      {R"({"oneOf": [{"type": "integer"}, {"type": "number"}]})", "at /oneOf: alternatives 0 and 1 may both match"},
      {R"({"enum": [1], "minimum": 0})", "'minimum' beside 'enum' is not supported"},
      {R"({"type": "string", "enum": [1, 2]})", "no value of 'enum' has the schema's type"},
      {R"({"type": "strin"})", "at /type: '\"strin\"' is not a type"},
      {R"({"minimum": 3, "maximum": 2})", "no number lies in [3, 2]"},
      {R"({"minLength": 3, "maxLength": 2})", "maxLength is below minLength"},
      {R"({"maxItems": -1})", "at /maxItems: must be a non-negative integer"},
      {R"({"maxLength": 100000})", "counts above 10000 are not supported"},
      {R"({"properties": {"a": false}, "required": ["a"]})", "the required property 'a' has the schema false"},
      {"false", "the schema false admits no value"},
      {"[1]", "a schema must be an object or a boolean, not an array"},
      {R"({"properties": {"a": {"$id": "x"}}})", "'$id' is supported only at the root"},
      {R"({"type": "object",})", "JSON schema: line 1, column 19: expected a member name"},
  };
  for (const auto& [schema, message] : cases) {
    SCOPED_TRACE(schema);
    expect_error(json_schema_gbnf(schema).status(), message);
  }
  // Annotations are fine.
  EXPECT_TRUE(json_schema_gbnf(R"({"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "T",
      "description": "d", "type": "integer", "default": 1, "examples": [1], "$comment": "c"})").ok());
}

TEST(JsonSchema, BuilderEmbedsSchemasInLargerGrammars) {
  // How a tool call's arguments reuse the compiler: a rule per schema, then any root.
  JsonGrammarBuilder b;
  Result<JsonValue> args = parse_json(R"({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})");
  ASSERT_TRUE(args.ok());
  Result<std::string> rule = b.add_schema(*args, "weather-args");
  ASSERT_TRUE(rule.ok()) << rule.status().message();
  Matches m(b.grammar(R"("{\"name\": \"weather\", \"arguments\": " )" + *rule + " \"}\""));
  EXPECT_TRUE(m.whole(R"({"name": "weather", "arguments": {"city": "Oslo"}})"));
  EXPECT_FALSE(m.whole(R"({"name": "weather", "arguments": {}})"));
}

TEST(OutputConstraint, GrammarsUseSchemasByName) {
  // A tool call's shape: the grammar writes the envelope, each schema is a rule.
  OutputConstraint c;
  c.kind = OutputConstraint::Kind::kGrammar;
  c.text = "root ::= \"<call>\" ( weather | add ) \"</call>\"\n"
           "weather ::= \"weather \" weather-args\nadd ::= \"add \" add-args\n";
  c.schemas = {{"weather-args", R"({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})"},
               {"add-args", R"({"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2})"}};
  Result<std::string> gbnf = constraint_gbnf(c);
  ASSERT_TRUE(gbnf.ok()) << gbnf.status().message();
  Matches m(*gbnf);
  EXPECT_TRUE(m.whole(R"(<call>weather {"city": "Oslo"}</call>)"));
  EXPECT_TRUE(m.whole("<call>add [1, 2]</call>"));
  EXPECT_FALSE(m.whole("<call>weather {}</call>"));
  EXPECT_FALSE(m.whole("<call>add [1]</call>"));
  // The schemas' own rules keep off the grammar's names (its "value" is not JSON's).
  c.text += "city ::= \"x\"\n";
  EXPECT_TRUE(constraint_gbnf(c).ok());

  // Errors name the schema, and names the JSON rules need are refused.
  c.schemas[0].json = R"({"type": "object", "properties": {"n": {"type": "number", "multipleOf": 2}}})";
  expect_error(constraint_gbnf(c).status(), "schema 'weather-args': JSON schema at /properties/n: 'multipleOf' is not supported");
  c.schemas[0].json = "{";
  expect_error(constraint_gbnf(c).status(), "schema 'weather-args': line 1, column 2");
  c.schemas = {{"weather", "{}"}};
  expect_error(constraint_gbnf(c).status(), "rule 'weather' is defined and also names a schema");
  c.schemas = {{"ws", "{}"}};
  expect_error(constraint_gbnf(c).status(), "rule name 'ws' is reserved for the JSON rules");
}

TEST(TriggerScanner, FindsTheFirstTriggerAcrossTokens) {
  TriggerScanner s({"<tool_call>", "[TOOL_CALLS]"}, {});
  TriggerScanner::Match m;
  EXPECT_FALSE(s.find("Let me check. <tool", &m));
  s.push("Let me check. <tool");
  ASSERT_TRUE(s.find("_call>\n{", &m));
  EXPECT_EQ(m.text, "<tool_call>\n{");
  EXPECT_EQ(m.before, 5u);  // "<tool" came before the token
  // Within one token: the trigger's own bytes only, none before it.
  TriggerScanner t({"<tool_call>"}, {});
  ASSERT_TRUE(t.find("ok <tool_call>{", &m));
  EXPECT_EQ(m.text, "<tool_call>{");
  EXPECT_EQ(m.before, 0u);
  // The earliest of two triggers wins.
  ASSERT_TRUE(t.find("x<tool_call>", &m));
  TriggerScanner both({"BB", "A"}, {});
  ASSERT_TRUE(both.find("xBBA", &m));
  EXPECT_EQ(m.text, "BBA");
}

TEST(TriggerScanner, StartTriggersOnlyAtTheStartAfterWhitespace) {
  TriggerScanner s({}, {"{\"name\""});
  TriggerScanner::Match m;
  EXPECT_FALSE(s.find(" \n", &m));
  s.push(" \n");
  EXPECT_FALSE(s.find("{\"", &m));
  s.push("{\"");
  ASSERT_TRUE(s.find("name\": 1", &m));
  EXPECT_EQ(m.text, "{\"name\": 1");
  EXPECT_EQ(m.before, 2u);
  // Text that cannot begin the trigger disarms it for good.
  TriggerScanner late({}, {"{"});
  EXPECT_FALSE(late.find("Sure", &m));
  late.push("Sure");
  EXPECT_FALSE(late.find(" {", &m));
}

TEST(JsonMode, AnyValueOrAnObject) {
  Matches value(json_gbnf(false));
  EXPECT_TRUE(value.whole("\n  [1, \"two\", {\"3\": null}, false]"));
  EXPECT_TRUE(value.whole("\"just a string\""));
  EXPECT_FALSE(value.whole("[1,]"));
  Matches object(json_gbnf(true));
  EXPECT_TRUE(object.whole(R"({"a": {"b": []}})"));
  EXPECT_FALSE(object.whole("[]"));
}

// ---------------------------------------------------------------------------
// Token masking on real vocabularies: the trie walk against each token's bytes
// run through the matcher one by one.

// The tokens a brute-force pass allows at `state`.
std::vector<uint32_t> brute_force_mask(TokenMasker& masker, const TokenTrie& trie, TokenMasker::StateId state) {
  std::vector<uint32_t> bits((static_cast<size_t>(trie.n_vocab()) + 31) / 32, 0);
  for (int32_t t = 0; t < trie.n_vocab(); ++t) {
    const bool end = trie.is_end_token(t);
    const bool ok = end ? masker.can_end(state) : masker.accept(state, t) != GrammarMatcher::kDead;
    if (ok) bits[static_cast<size_t>(t) / 32] |= 1u << (t % 32);
  }
  return bits;
}

TEST(TokenMasker, TrieWalkEqualsBruteForceOnRealVocabularies) {
  // A schema grammar and a GBNF grammar with multi-byte characters; the
  // states are those after each byte of a valid text (mid-character ones too).
  const std::string schema = schema_grammar(R"({"type": "object", "properties": {
      "name": {"type": "string", "maxLength": 12}, "n": {"type": "integer", "minimum": -5, "maximum": 300},
      "tags": {"type": "array", "items": {"enum": ["été", "日本", "x y"]}}}, "required": ["name", "n"]})");
  const std::string schema_text = "{\"name\": \"Zoë \\\"q\\\"\", \"n\": -4, \"tags\": [\"日本\", \"été\"]}";
  const std::string gbnf = "root ::= (word \" \")* word \"。\"\nword ::= [a-zA-Zß-ÿぁ-ゟ]+\n";
  const std::string gbnf_text = "Grüße から bonjour。";
  for (const char* vocab : {"stories260K.gguf", "vocab/ggml-vocab-llama-spm.gguf", "vocab/ggml-vocab-qwen2.gguf",
                            "vocab/ggml-vocab-starcoder.gguf", "vocab/ggml-vocab-gpt-2.gguf", "vocab/ggml-vocab-phi-3.gguf"}) {
    SCOPED_TRACE(vocab);
    const TokenTrie trie(load_vocab(vocab));
    for (const auto& [grammar, text] : {std::pair{schema, schema_text}, std::pair{gbnf, gbnf_text}}) {
      TokenMasker masker(must_parse(grammar), trie);
      size_t checked = 0;
      for (size_t i = 0; i <= text.size(); ++i) {
        const TokenMasker::StateId s = masker.accept_bytes(masker.initial_state(), text.substr(0, i));
        ASSERT_NE(s, GrammarMatcher::kDead) << "the text is rejected at byte " << i;
        // Every fifth state, and all of them near multi-byte characters (walks take time on 150k tokens).
        const bool near_multibyte = (i < text.size() && static_cast<uint8_t>(text[i]) >= 0x80) ||
                                    (i > 0 && static_cast<uint8_t>(text[i - 1]) >= 0x80);
        if (i % 5 == 0 || near_multibyte) {
          size_t count = 0;
          const uint32_t* walked = masker.mask(s, &count);
          const std::vector<uint32_t> brute = brute_force_mask(masker, trie, s);
          size_t brute_count = 0;
          for (size_t w = 0; w < brute.size(); ++w) {
            ASSERT_EQ(walked[w], brute[w]) << "at byte " << i << ", tokens " << w * 32 << "..";
            brute_count += static_cast<size_t>(__builtin_popcount(brute[w]));
          }
          EXPECT_EQ(count, brute_count);
          EXPECT_GT(count, 0u) << "no token at byte " << i;
          ++checked;
        }
      }
      EXPECT_GT(checked, 5u);
    }
  }
}

TEST(TokenMasker, PreservedControlTokensCountAsTheirText) {
  // Qwen2's <|im_start|> is a control token: it prints nothing, and no grammar
  // can use it, unless it is preserved.
  const Tokenizer tokenizer = load_vocab("vocab/ggml-vocab-qwen2.gguf");
  const std::vector<int32_t> ids = tokenizer.encode("<|im_start|>", false, true);
  ASSERT_EQ(ids.size(), 1u);
  ASSERT_TRUE(tokenizer.is_control(ids[0]));
  const TokenTrie trie(tokenizer);
  const std::string gbnf = "root ::= \"<|im_start|>\" [a-z]+\n";
  TokenMasker plain(must_parse(gbnf), trie);
  EXPECT_EQ(plain.accept(plain.initial_state(), ids[0]), GrammarMatcher::kDead);
  TokenMasker masker(must_parse(gbnf), trie, {{ids[0], "<|im_start|>"}});
  EXPECT_TRUE(masker.is_preserved(ids[0]));
  EXPECT_EQ(masker.token_bytes(ids[0]), "<|im_start|>");
  size_t count = 0;
  const uint32_t* bits = masker.mask(masker.initial_state(), &count);
  EXPECT_TRUE(bits[ids[0] / 32] & (1u << (ids[0] % 32)));
  EXPECT_EQ(bits, masker.mask(masker.initial_state(), &count));  // cached
  const TokenMasker::StateId after = masker.accept(masker.initial_state(), ids[0]);
  ASSERT_NE(after, GrammarMatcher::kDead);
  bits = masker.mask(after, &count);
  EXPECT_FALSE(bits[ids[0] / 32] & (1u << (ids[0] % 32)));
  EXPECT_GT(count, 0u);
  // Found by tests/fuzz/grammar_fuzz.cpp: a token preserved twice is allowed,
  // and counted, once.
  TokenMasker twice(must_parse("root ::= \"<|im_start|>\" [a-z]+ | \"a\"\n"), trie,
                    {{ids[0], "<|im_start|>"}, {ids[0], "<|im_start|>"}});
  bits = twice.mask(twice.initial_state(), &count);
  size_t set = 0;
  for (int32_t w = 0; w < (trie.n_vocab() + 31) / 32; ++w) set += static_cast<size_t>(__builtin_popcount(bits[w]));
  EXPECT_TRUE(bits[ids[0] / 32] & (1u << (ids[0] % 32)));
  EXPECT_EQ(count, set);
}

TEST(TokenMasker, AMaskTheGrammarCannotFollowSaysSo) {
  // Each "a" may close with "b" or "c": 2^(n+1) parses after n of them, and a
  // mask that would need more than kMaxParses says so, cached or not.
  const TokenTrie trie(load_vocab("stories260K.gguf"));
  TokenMasker masker(must_parse("root ::= \"a\" root \"b\" | \"a\" root \"c\"\n"), trie);
  size_t count = 0;
  masker.mask(masker.initial_state(), &count);
  EXPECT_FALSE(masker.overflowed());
  EXPECT_GT(count, 0u);
  const TokenMasker::StateId s = masker.accept_bytes(masker.initial_state(), std::string(15, 'a'));
  ASSERT_NE(s, GrammarMatcher::kDead);
  EXPECT_FALSE(masker.overflowed());
  masker.mask(s, &count);  // one more "a" would be 2^17
  EXPECT_TRUE(masker.overflowed());
  EXPECT_EQ(masker.accept_bytes(s, "a"), GrammarMatcher::kDead);
  EXPECT_TRUE(masker.overflowed());
  EXPECT_NE(masker.accept_bytes(masker.initial_state(), "a"), GrammarMatcher::kDead);
  EXPECT_FALSE(masker.overflowed());
  masker.mask(s, &count);  // from the cache
  EXPECT_TRUE(masker.overflowed());
}

}  // namespace
}  // namespace wllm
