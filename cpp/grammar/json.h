// A strict JSON reader (RFC 8259) for JSON schemas: the CLI reads schemas
// natively, so the schema compiler cannot lean on a JS parser. Strict means
// no comments, no trailing commas, no duplicate object keys (a schema with
// two "type"s has no single meaning), well-formed UTF-8, and no unpaired
// surrogate escapes. Numbers keep their source text, so a bound such as
// 0.1 is compared exactly, never through a double.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace wllm {

struct JsonMember;

struct JsonValue {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  std::string text;  // kString: the decoded string; kNumber: the number as written
  std::vector<JsonValue> items;                             // kArray
  std::vector<JsonMember> members;                          // kObject, in source order

  bool is_object() const { return type == Type::kObject; }
  bool is_array() const { return type == Type::kArray; }
  bool is_string() const { return type == Type::kString; }
  bool is_number() const { return type == Type::kNumber; }
  bool is_bool() const { return type == Type::kBool; }
  // The member named `key`, or nullptr (also for non-objects).
  const JsonValue* find(std::string_view key) const;
  // Compact JSON text for this value (strings escaped as JSON requires).
  std::string dump() const;
};

// One member of an object. A named struct rather than std::pair: a pair of an
// incomplete JsonValue is ill-formed (libstdc++ rejects it under clang).
struct JsonMember {
  std::string key;
  JsonValue value;
};

// Nesting deeper than this is refused (the reader and the compiler recurse).
inline constexpr int kMaxJsonDepth = 256;

// Errors (kInvalidArgument): "<what>: line 2, column 13: expected ',' or '}' after an object member".
Result<JsonValue> parse_json(std::string_view text, std::string_view what = "JSON");

// Appends `s` as a JSON string literal (with quotes).
void append_json_string(std::string_view s, std::string* out);

}  // namespace wllm
