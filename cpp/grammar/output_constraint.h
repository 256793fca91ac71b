// What a generation's output must look like: free text, a GBNF grammar,
// JSON (any value or an object), or JSON valid against a schema. The engine
// turns it into a grammar (constraint_gbnf) and masks the tokens that could
// not continue it.
//
// A grammar may also be lazy, as tool calls need (llama.cpp's lazy grammars,
// common/sampling.cpp): the output is free until a trigger appears in it,
// and from the trigger's first byte on it must match the grammar.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace wllm {

struct OutputConstraint {
  enum class Kind { kNone, kGrammar, kJson, kJsonObject, kJsonSchema };
  // A JSON schema a kGrammar's rules use by name: the rule `name` matches
  // one JSON value valid against it.
  struct Schema {
    std::string name;
    std::string json;
    bool operator==(const Schema&) const = default;
  };

  Kind kind = Kind::kNone;
  std::string text;  // kGrammar: GBNF text; kJsonSchema: the schema as JSON text
  std::vector<Schema> schemas;                 // kGrammar only
  // Control tokens (whose text generation otherwise drops) written out as
  // their text, which the grammar then matches: "<|python_tag|>", "[TOOL_CALLS]".
  std::vector<std::string> preserved_tokens;
  // Lazy: the grammar applies from the first of these found anywhere in the
  // output, or from one of start_triggers at its start (after whitespace).
  // The grammar must begin with the trigger's text.
  std::vector<std::string> triggers;
  std::vector<std::string> start_triggers;

  bool active() const { return kind != Kind::kNone; }
  bool lazy() const { return !triggers.empty() || !start_triggers.empty(); }
  bool operator==(const OutputConstraint&) const = default;
};

// The GBNF text the constraint stands for ("" for kNone): with schemas, the
// grammar followed by their rules. Errors (kInvalidArgument) name the schema
// keyword and where it is, or a rule name the schemas' rules reserve.
Result<std::string> constraint_gbnf(const OutputConstraint& constraint);

}  // namespace wllm
