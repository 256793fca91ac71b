// What a generation's output must look like: free text, a GBNF grammar,
// JSON (any value or an object), or JSON valid against a schema. The engine
// turns it into a grammar (constraint_gbnf) and masks the tokens that could
// not continue it.
#pragma once

#include <string>

#include "core/status.h"

namespace wllm {

struct OutputConstraint {
  enum class Kind { kNone, kGrammar, kJson, kJsonObject, kJsonSchema };
  Kind kind = Kind::kNone;
  std::string text;  // kGrammar: GBNF text; kJsonSchema: the schema as JSON text

  bool active() const { return kind != Kind::kNone; }
  bool operator==(const OutputConstraint&) const = default;
};

// The GBNF text the constraint stands for ("" for kNone). Errors
// (kInvalidArgument) name the schema keyword and where it is.
Result<std::string> constraint_gbnf(const OutputConstraint& constraint);

}  // namespace wllm
