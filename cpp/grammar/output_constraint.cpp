#include "grammar/output_constraint.h"

#include "grammar/json_schema.h"

namespace wllm {

Result<std::string> constraint_gbnf(const OutputConstraint& c) {
  switch (c.kind) {
    case OutputConstraint::Kind::kNone: return std::string();
    case OutputConstraint::Kind::kGrammar: return c.text;
    case OutputConstraint::Kind::kJson: return json_gbnf(false);
    case OutputConstraint::Kind::kJsonObject: return json_gbnf(true);
    case OutputConstraint::Kind::kJsonSchema: return json_schema_gbnf(c.text);
  }
  return std::string();
}

}  // namespace wllm
