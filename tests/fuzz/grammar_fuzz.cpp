// Fuzzes the grammar and JSON-schema compiler and constrained decoding
// (cpp/grammar) the way the engine runs them: an OutputConstraint compiled
// by a ConstraintCache over a real vocabulary (one cache per vocabulary,
// kept from input to input as the Engine keeps it), and the output fed to
// its TokenMasker token by token as Generation feeds sampled tokens, lazy
// triggers included. The vocabularies, loaded once: stories260K's (SPM, 512
// tokens: each mask is checked whole) and DeepSeek-Coder's (byte-level BPE,
// 32k tokens: masks are checked on a sample); each has a control token a
// constraint can preserve (<s>, <｜begin▁of▁sentence｜>).
//
// Input: byte 0 picks the constraint's kind (GBNF, JSON, a JSON object, a
// JSON schema); byte 1 bit 0 the vocabulary, bit 1 whether the output is
// repaired into the grammar. The rest splits at NUL bytes: the constraint's
// text (GBNF or the schema), the output, then parts told apart by their
// first byte: 'N' name '=' schema (a schema the grammar uses by name, as
// tool calls do), 'T' a trigger, 'S' a start trigger, 'P' a preserved token.
// Repaired, the output keeps each byte the grammar allows there and replaces
// each other one by an allowed byte (or the end, where the grammar may end)
// that the byte picks, so that mutations of valid text stay valid and reach
// deep into the grammar.
//
// Checked besides the sanitizers:
//  - a refused constraint has the code kInvalidArgument and a message; GBNF
//    the compiler writes for a schema or a JSON mode always parses;
//  - the trigger scanner finds the first trigger where a search of the whole
//    output finds it;
//  - a mask holds exactly the tokens whose bytes the matcher accepts, and the
//    end-of-generation tokens where the grammar can end, and counts them;
//  - the masker (warm from earlier inputs) accepts or rejects each token, and
//    the output, as a matcher of the same grammar made for this input does
//    fed one byte at a time (where neither overflowed: a grammar too
//    ambiguous to follow; -timeout and -rss_limit_mb catch one that is
//    followed without bounds);
//  - a JSON-mode or schema output the grammar accepts whole is JSON (an
//    object for json_object) valid against the schema (every keyword the
//    compiler supports; pattern where pattern and string are ASCII).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf.h"
#include "grammar/constraint_cache.h"
#include "grammar/grammar.h"
#include "grammar/grammar_matcher.h"
#include "grammar/json.h"
#include "grammar/number_grammar.h"
#include "grammar/output_constraint.h"
#include "grammar/token_masker.h"
#include "grammar/trigger_scanner.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace {

using wllm::GrammarMatcher;
using wllm::JsonValue;
using wllm::OutputConstraint;
using StateId = GrammarMatcher::StateId;
constexpr StateId kDead = GrammarMatcher::kDead;

// Bounds that keep one execution short: a mask walks the vocabulary's trie.
constexpr size_t kMaxOutputBytes = 512;
constexpr size_t kMaxTokens = 64;
constexpr int kMaxMasks = 6;
constexpr int32_t kWholeMaskCheck = 4096;  // vocabularies up to this size have every token of a mask checked
constexpr int kSampledTokens = 192;        // else this many

constexpr const char* kVocabularies[] = {"stories260K.gguf", "vocab/ggml-vocab-deepseek-coder.gguf"};

struct Vocab {
  std::unique_ptr<wllm::Tokenizer> tok;
  wllm::ConstraintCache cache;
};

std::vector<Vocab>* vocabs = nullptr;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "grammar_fuzz: %s\n", what);
    std::abort();
  }
}

// ---------------------------------------------------------------------------
// The input

struct Input {
  OutputConstraint constraint;
  Vocab* vocab = nullptr;
  bool repair = false;
  std::string output;
};

Input read_input(const uint8_t* data, size_t size) {
  static constexpr OutputConstraint::Kind kKinds[] = {OutputConstraint::Kind::kGrammar, OutputConstraint::Kind::kJson,
                                                      OutputConstraint::Kind::kJsonObject,
                                                      OutputConstraint::Kind::kJsonSchema};
  Input in;
  OutputConstraint& c = in.constraint;
  c.kind = kKinds[data[0] % std::size(kKinds)];
  in.vocab = &(*vocabs)[data[1] & 1];
  in.repair = data[1] & 2;
  const std::string_view rest(reinterpret_cast<const char*>(data + 2), size - 2);
  std::vector<std::string_view> parts;
  for (size_t at = 0;;) {
    const size_t end = rest.find('\0', at);
    parts.push_back(rest.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
    if (end == std::string_view::npos) break;
    at = end + 1;
  }
  c.text = parts[0];
  if (parts.size() > 1) in.output = parts[1].substr(0, kMaxOutputBytes);
  for (size_t i = 2; i < parts.size(); ++i) {
    if (parts[i].empty()) continue;
    const std::string value(parts[i].substr(1));
    switch (parts[i][0]) {
      case 'N': {
        const size_t eq = value.find('=');
        c.schemas.push_back({value.substr(0, eq), eq == std::string::npos ? "" : value.substr(eq + 1)});
        break;
      }
      case 'T': c.triggers.push_back(value); break;
      case 'S': c.start_triggers.push_back(value); break;
      case 'P': c.preserved_tokens.push_back(value); break;
      default: break;
    }
  }
  return in;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view trim_start(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && is_space(s[i])) ++i;
  return s.substr(i);
}

// Where the grammar of a lazy constraint takes over in `output`, found by a
// plain search (start triggers first, as the scanner checks them); npos if
// no trigger is in it.
size_t first_trigger(const OutputConstraint& c, std::string_view output) {
  const std::string_view head = trim_start(output);
  for (const std::string& t : c.start_triggers) {
    if (!t.empty() && head.substr(0, t.size()) == t) return output.size() - head.size();
  }
  size_t first = std::string_view::npos;
  for (const std::string& t : c.triggers) {
    if (!t.empty()) first = std::min(first, output.find(t));
  }
  return first;
}

// ---------------------------------------------------------------------------
// A JSON Schema validator for the keywords the compiler supports, written
// from the specification rather than from the compiler, so that it catches
// a grammar admitting what the schema forbids. A keyword applies to values
// of its type only; unknown keywords are the compiler's to refuse.

class SchemaValidator {
 public:
  explicit SchemaValidator(const JsonValue& root) : root_(root) {}

  // Whether `v` is valid against the root schema. Also true when it cannot
  // tell (a $ref it cannot follow, or references looping without end).
  bool valid(const JsonValue& v) {
    const bool ok = valid(root_, v, 0);
    return ok || unsure_;
  }

 private:
  static constexpr int kMaxDepth = 200;

  bool valid(const JsonValue& s, const JsonValue& v, int depth) {
    if (depth > kMaxDepth) {
      unsure_ = true;
      return true;
    }
    if (s.is_bool()) return s.boolean;
    if (!s.is_object()) return true;
    if (const JsonValue* ref = s.find("$ref"); ref && ref->is_string()) {
      const JsonValue* target = resolve(ref->text);
      if (!target) {
        unsure_ = true;
        return true;
      }
      if (!valid(*target, v, depth + 1)) return false;
    }
    if (const JsonValue* type = s.find("type"); type && !has_type(*type, v)) return false;
    if (const JsonValue* list = s.find("enum"); list && list->is_array()) {
      if (std::none_of(list->items.begin(), list->items.end(), [&](const JsonValue& e) { return equal(e, v); })) {
        return false;
      }
    }
    if (const JsonValue* value = s.find("const"); value && !equal(*value, v)) return false;
    const auto valid_alternatives = [&](const JsonValue& list) {
      return std::count_if(list.items.begin(), list.items.end(), [&](const JsonValue& a) { return valid(a, v, depth + 1); });
    };
    if (const JsonValue* list = s.find("anyOf"); list && list->is_array() && valid_alternatives(*list) == 0) return false;
    if (const JsonValue* list = s.find("oneOf"); list && list->is_array() && valid_alternatives(*list) != 1) return false;
    switch (v.type) {
      case JsonValue::Type::kObject: return valid_object(s, v, depth);
      case JsonValue::Type::kArray: return valid_array(s, v, depth);
      case JsonValue::Type::kString: return valid_string(s, v);
      case JsonValue::Type::kNumber: return valid_number(s, v);
      default: return true;
    }
  }

  bool valid_object(const JsonValue& s, const JsonValue& v, int depth) {
    const JsonValue* properties = s.find("properties");
    const JsonValue* additional = s.find("additionalProperties");
    for (const wllm::JsonMember& m : v.members) {
      const JsonValue* p = properties && properties->is_object() ? properties->find(m.key) : nullptr;
      if (p ? !valid(*p, m.value, depth + 1) : additional && !valid(*additional, m.value, depth + 1)) return false;
    }
    if (const JsonValue* required = s.find("required"); required && required->is_array()) {
      for (const JsonValue& name : required->items) {
        if (name.is_string() && !v.find(name.text)) return false;
      }
    }
    return true;
  }

  bool valid_array(const JsonValue& s, const JsonValue& v, int depth) {
    if (const JsonValue* items = s.find("items"); items && !items->is_array()) {
      for (const JsonValue& item : v.items) {
        if (!valid(*items, item, depth + 1)) return false;
      }
    }
    return within_counts(s, "minItems", "maxItems", v.items.size());
  }

  bool valid_string(const JsonValue& s, const JsonValue& v) {
    std::vector<uint32_t> cpts;
    wllm::decode_utf8_lenient(v.text, &cpts);
    if (!within_counts(s, "minLength", "maxLength", cpts.size())) return false;
    if (const JsonValue* pattern = s.find("pattern"); pattern && pattern->is_string() && !matches(pattern->text, v.text)) {
      return false;
    }
    const JsonValue* format = s.find("format");
    return !format || !format->is_string() || valid_format(format->text, v.text);
  }

  // A pattern, as JSON Schema runs it (ECMAScript, found anywhere in the
  // string): std::regex's ECMAScript grammar reads ASCII as JavaScript's does,
  // run by libstdc++'s breadth-first matcher (__polynomial), whose time stays
  // polynomial. Non-ASCII text, and what std::regex cannot read, it cannot tell.
  bool matches(const std::string& pattern, const std::string& text) {
    const auto ascii = [](const std::string& t) {
      return std::all_of(t.begin(), t.end(), [](char c) { return static_cast<uint8_t>(c) < 0x80; });
    };
    if (ascii(pattern) && ascii(text)) {
      try {
        const std::regex re(pattern, std::regex_constants::ECMAScript | std::regex_constants::__polynomial);
        return std::regex_search(text, re);
      } catch (const std::regex_error&) {
      }
    }
    unsure_ = true;
    return true;
  }

  bool valid_number(const JsonValue& s, const JsonValue& v) {
    const wllm::Result<wllm::Decimal> x = wllm::parse_decimal(v.text);
    if (!x.ok()) {
      unsure_ = true;
      return true;
    }
    // Draft 4: a boolean exclusiveMinimum/Maximum makes minimum/maximum exclusive.
    const JsonValue* excl_min = s.find("exclusiveMinimum");
    const JsonValue* excl_max = s.find("exclusiveMaximum");
    const auto flag = [](const JsonValue* b) { return b && b->is_bool() && b->boolean; };
    struct Bound {
      const char* key;
      int sign;  // +1: x must be above it, -1: below
      bool exclusive;
    };
    for (const Bound b : {Bound{"minimum", 1, flag(excl_min)}, Bound{"maximum", -1, flag(excl_max)},
                          Bound{"exclusiveMinimum", 1, true}, Bound{"exclusiveMaximum", -1, true}}) {
      const JsonValue* bound = s.find(b.key);
      if (!bound || !bound->is_number()) continue;
      const wllm::Result<wllm::Decimal> d = wllm::parse_decimal(bound->text);
      if (!d.ok()) {
        unsure_ = true;
        continue;
      }
      const int c = wllm::compare_decimals(*x, *d) * b.sign;
      if (c < 0 || (c == 0 && b.exclusive)) return false;
    }
    return true;
  }

  static bool within_counts(const JsonValue& s, const char* min_key, const char* max_key, size_t n) {
    const auto count = [&](const char* key, size_t otherwise) {
      const JsonValue* v = s.find(key);
      if (!v || !v->is_number()) return otherwise;
      const wllm::Result<wllm::Decimal> d = wllm::parse_decimal(v->text);
      if (!d.ok() || d->negative || d->int_digits.size() > 9) return otherwise;
      return static_cast<size_t>(std::stoul(d->int_digits));
    };
    return n >= count(min_key, 0) && n <= count(max_key, SIZE_MAX);
  }

  static bool is_integer(const JsonValue& v) {
    const wllm::Result<wllm::Decimal> d = wllm::parse_decimal(v.text);
    return d.ok() && d->frac_digits.empty();
  }

  static bool has_type(const JsonValue& type, const JsonValue& v) {
    if (type.is_array()) {
      return std::any_of(type.items.begin(), type.items.end(), [&](const JsonValue& t) { return has_type(t, v); });
    }
    const std::string& t = type.text;
    switch (v.type) {
      case JsonValue::Type::kNull: return t == "null";
      case JsonValue::Type::kBool: return t == "boolean";
      case JsonValue::Type::kObject: return t == "object";
      case JsonValue::Type::kArray: return t == "array";
      case JsonValue::Type::kString: return t == "string";
      case JsonValue::Type::kNumber: return t == "number" || (t == "integer" && is_integer(v));
    }
    return false;
  }

  // Equality as JSON Schema defines it: numbers by value, members in any order.
  static bool equal(const JsonValue& a, const JsonValue& b) {
    if (a.type != b.type) return false;
    switch (a.type) {
      case JsonValue::Type::kNull: return true;
      case JsonValue::Type::kBool: return a.boolean == b.boolean;
      case JsonValue::Type::kString: return a.text == b.text;
      case JsonValue::Type::kNumber: {
        const wllm::Result<wllm::Decimal> x = wllm::parse_decimal(a.text), y = wllm::parse_decimal(b.text);
        return x.ok() && y.ok() ? wllm::compare_decimals(*x, *y) == 0 : a.text == b.text;
      }
      case JsonValue::Type::kArray:
        return a.items.size() == b.items.size() && std::equal(a.items.begin(), a.items.end(), b.items.begin(), equal);
      case JsonValue::Type::kObject:
        return a.members.size() == b.members.size() &&
               std::all_of(a.members.begin(), a.members.end(), [&](const wllm::JsonMember& m) {
                 const JsonValue* other = b.find(m.key);
                 return other && equal(m.value, *other);
               });
    }
    return false;
  }

  // RFC 3339's full-date, full-time and date-time, and RFC 4122's UUID text.
  static bool valid_format(const std::string& format, std::string_view text) {
    const auto digits = [&](size_t at, size_t n, int max) {
      if (at + n > text.size()) return -1;
      int value = 0;
      for (size_t i = at; i < at + n; ++i) {
        if (text[i] < '0' || text[i] > '9') return -1;
        value = value * 10 + (text[i] - '0');
      }
      return value <= max ? value : -1;
    };
    const auto date = [&](size_t at) {
      const int year = digits(at, 4, 9999), month = digits(at + 5, 2, 12), day = digits(at + 8, 2, 31);
      if (year < 0 || month < 1 || day < 1 || text[at + 4] != '-' || text[at + 7] != '-') return false;
      const bool leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
      const int days[] = {31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
      return day <= days[month - 1];
    };
    const auto time = [&](size_t at) {
      if (digits(at, 2, 23) < 0 || text.substr(at + 2, 1) != ":" || digits(at + 3, 2, 59) < 0 ||
          text.substr(at + 5, 1) != ":" || digits(at + 6, 2, 60) < 0) {
        return false;
      }
      size_t i = at + 8;
      if (i < text.size() && text[i] == '.') {
        const size_t first = ++i;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
        if (i == first) return false;
      }
      if (i < text.size() && (text[i] == 'Z' || text[i] == 'z')) return i + 1 == text.size();
      return i + 6 == text.size() && (text[i] == '+' || text[i] == '-') && digits(i + 1, 2, 23) >= 0 &&
             text[i + 3] == ':' && digits(i + 4, 2, 59) >= 0;
    };
    if (format == "date") return text.size() == 10 && date(0);
    if (format == "time") return time(0);
    if (format == "date-time") return text.size() > 11 && date(0) && (text[10] == 'T' || text[10] == 't') && time(11);
    if (format == "uuid") {
      if (text.size() != 36) return false;
      for (size_t i = 0; i < text.size(); ++i) {
        const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? text[i] != '-' : !std::isxdigit(static_cast<unsigned char>(text[i]))) return false;
      }
      return true;
    }
    return true;
  }

  // A "#..." reference as RFC 6901 reads a URI fragment: percent-decoded,
  // then split at '/', each segment unescaped (~1 is '/', ~0 is '~').
  const JsonValue* resolve(const std::string& ref) const {
    if (ref.empty() || ref[0] != '#') return nullptr;
    std::string pointer;
    for (size_t i = 1; i < ref.size(); ++i) {
      if (ref[i] == '%' && i + 2 < ref.size() && std::isxdigit(static_cast<unsigned char>(ref[i + 1])) &&
          std::isxdigit(static_cast<unsigned char>(ref[i + 2]))) {
        pointer += static_cast<char>(std::stoi(ref.substr(i + 1, 2), nullptr, 16));
        i += 2;
      } else {
        pointer += ref[i];
      }
    }
    const JsonValue* at = &root_;
    size_t i = 0;
    while (i < pointer.size()) {
      if (pointer[i] != '/') return nullptr;
      const size_t end = std::min(pointer.find('/', i + 1), pointer.size());
      std::string segment;
      for (size_t j = i + 1; j < end; ++j) {
        if (pointer[j] == '~' && j + 1 < end && (pointer[j + 1] == '0' || pointer[j + 1] == '1')) {
          segment += pointer[++j] == '0' ? '~' : '/';
        } else {
          segment += pointer[j];
        }
      }
      if (at->is_object()) {
        at = at->find(segment);
      } else if (at->is_array() && !segment.empty() && segment.size() < 10 &&
                 segment.find_first_not_of("0123456789") == std::string::npos &&
                 std::stoul(segment) < at->items.size()) {
        at = &at->items[std::stoul(segment)];
      } else {
        at = nullptr;
      }
      if (!at) return nullptr;
      i = end;
    }
    return at;
  }

  const JsonValue& root_;
  bool unsure_ = false;
};

// A text the grammar of a JSON mode or schema accepted whole.
void check_json(const OutputConstraint& c, std::string_view text) {
  const wllm::Result<JsonValue> value = wllm::parse_json(text);
  if (!value.ok()) {
    // Two members with one name are JSON, which the strict reader refuses (a
    // grammar cannot keep names apart, as llama.cpp's cannot).
    if (value.status().message().find("two members named") != std::string::npos) return;
    std::fprintf(stderr, "grammar_fuzz: %s\n", value.status().message().c_str());
    check(false, "the grammar of a JSON mode or schema accepted text that is not JSON");
  }
  if (c.kind == OutputConstraint::Kind::kJsonObject) {
    check(value->is_object(), "json_object accepted a value that is no object");
  }
  if (c.kind == OutputConstraint::Kind::kJsonSchema) {
    const wllm::Result<JsonValue> schema = wllm::parse_json(c.text);
    check(schema.ok(), "a schema the compiler took does not parse");
    if (!SchemaValidator(*schema).valid(*value)) {
      std::fprintf(stderr, "grammar_fuzz: the value: %.*s\n", static_cast<int>(text.size()), text.data());
      check(false, "the grammar of a schema accepted a value the schema does not");
    }
  }
}

// ---------------------------------------------------------------------------
// Constrained decoding

// The output with each byte the grammar refuses replaced by one it allows
// (or the end, where it may end) that the byte picks; it ends where the
// matcher overflows (a grammar too ambiguous to follow).
std::string repair(GrammarMatcher& m, std::string_view text) {
  std::string out;
  StateId s = m.initial_state();
  uint8_t allowed[256];
  m.clear_overflow();
  for (const char ch : text) {
    const uint8_t byte = static_cast<uint8_t>(ch);
    StateId next = m.step(s, byte);
    if (m.overflowed()) break;
    if (next == kDead) {
      int n = 0;
      for (int b = 0; b < 256 && !m.overflowed(); ++b) {
        if (m.step(s, static_cast<uint8_t>(b)) != kDead) allowed[n++] = static_cast<uint8_t>(b);
      }
      if (m.overflowed()) break;
      const int options = n + (m.can_end(s) ? 1 : 0);
      if (options == 0 || byte % options == n) break;
      next = m.step(s, allowed[byte % options]);
      out += static_cast<char>(allowed[byte % options]);
    } else {
      out += ch;
    }
    s = next;
  }
  return out;
}

// Feeds `bytes` to the fresh matcher from `state` (overflowed() then tells about these bytes).
StateId feed(GrammarMatcher& m, StateId state, std::string_view bytes) {
  m.clear_overflow();
  for (const char c : bytes) {
    if (state == kDead) break;
    state = m.step(state, static_cast<uint8_t>(c));
  }
  return state;
}

// The masker's state and the fresh matcher's after the same bytes agree,
// unless either could not follow them (a grammar too ambiguous).
void check_same(wllm::TokenMasker& masker, StateId warm, GrammarMatcher& fresh, StateId cold) {
  if (masker.overflowed() || fresh.overflowed()) return;
  check((warm == kDead) == (cold == kDead), "the masker and a fresh matcher disagree on whether the bytes match");
  if (warm != kDead) {
    check(masker.can_end(warm) == fresh.can_end(cold) && masker.must_end(warm) == fresh.must_end(cold),
          "the masker and a fresh matcher disagree on whether the grammar can end");
  }
}

class Decoder {
 public:
  Decoder(const Input& in, wllm::TokenMasker& masker, GrammarMatcher& fresh)
      : in_(in), tok_(*in.vocab->tok), masker_(masker), fresh_(fresh), trie_(masker.trie()) {}

  // Feeds the output's tokens as Generation feeds sampled ones.
  void run() {
    const OutputConstraint& c = in_.constraint;
    std::vector<int32_t> ids = tok_.encode(in_.output, false, true);
    if (ids.size() > kMaxTokens) ids.resize(kMaxTokens);
    wllm::TriggerScanner scanner(c.triggers, c.start_triggers);
    bool waiting = c.lazy();
    StateId state = masker_.initial_state(), cold = fresh_.initial_state();
    const int stride = std::max<int>(1, static_cast<int>(ids.size()) / kMaxMasks);
    std::string seen;  // the output so far, while waiting for a trigger
    for (size_t i = 0; i < ids.size(); ++i) {
      const int32_t id = ids[i];
      if (tok_.is_end_of_generation(id)) break;
      const std::string_view bytes = masker_.token_bytes(id);
      if (waiting) {
        wllm::TriggerScanner::Match match;
        const bool found = scanner.find(bytes, &match);
        check_trigger(seen, bytes, found, match);
        if (!found) {
          scanner.push(bytes);
          seen += bytes;
          continue;
        }
        waiting = false;
        state = masker_.accept_bytes(masker_.initial_state(), match.text);
        cold = feed(fresh_, fresh_.initial_state(), match.text);
        check_same(masker_, state, fresh_, cold);
        if (masker_.overflowed()) return;  // Generation fails: the grammar is too ambiguous
        if (state == kDead) {
          // Generation samples again from where the trigger's earlier bytes leave the grammar.
          const std::string_view before = std::string_view(match.text).substr(0, match.before);
          state = masker_.accept_bytes(masker_.initial_state(), before);
          check_same(masker_, state, fresh_, feed(fresh_, fresh_.initial_state(), before));
          if (state != kDead) check_mask(state, -1);
          return;
        }
        continue;
      }
      masker_.compact_if_needed(&state);
      if (masker_.must_end(state)) return;
      if (static_cast<int>(i) % stride == 0 && !check_mask(state, id)) return;
      const StateId next = masker_.accept(state, id);
      if (!bytes.empty()) {
        cold = feed(fresh_, cold, bytes);
        check_same(masker_, next, fresh_, cold);
      }
      if (next == kDead || fresh_.overflowed()) return;
      state = next;
    }
  }

 private:
  // The scanner's answer for `token` after `seen` against a search of the
  // whole output: a start trigger at its start after whitespace, else the
  // first trigger anywhere.
  void check_trigger(const std::string& seen, std::string_view token, bool found,
                     const wllm::TriggerScanner::Match& match) const {
    const std::string whole = seen + std::string(token);
    const size_t at = first_trigger(in_.constraint, whole);
    check(found == (at != std::string::npos), found ? "the scanner found a trigger the output does not hold"
                                                    : "the scanner missed a trigger");
    if (!found) return;
    check(match.text == whole.substr(at), "the scanner's trigger text is not the output from the trigger on");
    const size_t before = at < seen.size() ? seen.size() - at : 0;
    check(match.before == before, "the scanner counts the trigger's bytes before the token wrongly");
  }

  // The mask at `state` against the matcher, token by token: every token of
  // a small vocabulary, else a sample, the end tokens and `token`. false
  // where the mask overflowed (Generation then fails).
  bool check_mask(StateId state, int32_t token) {
    if (masks_ == kMaxMasks) return true;
    ++masks_;
    size_t count = 0;
    const uint32_t* bits = masker_.mask(state, &count);
    if (masker_.overflowed()) return false;
    const int32_t n = trie_.n_vocab();
    size_t set = 0;
    for (size_t w = 0; w < (static_cast<size_t>(n) + 31) / 32; ++w) set += static_cast<size_t>(__builtin_popcount(bits[w]));
    check(set == count, "a mask's count is not the number of tokens it allows");
    const auto expect = [&](int32_t t) {
      const bool allowed = (bits[t >> 5] >> (t & 31)) & 1;
      const bool end = trie_.is_end_token(t);
      const bool accepted = end ? masker_.can_end(state) : masker_.accept(state, t) != kDead;
      if (!end && masker_.overflowed()) return;  // the matcher's memory limit, met after the mask
      check(allowed == accepted, allowed ? "a mask allows a token whose bytes the matcher rejects"
                                         : "a mask leaves out a token whose bytes the matcher accepts");
    };
    if (n <= kWholeMaskCheck) {
      for (int32_t t = 0; t < n; ++t) expect(t);
      return true;
    }
    for (int i = 0; i < kSampledTokens; ++i) {
      expect(static_cast<int32_t>((static_cast<uint64_t>(state) * 131 + static_cast<uint64_t>(i) * 7919) % n));
    }
    for (const int32_t t : trie_.end_tokens()) expect(t);
    if (token >= 0) expect(token);
    return true;
  }

  const Input& in_;
  const wllm::Tokenizer& tok_;
  wllm::TokenMasker& masker_;
  GrammarMatcher& fresh_;
  const wllm::TokenTrie& trie_;
  int masks_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  vocabs = new std::vector<Vocab>(std::size(kVocabularies));
  for (size_t i = 0; i < std::size(kVocabularies); ++i) {
    const std::filesystem::path path = std::filesystem::path(WLLM_SHARED_MODELS) / kVocabularies[i];
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto file = wllm::GgufFile::parse({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
    auto tok = file.ok() ? wllm::Tokenizer::from_gguf(*file) : wllm::Result<wllm::Tokenizer>(file.status());
    if (!tok.ok()) {
      std::fprintf(stderr, "grammar_fuzz: %s: %s\n", path.c_str(), tok.status().message().c_str());
      std::abort();
    }
    (*vocabs)[i].tok = std::make_unique<wllm::Tokenizer>(std::move(*tok));
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  Input in = read_input(data, size);
  const OutputConstraint& c = in.constraint;

  // Compiled as the engine compiles it; and once more by hand, for a matcher of this input's own.
  const wllm::Result<wllm::TokenMasker*> masker = in.vocab->cache.masker_for(c, *in.vocab->tok);
  const wllm::Result<std::string> gbnf = wllm::constraint_gbnf(c);
  wllm::Result<wllm::Grammar> grammar = gbnf.ok() ? wllm::parse_gbnf(*gbnf) : wllm::Result<wllm::Grammar>(gbnf.status());
  if (c.kind != OutputConstraint::Kind::kGrammar && gbnf.ok()) {
    check(grammar.ok(), "the GBNF written for a schema or JSON mode does not parse");
  }
  check(masker.ok() == grammar.ok(), "the constraint cache and a compilation by hand disagree");
  if (!masker.ok()) {
    check(masker.status().code() == wllm::ErrorCode::kInvalidArgument && !masker.status().message().empty(),
          "a refused constraint has no kInvalidArgument or no message");
    return 0;
  }
  check(*in.vocab->cache.masker_for(c, *in.vocab->tok) == *masker, "the same constraint compiled twice");
  GrammarMatcher fresh(std::make_shared<const wllm::Grammar>(std::move(*grammar)));

  // The output from where the grammar applies, repaired if asked.
  size_t start = 0;
  if (c.lazy()) start = first_trigger(c, in.output);
  if (start != std::string::npos && in.repair) {
    in.output = in.output.substr(0, start) + repair(fresh, std::string_view(in.output).substr(start));
  }

  Decoder(in, **masker, fresh).run();

  // The grammar's part of the output, fed whole: the masker and the fresh
  // matcher agree, and a JSON grammar accepts only JSON.
  if (start == std::string::npos) return 0;
  const std::string_view text = std::string_view(in.output).substr(start);
  const StateId cold = feed(fresh, fresh.initial_state(), text);
  const StateId warm = (*masker)->accept_bytes((*masker)->initial_state(), text);
  check_same(**masker, warm, fresh, cold);
  if (c.kind != OutputConstraint::Kind::kGrammar && cold != kDead && fresh.can_end(cold)) check_json(c, text);
  return 0;
}
