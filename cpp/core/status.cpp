#include "core/status.h"

#include <cstdio>
#include <vector>

namespace wllm {

const char* error_code_name(ErrorCode code) {
  switch (code) {
#define WLLM_ERROR_CODE(enumerator, number, name) \
  case ErrorCode::enumerator:                     \
    return name;
#include "core/error_codes.def"
#undef WLLM_ERROR_CODE
  }
  return "unknown";
}

std::string str_vprintf(const char* fmt, va_list args) {
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  if (n <= 0) return {};
  std::string out(static_cast<size_t>(n), '\0');
  std::vsnprintf(out.data(), out.size() + 1, fmt, args);
  return out;
}

std::string str_printf(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string out = str_vprintf(fmt, args);
  va_end(args);
  return out;
}

Status Status::error(ErrorCode code, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string message = str_vprintf(fmt, args);
  va_end(args);
  return Status(code, std::move(message));
}

Status Status::with_context(const std::string& context) const {
  if (ok()) return *this;
  return Status(code_, context + ": " + message_);
}

}  // namespace wllm
