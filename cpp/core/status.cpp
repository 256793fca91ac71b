#include "core/status.h"

#include <cstdio>
#include <vector>

namespace wllm {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "ok";
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kBadFile: return "bad_file";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kOutOfMemory: return "out_of_memory";
    case ErrorCode::kContextFull: return "context_full";
    case ErrorCode::kAborted: return "aborted";
    case ErrorCode::kIo: return "io";
    case ErrorCode::kNeedMoreData: return "need_more_data";
    case ErrorCode::kInternal: return "internal";
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
