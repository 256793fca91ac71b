#include "grammar/output_constraint.h"

#include <set>

#include "grammar/json_schema.h"
#include "grammar/text_scan.h"

namespace wllm {
namespace {

// The names of the rules `gbnf` defines (`name ::= ...` at a line's start).
std::set<std::string> defined_rules(std::string_view gbnf) {
  std::set<std::string> names;
  size_t at = 0;
  while (at < gbnf.size()) {
    size_t end = gbnf.find('\n', at);
    if (end == std::string_view::npos) end = gbnf.size();
    std::string_view line = gbnf.substr(at, end - at);
    at = end + 1;
    size_t i = line.find_first_not_of(" \t");
    if (i == std::string_view::npos) continue;
    const size_t name_begin = i;
    while (i < line.size() && is_rule_name_char(line[i])) ++i;
    const std::string_view name = line.substr(name_begin, i - name_begin);
    i = line.find_first_not_of(" \t", i);
    if (!name.empty() && i != std::string_view::npos && line.substr(i, 3) == "::=") names.emplace(name);
  }
  return names;
}

// The grammar text followed by the rules of its schemas: each schema's name
// becomes a rule matching one value valid against it.
Result<std::string> grammar_with_schemas(const OutputConstraint& c) {
  JsonGrammarBuilder b;
  const std::set<std::string> grammar_rules = defined_rules(c.text);
  for (const std::string& name : grammar_rules) WLLM_RETURN_IF_ERROR(b.reserve_name(name));
  for (const OutputConstraint::Schema& s : c.schemas) {
    if (grammar_rules.count(s.name)) {
      return Status::error(ErrorCode::kInvalidArgument, "grammar: rule '%s' is defined and also names a schema",
                           s.name.c_str());
    }
    WLLM_RETURN_IF_ERROR(b.reserve_name(s.name));
  }
  std::string out = c.text;
  if (!out.empty() && out.back() != '\n') out += '\n';
  for (const OutputConstraint::Schema& s : c.schemas) {
    WLLM_ASSIGN_OR_RETURN(const JsonValue schema, parse_json(s.json, "schema '" + s.name + "'"));
    Result<std::string> value = b.add_schema(schema, s.name + "-value");
    if (!value.ok()) return value.status().with_context("schema '" + s.name + "'");
    out += s.name + " ::= " + *value + "\n";
  }
  return out + b.rules_text();
}

}  // namespace

Result<std::string> constraint_gbnf(const OutputConstraint& c) {
  switch (c.kind) {
    case OutputConstraint::Kind::kNone: return std::string();
    case OutputConstraint::Kind::kGrammar: return c.schemas.empty() ? c.text : grammar_with_schemas(c);
    case OutputConstraint::Kind::kJson: return json_gbnf(false);
    case OutputConstraint::Kind::kJsonObject: return json_gbnf(true);
    case OutputConstraint::Kind::kJsonSchema: return json_schema_gbnf(c.text);
  }
  return std::string();
}

}  // namespace wllm
