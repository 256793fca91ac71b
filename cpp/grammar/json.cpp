#include "grammar/json.h"

#include <unordered_set>

#include "grammar/text_scan.h"

namespace wllm {
namespace {

class JsonReader {
 public:
  JsonReader(std::string_view src, std::string_view what) : src_(src), what_(what) {}

  Result<JsonValue> read() {
    JsonValue v;
    skip_space();
    parse_value(&v, 0);
    if (ok()) {
      skip_space();
      if (pos_ < src_.size()) fail("unexpected " + found() + " after the JSON value");
    }
    if (!ok()) return status_;
    return v;
  }

 private:
  bool ok() const { return status_.ok(); }
  char peek() const { return pos_ < src_.size() ? src_[pos_] : '\0'; }

  void fail_at(size_t offset, const std::string& message) {
    if (!ok()) return;
    size_t line = 1, column = 1;
    for (size_t i = 0; i < offset && i < src_.size(); ++i) {
      if (src_[i] == '\n') {
        ++line;
        column = 1;
      } else if ((static_cast<uint8_t>(src_[i]) & 0xC0) != 0x80) {
        ++column;
      }
    }
    status_ = Status(ErrorCode::kInvalidArgument,
                     str_printf("%.*s: line %zu, column %zu: ", static_cast<int>(what_.size()), what_.data(), line, column) +
                         message);
  }
  void fail(const std::string& message) { fail_at(pos_, message); }

  std::string found() const {
    if (pos_ >= src_.size()) return "end of text";
    const Utf8Step s = utf8_step(src_.substr(pos_));
    return "'" + std::string(src_.substr(pos_, s.kind == Utf8Step::kValid ? s.length : 1)) + "'";
  }

  void skip_space() {
    while (pos_ < src_.size() && (src_[pos_] == ' ' || src_[pos_] == '\t' || src_[pos_] == '\n' || src_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool literal(std::string_view word) {
    if (src_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  void parse_value(JsonValue* v, int depth) {
    if (depth > kMaxJsonDepth) {
      fail(str_printf("the JSON nests deeper than %d levels", kMaxJsonDepth));
      return;
    }
    const char c = peek();
    if (c == '{') {
      parse_object(v, depth);
    } else if (c == '[') {
      parse_array(v, depth);
    } else if (c == '"') {
      v->type = JsonValue::Type::kString;
      parse_string(&v->text);
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      parse_number(v);
    } else if (literal("true")) {
      v->type = JsonValue::Type::kBool;
      v->boolean = true;
    } else if (literal("false")) {
      v->type = JsonValue::Type::kBool;
    } else if (literal("null")) {
      v->type = JsonValue::Type::kNull;
    } else {
      fail("expected a JSON value, found " + found());
    }
  }

  void parse_object(JsonValue* v, int depth) {
    v->type = JsonValue::Type::kObject;
    ++pos_;
    skip_space();
    if (peek() == '}') {
      ++pos_;
      return;
    }
    std::unordered_set<std::string> names;
    for (;;) {
      if (peek() != '"') {
        fail("expected a member name in double quotes, found " + found());
        return;
      }
      const size_t key_at = pos_;
      std::string key;
      parse_string(&key);
      if (!ok()) return;
      if (!names.insert(key).second) {
        fail_at(key_at, "the object has two members named '" + key + "'");
        return;
      }
      skip_space();
      if (peek() != ':') {
        fail("expected ':' after the member name, found " + found());
        return;
      }
      ++pos_;
      skip_space();
      v->members.push_back(JsonMember{std::move(key), JsonValue()});
      parse_value(&v->members.back().value, depth + 1);
      if (!ok()) return;
      skip_space();
      if (peek() == ',') {
        ++pos_;
        skip_space();
      } else if (peek() == '}') {
        ++pos_;
        return;
      } else {
        fail("expected ',' or '}' after an object member, found " + found());
        return;
      }
    }
  }

  void parse_array(JsonValue* v, int depth) {
    v->type = JsonValue::Type::kArray;
    ++pos_;
    skip_space();
    if (peek() == ']') {
      ++pos_;
      return;
    }
    for (;;) {
      v->items.emplace_back();
      parse_value(&v->items.back(), depth + 1);
      if (!ok()) return;
      skip_space();
      if (peek() == ',') {
        ++pos_;
        skip_space();
      } else if (peek() == ']') {
        ++pos_;
        return;
      } else {
        fail("expected ',' or ']' after an array element, found " + found());
        return;
      }
    }
  }

  // -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
  void parse_number(JsonValue* v) {
    const size_t start = pos_;
    const auto digits = [&] {
      const size_t from = pos_;
      while (peek() >= '0' && peek() <= '9') ++pos_;
      return pos_ - from;
    };
    if (peek() == '-') ++pos_;
    if (peek() == '0') {
      ++pos_;
    } else if (digits() == 0) {
      fail("expected a digit in the number, found " + found());
      return;
    }
    if (peek() == '.') {
      ++pos_;
      if (digits() == 0) {
        fail("expected a digit after the decimal point, found " + found());
        return;
      }
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (digits() == 0) {
        fail("expected a digit in the exponent, found " + found());
        return;
      }
    }
    v->type = JsonValue::Type::kNumber;
    v->text = std::string(src_.substr(start, pos_ - start));
  }

  int hex4() {
    int v = 0;
    for (int i = 0; i < 4; ++i) {
      const int d = hex_digit(peek());
      if (d < 0) {
        fail("expected 4 hexadecimal digits after \\u, found " + found());
        return -1;
      }
      v = v * 16 + d;
      ++pos_;
    }
    return v;
  }

  void parse_string(std::string* out) {
    const size_t open = pos_;
    ++pos_;
    for (;;) {
      if (pos_ >= src_.size()) {
        fail_at(open, "the string is not closed");
        return;
      }
      const char c = src_[pos_];
      if (c == '"') {
        ++pos_;
        return;
      }
      if (static_cast<uint8_t>(c) < 0x20) {
        fail("a control character must be escaped in a JSON string");
        return;
      }
      if (c != '\\') {
        const size_t from = pos_;
        uint32_t cp;
        if (!next_utf8_char(src_, &pos_, &cp)) {
          fail("the text is not valid UTF-8 here");
          return;
        }
        out->append(src_.substr(from, pos_ - from));
        continue;
      }
      const size_t escape_at = pos_;
      ++pos_;
      const char e = peek();
      ++pos_;
      switch (e) {
        case '"': out->push_back('"'); break;
        case '\\': out->push_back('\\'); break;
        case '/': out->push_back('/'); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'n': out->push_back('\n'); break;
        case 'r': out->push_back('\r'); break;
        case 't': out->push_back('\t'); break;
        case 'u': {
          int cp = hex4();
          if (cp < 0) return;
          if (cp >= 0xDC00 && cp <= 0xDFFF) {
            fail_at(escape_at, "a low surrogate escape without a high surrogate before it");
            return;
          }
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (!literal("\\u")) {
              fail_at(escape_at, "a high surrogate escape without a low surrogate after it");
              return;
            }
            const int low = hex4();
            if (low < 0) return;
            if (low < 0xDC00 || low > 0xDFFF) {
              fail_at(escape_at, "a high surrogate escape without a low surrogate after it");
              return;
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(static_cast<uint32_t>(cp), out);
          break;
        }
        default:
          fail_at(escape_at, "unknown escape in a JSON string");
          return;
      }
    }
  }

  std::string_view src_;
  std::string_view what_;
  size_t pos_ = 0;
  Status status_;
};

}  // namespace

const JsonValue* JsonValue::find(std::string_view key) const {
  for (const auto& [k, v] : members) {
    if (k == key) return &v;
  }
  return nullptr;
}

void append_json_string(std::string_view s, std::string* out) {
  out->push_back('"');
  for (const char ch : s) {
    const auto c = static_cast<uint8_t>(ch);
    switch (c) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\b': *out += "\\b"; break;
      case '\f': *out += "\\f"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      default:
        if (c < 0x20) {
          *out += str_printf("\\u%04x", c);
        } else {
          out->push_back(ch);
        }
    }
  }
  out->push_back('"');
}

std::string JsonValue::dump() const {
  std::string out;
  switch (type) {
    case Type::kNull: return "null";
    case Type::kBool: return boolean ? "true" : "false";
    case Type::kNumber: return text;
    case Type::kString: append_json_string(text, &out); return out;
    case Type::kArray:
      out = "[";
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += ',';
        out += items[i].dump();
      }
      return out + "]";
    case Type::kObject:
      out = "{";
      for (size_t i = 0; i < members.size(); ++i) {
        if (i) out += ',';
        append_json_string(members[i].key, &out);
        out += ':';
        out += members[i].value.dump();
      }
      return out + "}";
  }
  return out;
}

Result<JsonValue> parse_json(std::string_view text, std::string_view what) { return JsonReader(text, what).read(); }

}  // namespace wllm
