#include "grammar/json_schema.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "grammar/gbnf_text.h"
#include "grammar/number_grammar.h"
#include "grammar/pattern_grammar.h"
#include "tokenizer/utf8.h"

namespace wllm {
namespace {

// The built-in rules. Whitespace is bounded (a model could otherwise emit
// spaces forever); "char" is one JSON string character, raw or escaped
// (\u escapes of surrogates excluded: a lone one is no character). Number
// exponents have at most two digits, so every number is finite as a double.
struct Builtin {
  std::string_view name, body;
  std::vector<std::string_view> uses;
};
const Builtin kBuiltins[] = {
    {"ws", R"gbnf(| " " | "\n"{1,2} [ \t]{0,20})gbnf", {}},
    {"value", "object | array | string | number | boolean | null", {"object", "array", "string", "number", "boolean", "null"}},
    {"object", R"gbnf("{" ws ( string ws ":" ws value ws ( "," ws string ws ":" ws value ws )* )? "}")gbnf", {"ws", "string", "value"}},
    {"array", R"gbnf("[" ws ( value ws ( "," ws value ws )* )? "]")gbnf", {"ws", "value"}},
    {"string", R"gbnf("\"" char* "\"")gbnf", {"char"}},
    {"char", R"gbnf([^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" unicode-escape ))gbnf", {"unicode-escape"}},
    {"unicode-escape", "[0-9a-cA-C] [0-9a-fA-F]{3} | [dD] [0-7] [0-9a-fA-F]{2} | [eEfF] [0-9a-fA-F]{3}", {}},
    {"number", R"gbnf(integer ( "." [0-9]{1,16} )? ( [eE] [-+]? [0-9]{1,2} )?)gbnf", {"integer"}},
    {"integer", R"gbnf("-"? ( "0" | [1-9] [0-9]{0,15} ))gbnf", {}},
    {"boolean", R"gbnf("true" | "false")gbnf", {}},
    {"null", R"gbnf("null")gbnf", {}},
    // Characters of keys of additional properties: no escapes, so a key has
    // one spelling and a declared name cannot come back in disguise.
    {"key-char", R"gbnf([^"\\\x00-\x1F])gbnf", {}},
    {"date", R"gbnf([0-9]{4} "-" ( ( "0" [13578] | "1" [02] ) "-" ( "0" [1-9] | [12] [0-9] | "3" [01] ) | ( "0" [469] | "11" ) "-" ( "0" [1-9] | [12] [0-9] | "30" ) | "02-" ( "0" [1-9] | "1" [0-9] | "2" [0-8] ) ))gbnf", {}},
    {"time", R"gbnf(( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ":" [0-5] [0-9] ( "." [0-9]{1,9} )? ( "Z" | [+-] ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ))gbnf", {}},
    {"date-time", R"gbnf(date "T" time)gbnf", {"date", "time"}},
    {"uuid", R"gbnf([0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12})gbnf", {}},
};

const Builtin* find_builtin(std::string_view name) {
  for (const Builtin& b : kBuiltins) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

// Keywords that only annotate: they do not change which values are valid.
constexpr std::string_view kAnnotations[] = {"$schema", "$comment", "title",    "description", "default",
                                             "examples", "deprecated", "readOnly", "writeOnly", "$defs",
                                             "definitions", "$id"};
bool is_annotation(std::string_view k) {
  return std::find(std::begin(kAnnotations), std::end(kAnnotations), k) != std::end(kAnnotations);
}

enum TypeBit : unsigned {
  kNull = 1, kBoolean = 2, kObject = 4, kArray = 8, kString = 16, kNumber = 32, kInteger = 64,
  kAnyType = 127,
};

struct KeywordInfo {
  std::string_view keyword;
  unsigned type;  // the type it constrains
};
constexpr KeywordInfo kKeywords[] = {
    {"properties", kObject}, {"required", kObject},   {"additionalProperties", kObject},
    {"items", kArray},       {"minItems", kArray},    {"maxItems", kArray},
    {"uniqueItems", kArray}, {"minLength", kString},  {"maxLength", kString},
    {"pattern", kString},    {"format", kString},     {"minimum", kNumber},
    {"maximum", kNumber},    {"exclusiveMinimum", kNumber}, {"exclusiveMaximum", kNumber},
};
const KeywordInfo* find_keyword(std::string_view k) {
  for (const KeywordInfo& info : kKeywords) {
    if (info.keyword == k) return &info;
  }
  return nullptr;
}
bool is_combinator(std::string_view k) {
  return k == "type" || k == "enum" || k == "const" || k == "anyOf" || k == "oneOf" || k == "$ref";
}

const char* type_name(JsonValue::Type t) {
  switch (t) {
    case JsonValue::Type::kNull: return "null";
    case JsonValue::Type::kBool: return "a boolean";
    case JsonValue::Type::kNumber: return "a number";
    case JsonValue::Type::kString: return "a string";
    case JsonValue::Type::kArray: return "an array";
    case JsonValue::Type::kObject: return "an object";
  }
  return "?";
}

// "/properties/a~1b": a JSON pointer segment escaped.
std::string pointer_segment(std::string_view s) {
  std::string out = "/";
  for (char c : s) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

// The value's type bits (integers also count as numbers).
unsigned value_types(const JsonValue& v) {
  switch (v.type) {
    case JsonValue::Type::kNull: return kNull;
    case JsonValue::Type::kBool: return kBoolean;
    case JsonValue::Type::kObject: return kObject;
    case JsonValue::Type::kArray: return kArray;
    case JsonValue::Type::kString: return kString;
    case JsonValue::Type::kNumber: {
      const Result<Decimal> d = parse_decimal(v.text);
      return d.ok() && d->frac_digits.empty() ? kNumber | kInteger : kNumber;
    }
  }
  return 0;
}

// A canonical text for equality as validators test it (numbers by value,
// object members in any order).
std::string canonical(const JsonValue& v) {
  switch (v.type) {
    case JsonValue::Type::kNumber: {
      const Result<Decimal> d = parse_decimal(v.text);
      if (!d.ok()) return v.text;
      return (d->negative ? "-" : "") + d->int_digits + "." + d->frac_digits;
    }
    case JsonValue::Type::kArray: {
      std::string out = "[";
      for (const JsonValue& item : v.items) out += canonical(item) + ",";
      return out + "]";
    }
    case JsonValue::Type::kObject: {
      std::vector<std::string> members;
      for (const auto& [k, m] : v.members) {
        std::string key;
        append_json_string(k, &key);
        members.push_back(key + ":" + canonical(m));
      }
      std::sort(members.begin(), members.end());
      std::string out = "{";
      for (const std::string& m : members) out += m + ",";
      return out + "}";
    }
    default: return v.dump();
  }
}

std::string join(const std::vector<std::string>& alternatives) {
  std::string out;
  for (const std::string& a : alternatives) out += (out.empty() ? "" : " | ") + a;
  return out;
}

// Repetition suffix for {min,max} (max < 0: unbounded), "" for {1,1}.
std::string repetition(int64_t min, int64_t max) {
  if (max < 0) return min == 0 ? "*" : min == 1 ? "+" : str_printf("{%lld,}", static_cast<long long>(min));
  if (min == max) return min == 1 ? "" : str_printf("{%lld}", static_cast<long long>(min));
  if (min == 0 && max == 1) return "?";
  return str_printf("{%lld,%lld}", static_cast<long long>(min), static_cast<long long>(max));
}

}  // namespace

// ---- the builder ----

std::string JsonGrammarBuilder::unique_name(std::string_view name) {
  std::string base;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (ok) {
      base += c;
    } else if (!base.empty() && base.back() != '-') {
      base += '-';
    }
  }
  while (!base.empty() && base.back() == '-') base.pop_back();
  if (base.empty()) base = "rule";
  // Built-in names and root stay reserved for their own rules.
  const auto taken = [&](const std::string& n) { return names_.count(n) || find_builtin(n) || n == "root"; };
  std::string name_out = base;
  for (int i = 2; taken(name_out); ++i) name_out = base + "-" + std::to_string(i);
  names_.insert(name_out);
  return name_out;
}

std::string JsonGrammarBuilder::reserve(std::string_view name) { return unique_name(name); }

void JsonGrammarBuilder::define(const std::string& name, const std::string& body) { rules_.emplace_back(name, body); }

std::string JsonGrammarBuilder::add_rule(std::string_view name, const std::string& body) {
  const auto it = rule_by_body_.find(body);
  if (it != rule_by_body_.end()) return it->second;
  const std::string n = unique_name(name);
  define(n, body);
  rule_by_body_.emplace(body, n);
  return n;
}

std::string JsonGrammarBuilder::primitive(std::string_view name) {
  const std::string n(name);
  if (names_.count(n)) return n;
  const Builtin* b = find_builtin(name);
  if (!b) return n;  // not reached: callers name built-ins only
  names_.insert(n);
  for (std::string_view use : b->uses) primitive(use);
  define(n, std::string(b->body));
  return n;
}

std::string JsonGrammarBuilder::grammar(const std::string& root_expression) {
  const std::string ws = primitive("ws");
  return "root ::= " + ws + " " + root_expression + " " + ws + "\n" + rules_text();
}

std::string JsonGrammarBuilder::rules_text() const {
  std::string out;
  for (const auto& [name, body] : rules_) out += name + " ::= " + body + "\n";
  return out;
}

Status JsonGrammarBuilder::reserve_name(const std::string& name) {
  if (find_builtin(name)) {
    return Status::error(ErrorCode::kInvalidArgument, "grammar: rule name '%s' is reserved for the JSON rules",
                         name.c_str());
  }
  names_.insert(name);
  return {};
}

// ---- the schema compiler ----

class SchemaCompiler {
 public:
  SchemaCompiler(JsonGrammarBuilder& b, const JsonValue& document) : b_(b), document_(document) {}

  // A rule or expression matching the values valid against `s` at `ptr`.
  Result<std::string> visit(const JsonValue& s, const std::string& ptr, const std::string& name, int depth) {
    if (depth > kMaxJsonDepth) return error(ptr, "schemas nest too deeply");
    if (s.is_bool()) {
      if (s.boolean) return b_.any_value();
      return error(ptr, "the schema false admits no value");
    }
    if (!s.is_object()) return error(ptr, std::string("a schema must be an object or a boolean, not ") + type_name(s.type));
    for (const auto& [key, value] : s.members) {
      if (is_annotation(key) || is_combinator(key) || find_keyword(key)) continue;
      return error(ptr, "'" + key + "' is not supported");
    }
    if (s.find("$id") && &s != &document_) return error(ptr, "'$id' is supported only at the root of the schema");
    if (const JsonValue* ref = s.find("$ref")) return visit_ref(s, *ref, ptr, depth);
    if (s.find("anyOf") || s.find("oneOf")) return visit_alternatives(s, ptr, name, depth);
    if (s.find("enum") || s.find("const")) return visit_values(s, ptr, name);
    return visit_types(s, ptr, name, depth);
  }

 private:
  Status error(const std::string& ptr, const std::string& message) const {
    return Status(ErrorCode::kInvalidArgument, "JSON schema at " + (ptr.empty() ? std::string("the root") : ptr) + ": " + message);
  }

  // Keywords beside `keyword` other than annotations (and `also_allowed`) are an error.
  Status only_annotations_beside(const JsonValue& s, std::string_view keyword, const std::string& ptr,
                                 std::string_view also_allowed = "") const {
    for (const auto& [key, value] : s.members) {
      if (key == keyword || is_annotation(key) || key == also_allowed) continue;
      return error(ptr, "'" + key + "' beside '" + std::string(keyword) + "' is not supported");
    }
    return {};
  }

  // ---- $ref ----

  Result<const JsonValue*> resolve(const std::string& ref, const std::string& ptr) const {
    if (ref.empty() || ref[0] != '#') {
      return error(ptr, "$ref '" + ref + "' is not supported: only references inside the schema (\"#/...\")");
    }
    const JsonValue* at = &document_;
    size_t i = 1;
    while (i < ref.size()) {
      if (ref[i] != '/') return error(ptr, "$ref '" + ref + "' is not a JSON pointer (\"#/$defs/name\")");
      const size_t end = std::min(ref.find('/', i + 1), ref.size());
      std::string segment;
      for (size_t j = i + 1; j < end; ++j) {
        if (ref[j] == '~' && j + 1 < end && (ref[j + 1] == '0' || ref[j + 1] == '1')) {
          segment += ref[++j] == '0' ? '~' : '/';
        } else if (ref[j] == '%' && j + 2 < end && std::isxdigit(static_cast<unsigned char>(ref[j + 1])) &&
                   std::isxdigit(static_cast<unsigned char>(ref[j + 2]))) {
          segment += static_cast<char>(std::stoi(ref.substr(j + 1, 2), nullptr, 16));
          j += 2;
        } else {
          segment += ref[j];
        }
      }
      const JsonValue* next = nullptr;
      if (at->is_object()) {
        next = at->find(segment);
      } else if (at->is_array() && !segment.empty() && segment.size() < 10 &&
                 segment.find_first_not_of("0123456789") == std::string::npos) {
        const size_t index = std::stoul(segment);
        if (index < at->items.size()) next = &at->items[index];
      }
      if (!next) return error(ptr, "$ref '" + ref + "' points to nothing in the schema");
      at = next;
      i = end;
    }
    return at;
  }

  Result<std::string> visit_ref(const JsonValue& s, const JsonValue& ref, const std::string& ptr, int depth) {
    WLLM_RETURN_IF_ERROR(only_annotations_beside(s, "$ref", ptr));
    if (!ref.is_string()) return error(ptr, "$ref must be a string");
    const auto known = ref_rules_.find(ref.text);
    if (known != ref_rules_.end()) return known->second;
    WLLM_ASSIGN_OR_RETURN(const JsonValue* target, resolve(ref.text, ptr));
    // Named before its body is built, so a schema can refer to itself.
    const std::string name = b_.reserve(ref.text.substr(ref.text.rfind('/') + 1));
    ref_rules_.emplace(ref.text, name);
    WLLM_ASSIGN_OR_RETURN(const std::string body, visit(*target, ref.text.substr(1), name, depth + 1));
    b_.define(name, body);
    return name;
  }

  // ---- anyOf / oneOf ----

  Result<std::string> visit_alternatives(const JsonValue& s, const std::string& ptr, const std::string& name, int depth) {
    const std::string_view keyword = s.find("anyOf") ? "anyOf" : "oneOf";
    WLLM_RETURN_IF_ERROR(only_annotations_beside(s, keyword, ptr));
    const JsonValue& list = *s.find(keyword);
    const std::string list_ptr = ptr + "/" + std::string(keyword);
    if (!list.is_array() || list.items.empty()) return error(list_ptr, "must be a non-empty array of schemas");
    std::vector<std::string> alts;
    for (size_t i = 0; i < list.items.size(); ++i) {
      const JsonValue& alt = list.items[i];
      if (alt.is_bool() && !alt.boolean) continue;  // admits nothing
      WLLM_ASSIGN_OR_RETURN(std::string rule, visit(alt, list_ptr + "/" + std::to_string(i), name, depth + 1));
      alts.push_back(std::move(rule));
    }
    if (alts.empty()) return error(list_ptr, "every alternative is false: no value is valid");
    if (keyword == "oneOf") {
      for (size_t i = 0; i < list.items.size(); ++i) {
        for (size_t j = i + 1; j < list.items.size(); ++j) {
          if (!disjoint(list.items[i], list.items[j])) {
            return error(list_ptr, str_printf("alternatives %zu and %zu may both match one value, which oneOf forbids; "
                                              "use anyOf, or make them differ by type, by const/enum values, or by a "
                                              "required property with different const/enum values", i, j));
          }
        }
      }
    }
    return b_.add_rule(name, join(alts));
  }

  // What a schema can match, as far as telling oneOf's alternatives apart needs.
  struct Shape {
    unsigned types = kAnyType;
    bool values_known = false;           // enum/const: exactly `values`
    std::vector<std::string> values;     // canonical texts
    const JsonValue* object = nullptr;   // an object schema with properties
  };

  Shape shape_of(const JsonValue& s, int depth) const {
    Shape out;
    if (s.is_bool()) {
      out.types = s.boolean ? unsigned{kAnyType} : 0u;
      return out;
    }
    if (!s.is_object() || depth > 32) return out;
    if (const JsonValue* ref = s.find("$ref")) {
      if (ref->is_string()) {
        const Result<const JsonValue*> target = resolve(ref->text, "");
        if (target.ok()) return shape_of(**target, depth + 1);
      }
      return out;
    }
    for (std::string_view k : {"anyOf", "oneOf"}) {
      if (const JsonValue* list = s.find(k); list && list->is_array()) {
        out.types = 0;
        for (const JsonValue& alt : list->items) out.types |= shape_of(alt, depth + 1).types;
        return out;
      }
    }
    const JsonValue* values = s.find("enum");
    const JsonValue* single = s.find("const");
    if (values || single) {
      out.types = 0;
      out.values_known = true;
      const auto add = [&](const JsonValue& v) {
        out.types |= value_types(v);
        out.values.push_back(canonical(v));
      };
      if (single) add(*single);
      if (values && values->is_array()) {
        for (const JsonValue& v : values->items) add(v);
      }
      std::sort(out.values.begin(), out.values.end());
      return out;
    }
    out.types = declared_types(s);
    if (out.types == kObject && s.find("properties")) out.object = &s;
    return out;
  }

  bool disjoint(const JsonValue& a, const JsonValue& b) const {
    const Shape x = shape_of(a, 0), y = shape_of(b, 0);
    // integer and number overlap: 1 is both.
    const auto widen = [](unsigned t) { return (t & kInteger) ? (t | kNumber) : t; };
    if ((widen(x.types) & widen(y.types)) == 0) return true;
    if (x.values_known && y.values_known) {
      std::vector<std::string> common;
      std::set_intersection(x.values.begin(), x.values.end(), y.values.begin(), y.values.end(), std::back_inserter(common));
      return common.empty();
    }
    if (x.object && y.object) {
      // A property both require, whose values cannot be the same.
      const JsonValue* px = x.object->find("properties");
      const JsonValue* py = y.object->find("properties");
      for (const auto& [name, sx] : px->members) {
        const JsonValue* sy = py->find(name);
        if (!sy || !is_required_in(*x.object, name) || !is_required_in(*y.object, name)) continue;
        const Shape vx = shape_of(sx, 1), vy = shape_of(*sy, 1);
        if (!vx.values_known || !vy.values_known) continue;
        std::vector<std::string> common;
        std::set_intersection(vx.values.begin(), vx.values.end(), vy.values.begin(), vy.values.end(),
                              std::back_inserter(common));
        if (common.empty()) return true;
      }
    }
    return false;
  }

  static bool is_required_in(const JsonValue& object_schema, const std::string& name) {
    const JsonValue* required = object_schema.find("required");
    if (!required || !required->is_array()) return false;
    for (const JsonValue& r : required->items) {
      if (r.is_string() && r.text == name) return true;
    }
    return false;
  }

  // ---- enum / const ----

  Result<std::string> visit_values(const JsonValue& s, const std::string& ptr, const std::string& name) {
    const std::string_view keyword = s.find("enum") ? "enum" : "const";
    WLLM_RETURN_IF_ERROR(only_annotations_beside(s, keyword, ptr, "type"));
    if (s.find("enum") && s.find("const")) return error(ptr, "'enum' beside 'const' is not supported");
    std::vector<const JsonValue*> values;
    if (keyword == "const") {
      values.push_back(s.find("const"));
    } else {
      const JsonValue& list = *s.find("enum");
      if (!list.is_array() || list.items.empty()) return error(ptr + "/enum", "must be a non-empty array");
      for (const JsonValue& v : list.items) values.push_back(&v);
    }
    unsigned allowed = kAnyType;
    if (s.find("type")) {
      WLLM_ASSIGN_OR_RETURN(allowed, parse_type(*s.find("type"), ptr));
    }
    std::vector<std::string> alts;
    for (const JsonValue* v : values) {
      const unsigned t = value_types(*v);
      // integer admits only whole numbers; number admits every number.
      const bool fits = (allowed & t & ~kNumber) || ((allowed & kNumber) && (t & kNumber));
      if (fits) alts.push_back(gbnf_literal(v->dump()));
    }
    if (alts.empty()) return error(ptr, "no value of '" + std::string(keyword) + "' has the schema's type");
    return b_.add_rule(name, join(alts));
  }

  // ---- types ----

  Result<unsigned> parse_type(const JsonValue& type, const std::string& ptr) const {
    const auto one = [&](const JsonValue& t) -> Result<unsigned> {
      if (t.is_string()) {
        static constexpr std::pair<std::string_view, unsigned> kNames[] = {
            {"null", kNull},     {"boolean", kBoolean}, {"object", kObject}, {"array", kArray},
            {"string", kString}, {"number", kNumber},   {"integer", kInteger}};
        for (const auto& [n, bit] : kNames) {
          if (t.text == n) return bit;
        }
      }
      return error(ptr + "/type", "'" + t.dump() +
                                      "' is not a type (null, boolean, object, array, string, number, integer)");
    };
    if (!type.is_array()) return one(type);
    if (type.items.empty()) return error(ptr + "/type", "an empty list of types admits no value");
    unsigned bits = 0;
    for (const JsonValue& t : type.items) {
      WLLM_ASSIGN_OR_RETURN(const unsigned bit, one(t));
      bits |= bit;
    }
    return bits;
  }

  // The types a schema without enum/const/anyOf/oneOf/$ref admits: its
  // "type", else the types its keywords constrain, else every type.
  unsigned declared_types(const JsonValue& s) const {
    if (const JsonValue* type = s.find("type")) {
      const Result<unsigned> bits = parse_type(*type, "");
      return bits.ok() ? *bits : kAnyType;
    }
    unsigned bits = 0;
    for (const auto& [key, value] : s.members) {
      if (const KeywordInfo* info = find_keyword(key)) bits |= info->type;
    }
    return bits ? bits : kAnyType;
  }

  Result<std::string> visit_types(const JsonValue& s, const std::string& ptr, const std::string& name, int depth) {
    if (s.find("type")) WLLM_RETURN_IF_ERROR(parse_type(*s.find("type"), ptr).status());
    unsigned types = declared_types(s);
    bool constrained = false;
    for (const auto& [key, value] : s.members) constrained = constrained || find_keyword(key);
    if (types == kAnyType && !constrained) return b_.any_value();
    if ((types & kNumber) && (types & kInteger)) types &= ~kInteger;  // number covers integers
    std::vector<std::string> alts;
    if (types & kNull) alts.push_back(b_.primitive("null"));
    if (types & kBoolean) alts.push_back(b_.primitive("boolean"));
    if (types & (kNumber | kInteger)) {
      WLLM_ASSIGN_OR_RETURN(std::string rule, visit_number(s, ptr, name, types & kInteger));
      alts.push_back(std::move(rule));
    }
    if (types & kString) {
      WLLM_ASSIGN_OR_RETURN(std::string rule, visit_string(s, ptr, name));
      alts.push_back(std::move(rule));
    }
    if (types & kArray) {
      WLLM_ASSIGN_OR_RETURN(std::string rule, visit_array(s, ptr, name, depth));
      alts.push_back(std::move(rule));
    }
    if (types & kObject) {
      WLLM_ASSIGN_OR_RETURN(std::string rule, visit_object(s, ptr, name, depth));
      alts.push_back(std::move(rule));
    }
    return alts.size() == 1 ? alts[0] : b_.add_rule(name, join(alts));
  }

  // A keyword's value as a count: a whole number in [0, kMaxRepetitions].
  Result<std::optional<int64_t>> count(const JsonValue& s, std::string_view keyword, const std::string& ptr) const {
    const JsonValue* v = s.find(keyword);
    if (!v) return std::optional<int64_t>();
    const std::string where = ptr + "/" + std::string(keyword);
    if (!v->is_number()) return error(where, "must be a non-negative integer");
    const Result<Decimal> d = parse_decimal(v->text);
    if (!d.ok() || d->negative || !d->frac_digits.empty()) return error(where, "must be a non-negative integer");
    if (d->int_digits.size() > 6 || std::stoll(d->int_digits) > static_cast<long long>(kMaxRepetitions)) {
      return error(where, str_printf("counts above %llu are not supported", static_cast<unsigned long long>(kMaxRepetitions)));
    }
    return std::optional<int64_t>(std::stoll(d->int_digits));
  }

  Result<std::pair<int64_t, int64_t>> count_range(const JsonValue& s, std::string_view min_key, std::string_view max_key,
                                                  const std::string& ptr) const {
    WLLM_ASSIGN_OR_RETURN(const std::optional<int64_t> min, count(s, min_key, ptr));
    WLLM_ASSIGN_OR_RETURN(const std::optional<int64_t> max, count(s, max_key, ptr));
    if (min && max && *max < *min) {
      return error(ptr, std::string(max_key) + " is below " + std::string(min_key) + ": no value is valid");
    }
    return std::pair<int64_t, int64_t>(min.value_or(0), max.value_or(-1));
  }

  Result<std::string> visit_number(const JsonValue& s, const std::string& ptr, const std::string& name, bool integer_only) {
    std::optional<NumberBound> lower, upper;
    // A tighter bound replaces a looser one; at equal values the exclusive one wins.
    const auto tighten = [](std::optional<NumberBound>* bound, NumberBound b, int direction) {
      if (!*bound) {
        *bound = b;
        return;
      }
      const int c = compare_decimals(b.value, (*bound)->value) * direction;
      if (c > 0 || (c == 0 && b.exclusive)) *bound = b;
    };
    const JsonValue* excl_min = s.find("exclusiveMinimum");
    const JsonValue* excl_max = s.find("exclusiveMaximum");
    for (std::string_view key : {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}) {
      const JsonValue* v = s.find(key);
      if (!v || v->is_bool()) continue;  // a boolean exclusive* modifies minimum/maximum (draft 4)
      const std::string where = ptr + "/" + std::string(key);
      if (!v->is_number()) return error(where, "must be a number");
      Result<Decimal> d = parse_decimal(v->text);
      if (!d.ok()) return error(where, d.status().message());
      const bool is_min = key == "minimum" || key == "exclusiveMinimum";
      bool exclusive = key.substr(0, 9) == "exclusive";
      const JsonValue* draft4 = is_min ? excl_min : excl_max;
      if (!exclusive && draft4 && draft4->is_bool()) exclusive = draft4->boolean;
      tighten(is_min ? &lower : &upper, NumberBound{std::move(*d), exclusive}, is_min ? 1 : -1);
    }
    for (const JsonValue* v : {excl_min, excl_max}) {
      if (v && v->is_bool() && !s.find(v == excl_min ? "minimum" : "maximum")) {
        return error(ptr, std::string(v == excl_min ? "exclusiveMinimum" : "exclusiveMaximum") +
                              " is a boolean without the bound it modifies");
      }
    }
    if (!lower && !upper) return b_.primitive(integer_only ? "integer" : "number");
    const Result<std::string> body = bounded_number_gbnf(lower, upper, integer_only, [&](const std::string& part) {
      return b_.add_rule(name + "-digits", part);
    });
    if (!body.ok()) return error(ptr, body.status().message());
    return b_.add_rule(name, *body);
  }

  Result<std::string> visit_string(const JsonValue& s, const std::string& ptr, const std::string& name) {
    const JsonValue* pattern = s.find("pattern");
    const JsonValue* format = s.find("format");
    const bool lengths = s.find("minLength") || s.find("maxLength");
    if ((pattern != nullptr) + (format != nullptr) + lengths > 1) {
      return error(ptr, "combining two of 'pattern', 'format' and 'minLength'/'maxLength' is not supported");
    }
    if (pattern) {
      if (!pattern->is_string()) return error(ptr + "/pattern", "must be a string");
      const Result<std::string> body = pattern_gbnf(pattern->text, b_.primitive("char"));
      if (!body.ok()) return error(ptr + "/pattern", body.status().message());
      return b_.add_rule(name, "\"\\\"\" " + *body + " \"\\\"\"");
    }
    if (format) {
      if (!format->is_string()) return error(ptr + "/format", "must be a string");
      if (format->text != "date" && format->text != "time" && format->text != "date-time" && format->text != "uuid") {
        return error(ptr + "/format", "format '" + format->text + "' is not supported (date, time, date-time, uuid are)");
      }
      return b_.add_rule(format->text + "-string", "\"\\\"\" " + b_.primitive(format->text) + " \"\\\"\"");
    }
    if (!lengths) return b_.primitive("string");
    WLLM_ASSIGN_OR_RETURN(const auto range, count_range(s, "minLength", "maxLength", ptr));
    // "char" is one character, raw or escaped, so it counts as validators count.
    return b_.add_rule(name, "\"\\\"\" " + b_.primitive("char") + repetition(range.first, range.second) + " \"\\\"\"");
  }

  Result<std::string> visit_array(const JsonValue& s, const std::string& ptr, const std::string& name, int depth) {
    if (const JsonValue* unique = s.find("uniqueItems"); unique && !(unique->is_bool() && !unique->boolean)) {
      return error(ptr + "/uniqueItems", "only false is supported");
    }
    WLLM_ASSIGN_OR_RETURN(auto range, count_range(s, "minItems", "maxItems", ptr));
    std::string item;
    const JsonValue* items = s.find("items");
    if (items && items->is_array()) return error(ptr + "/items", "a list of schemas (a tuple) is not supported");
    if (items && items->is_bool() && !items->boolean) {
      if (range.first > 0) return error(ptr, "items is false but minItems is above 0: no value is valid");
      range.second = 0;
    } else if (items) {
      WLLM_ASSIGN_OR_RETURN(item, visit(*items, ptr + "/items", name + "-item", depth + 1));
    } else {
      item = b_.any_value();
    }
    const std::string ws = b_.primitive("ws");
    if (range.second == 0) return b_.add_rule(name, "\"[\" " + ws + " \"]\"");
    if (!items && range.first == 0 && range.second < 0) return b_.primitive("array");
    // "[" item ("," item){min-1,max-1} "]", all of it optional when min is 0.
    const int64_t more_min = std::max<int64_t>(range.first - 1, 0);
    const int64_t more_max = range.second < 0 ? -1 : range.second - 1;
    std::string elements = item + " " + ws;
    if (more_max != 0) elements += " ( \",\" " + ws + " " + item + " " + ws + " )" + repetition(more_min, more_max);
    if (range.first == 0) elements = "( " + elements + " )?";
    return b_.add_rule(name, "\"[\" " + ws + " " + elements + " \"]\"");
  }

  Result<std::string> visit_object(const JsonValue& s, const std::string& ptr, const std::string& name, int depth) {
    const JsonValue* properties = s.find("properties");
    const JsonValue* required = s.find("required");
    const JsonValue* additional = s.find("additionalProperties");
    if (properties && !properties->is_object()) return error(ptr + "/properties", "must be an object");
    if (required && !required->is_array()) return error(ptr + "/required", "must be an array of property names");
    if (!properties && !required && (!additional || (additional->is_bool() && additional->boolean))) {
      return b_.any_object();
    }
    std::vector<std::string> required_names;
    if (required) {
      for (const JsonValue& r : required->items) {
        if (!r.is_string()) return error(ptr + "/required", "must be an array of property names");
        if (std::find(required_names.begin(), required_names.end(), r.text) != required_names.end()) {
          return error(ptr + "/required", "names '" + r.text + "' twice");
        }
        required_names.push_back(r.text);
      }
    }
    const std::string ws = b_.primitive("ws");
    const auto is_required = [&](const std::string& n) {
      return std::find(required_names.begin(), required_names.end(), n) != required_names.end();
    };
    // kv rules: "\"name\"" ws ":" ws value ws
    std::vector<std::string> required_kvs, optional_kvs, declared;
    const auto add_property = [&](const std::string& prop, const JsonValue& schema, const std::string& prop_ptr) -> Status {
      declared.push_back(prop);
      if (schema.is_bool() && !schema.boolean) {
        if (is_required(prop)) return error(prop_ptr, "the required property '" + prop + "' has the schema false");
        return {};  // may never appear
      }
      const std::string prop_name = name + "-" + prop;
      WLLM_ASSIGN_OR_RETURN(const std::string value, visit(schema, prop_ptr, prop_name, depth + 1));
      std::string key;
      append_json_string(prop, &key);
      const std::string kv = b_.add_rule(prop_name + "-kv", gbnf_literal(key) + " " + ws + " \":\" " + ws + " " + value + " " + ws);
      (is_required(prop) ? required_kvs : optional_kvs).push_back(kv);
      return {};
    };
    if (properties) {
      for (const auto& [prop, schema] : properties->members) {
        WLLM_RETURN_IF_ERROR(add_property(prop, schema, ptr + "/properties" + pointer_segment(prop)));
      }
    }
    // A required name the properties do not list is an additional property:
    // its value is additionalProperties' (any value when that is absent,
    // which the schema allows: only the extra names are left out).
    const JsonValue kTrue{JsonValue::Type::kBool, true, {}, {}, {}};
    for (const std::string& r : required_names) {
      if (std::find(declared.begin(), declared.end(), r) != declared.end()) continue;
      if (!additional || (additional->is_bool() && additional->boolean)) {
        WLLM_RETURN_IF_ERROR(add_property(r, kTrue, ptr + "/required"));
      } else if (additional->is_bool()) {
        return error(ptr, "the required property '" + r + "' is not in properties and additionalProperties is false: "
                          "no value is valid");
      } else {
        WLLM_RETURN_IF_ERROR(add_property(r, *additional, ptr + "/additionalProperties"));
      }
    }
    // Additional properties: absent means none when properties are listed (as llama.cpp).
    std::string additional_kv;
    const bool allow_additional = additional ? !(additional->is_bool() && !additional->boolean) : !properties;
    if (allow_additional) {
      std::string value;
      if (additional && !additional->is_bool()) {
        WLLM_ASSIGN_OR_RETURN(value, visit(*additional, ptr + "/additionalProperties", name + "-additional", depth + 1));
      } else {
        value = b_.any_value();
      }
      const std::string key_name = name + "-additional-key";
      const std::string key = b_.add_rule(key_name, "\"\\\"\" " + not_names(declared, key_name + "-trie") + " \"\\\"\"");
      additional_kv = b_.add_rule(name + "-additional-kv", key + " " + ws + " \":\" " + ws + " " + value + " " + ws);
    }
    const std::string comma = "\",\" " + ws + " ";
    std::string body = "\"{\" " + ws;
    if (!required_kvs.empty()) {
      // The first property is required, so every later one comes after a comma.
      for (size_t i = 0; i < required_kvs.size(); ++i) body += " " + (i ? comma : "") + required_kvs[i];
      for (const std::string& kv : optional_kvs) body += " ( " + comma + kv + " )?";
      if (!additional_kv.empty()) body += " ( " + comma + additional_kv + " )*";
    } else if (!optional_kvs.empty() || !additional_kv.empty()) {
      // Any of them may come first: one alternative per first property, then
      // a rule for "the optional ones after it" (rest_i), so the grammar stays
      // linear in the number of properties.
      std::string rest = additional_kv.empty() ? "" : "( " + comma + additional_kv + " )*";
      std::vector<std::string> firsts;
      if (!additional_kv.empty()) firsts.push_back(additional_kv + " " + rest);
      for (size_t i = optional_kvs.size(); i-- > 0;) {
        firsts.push_back(optional_kvs[i] + (rest.empty() ? "" : " " + rest));
        const std::string this_rest = "( " + comma + optional_kvs[i] + " )?" + (rest.empty() ? "" : " " + rest);
        rest = i > 0 ? b_.add_rule(name + "-rest", this_rest) : rest;
      }
      std::reverse(firsts.begin(), firsts.end());
      body += " ( " + join(firsts) + " )?";
    }
    body += " \"}\"";
    return b_.add_rule(name, body);
  }

  // The text of a key (between its quotes, written without escapes) that is
  // none of `names`: a trie over the names' code points, where at each node
  // a key may stop (unless a name ends there), leave the trie by a character
  // no name continues with, or follow one that some name does. Each inner
  // node is a rule of its own (named from `rule`), so that a long name does
  // not nest groups deeper than the GBNF parser allows.
  std::string not_names(const std::vector<std::string>& names, const std::string& rule) {
    struct Node {
      bool ends_name = false;
      std::map<uint32_t, size_t> children;
    };
    std::vector<Node> trie(1);
    for (const std::string& n : names) {
      std::vector<uint32_t> cps;
      decode_utf8_lenient(n, &cps);
      // A name with a character keys cannot hold raw can never be written as a key.
      if (std::any_of(cps.begin(), cps.end(), [](uint32_t c) { return c < 0x20 || c == '"' || c == '\\'; })) continue;
      size_t node = 0;
      for (uint32_t c : cps) {
        auto it = trie[node].children.find(c);
        if (it == trie[node].children.end()) {
          it = trie[node].children.emplace(c, trie.size()).first;
          trie.emplace_back();
        }
        node = it->second;
      }
      trie[node].ends_name = true;
    }
    const std::string key_char = b_.primitive("key-char");
    if (trie[0].children.empty()) return key_char + (trie[0].ends_name ? "+" : "*");
    // Built bottom-up with an explicit stack: names can be long.
    std::vector<std::string> text(trie.size());  // a rule name, or key-char+ past a whole name
    std::vector<std::pair<size_t, bool>> stack{{0, false}};
    while (!stack.empty()) {
      auto [node, children_done] = stack.back();
      stack.pop_back();
      if (!children_done) {
        stack.push_back({node, true});
        for (const auto& [c, child] : trie[node].children) stack.push_back({child, false});
        continue;
      }
      const Node& n = trie[node];
      if (n.children.empty()) {
        text[node] = key_char + "+";  // past a whole name: at least one more character
        continue;
      }
      std::vector<std::string> alts;
      std::vector<CodePointRange> others = {{0, 0x1F}, {'"', '"'}, {'\\', '\\'}};
      for (const auto& [c, child] : n.children) {
        std::string one;
        append_utf8(c, &one);
        alts.push_back(gbnf_literal(one) + " " + text[child]);
        others.push_back({c, c});
      }
      const std::vector<CodePointRange> rest = complement_ranges(normalize_ranges(others));
      if (!rest.empty()) alts.push_back(gbnf_char_class(rest) + " " + key_char + "*");
      text[node] = b_.add_rule(rule, n.ends_name ? join(alts) : "( " + join(alts) + " )?");
    }
    return text[0];
  }

  JsonGrammarBuilder& b_;
  const JsonValue& document_;
  std::map<std::string, std::string> ref_rules_;  // $ref text -> rule
};

Result<std::string> JsonGrammarBuilder::add_schema(const JsonValue& schema, std::string_view name) {
  SchemaCompiler compiler(*this, schema);
  return compiler.visit(schema, "", std::string(name), 0);
}

Result<std::string> json_schema_gbnf(std::string_view schema_json) {
  WLLM_ASSIGN_OR_RETURN(const JsonValue schema, parse_json(schema_json, "JSON schema"));
  JsonGrammarBuilder b;
  WLLM_ASSIGN_OR_RETURN(const std::string value, b.add_schema(schema, "value-of-schema"));
  return b.grammar(value);
}

std::string json_gbnf(bool object_only) {
  JsonGrammarBuilder b;
  const std::string value = object_only ? b.any_object() : b.any_value();
  return b.grammar(value);
}

}  // namespace wllm
