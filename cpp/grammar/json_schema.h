// GBNF grammars for JSON output: JSON mode (any value, or any object) and
// JSON Schema. The semantics follow llama.cpp's json-schema-to-grammar
// (common/json-schema-to-grammar.cpp) where it is exact, with one rule
// above all: a keyword is either enforced by the grammar or an error —
// never skipped — so every value the grammar admits validates against the
// schema (the grammar may admit fewer values than the schema allows: no
// exponents in bounded numbers, at most 16 free digits, bounded whitespace,
// no \u escapes in keys of additional properties).
//
// Supported keywords:
//   type (a name or a list), enum, const;
//   object: properties, required, additionalProperties (a boolean or a
//     schema; absent means false when properties are given, as llama.cpp);
//   array: items (a schema), minItems, maxItems, uniqueItems: false;
//   string: minLength, maxLength, pattern (pattern_grammar.h), format
//     (date, time, date-time, uuid);
//   number/integer: minimum, maximum, exclusiveMinimum, exclusiveMaximum
//     (numbers, or draft-4 booleans), exact (number_grammar.h);
//   anyOf, oneOf (its alternatives must be provably disjoint: by type, by
//     enum/const values, or by a required property with disjoint
//     const/enum values — else an output could match two of them);
//   $ref to "#" or a JSON pointer into the same document ("#/$defs/x",
//     "#/definitions/x"), recursion included;
//   annotations (title, description, default, examples, $schema, $comment,
//   $id at the root, deprecated, readOnly, writeOnly) are ignored.
// Everything else is an error naming the keyword and where it is, e.g.
//   JSON schema at /properties/age: 'multipleOf' is not supported
//
// The builder is also how larger grammars embed schemas (a tool call's
// arguments): add_schema() returns a rule for one value, and grammar()
// wraps any expression over such rules into a complete grammar.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "grammar/json.h"

namespace wllm {

class JsonGrammarBuilder {
 public:
  // A rule matching one JSON value valid against `schema`, which is the
  // root of its own document ($ref "#..." resolve inside it). `name` seeds
  // the names of its rules.
  Result<std::string> add_schema(const JsonValue& schema, std::string_view name);
  // Rules for any JSON value, and any JSON object.
  std::string any_value() { return primitive("value"); }
  std::string any_object() { return primitive("object"); }
  // A rule with this GBNF body; its name is derived from `name` (made
  // unique). A body added before is not added twice: its rule is returned.
  std::string add_rule(std::string_view name, const std::string& body);
  // The complete grammar: root ::= ws <root_expression> ws, then every rule.
  std::string grammar(const std::string& root_expression);
  // Every rule added so far, one `name ::= body` line each (no root).
  std::string rules_text() const;
  // Keeps the builder's rules off `name`, a rule of a grammar they will join.
  // kInvalidArgument if it is a built-in's name (ws, value, string, ...).
  Status reserve_name(const std::string& name);

  // A rule from the built-in set (value, object, array, string, char, number,
  // integer, boolean, null, ws, date, time, date-time, uuid, ...).
  std::string primitive(std::string_view name);

 private:
  std::string unique_name(std::string_view name);
  std::string reserve(std::string_view name);  // a name defined later with define()
  void define(const std::string& name, const std::string& body);

  std::vector<std::pair<std::string, std::string>> rules_;  // in order of definition
  std::set<std::string> names_;
  std::map<std::string, std::string> rule_by_body_;

  friend class SchemaCompiler;
};

// The grammar for one JSON value valid against the schema in `schema_json`.
Result<std::string> json_schema_gbnf(std::string_view schema_json);
// JSON mode: any JSON value, or (object_only) any JSON object.
std::string json_gbnf(bool object_only);

}  // namespace wllm
