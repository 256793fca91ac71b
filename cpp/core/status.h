// Status and Result<T>: how every fallible call in the engine reports failure.
//
// The engine parses untrusted files and runs inside a wasm worker, so nothing in
// it throws across an API boundary, calls exit() or aborts on bad input. A
// function that can fail returns a Status (or a Result<T> carrying a value),
// whose message names the object and the numbers involved, e.g.
//   tensor 'blk.3.attn_q.weight': data ends at byte 9123456 but the file has 8000000 bytes
#pragma once

#include <cstdarg>
#include <optional>
#include <string>
#include <utility>

namespace wllm {

// Error codes are part of the public contract: JS errors carry their names.
enum class ErrorCode : int {
#define WLLM_ERROR_CODE(enumerator, number, name) enumerator = number,
#include "core/error_codes.def"
#undef WLLM_ERROR_CODE
};

// The code's name as the JS API shows it, e.g. "bad_file".
const char* error_code_name(ErrorCode code);

// printf-style formatting into a std::string (the project avoids <format>).
std::string str_printf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string str_vprintf(const char* fmt, va_list args);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return {}; }
  static Status error(ErrorCode code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns a copy whose message is "<context>: <message>".
  Status with_context(const std::string& context) const;

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}  // NOLINT: implicit by design

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace wllm

// Early-return helpers: keep error plumbing to one line.
#define WLLM_RETURN_IF_ERROR(expr)          \
  do {                                      \
    ::wllm::Status wllm_status_ = (expr);   \
    if (!wllm_status_.ok()) return wllm_status_; \
  } while (0)

#define WLLM_CONCAT_INNER(a, b) a##b
#define WLLM_CONCAT(a, b) WLLM_CONCAT_INNER(a, b)
// WLLM_ASSIGN_OR_RETURN(auto x, make_x()): binds the value or returns the Status.
#define WLLM_ASSIGN_OR_RETURN(decl, expr) \
  WLLM_ASSIGN_OR_RETURN_IMPL(WLLM_CONCAT(wllm_result_, __LINE__), decl, expr)
#define WLLM_ASSIGN_OR_RETURN_IMPL(tmp, decl, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  decl = std::move(tmp).value()
