#include "cli/args.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "cli/name_meant.h"

namespace wllm::cli {

Args::Args(int argc, char** argv, std::vector<std::string_view> switches) {
  for (int i = 0; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const bool is_flag = arg.size() >= 2 && arg[0] == '-' && !(arg[1] >= '0' && arg[1] <= '9') && arg[1] != '.';
    if (!is_flag) {
      positionals_.emplace_back(arg);
      continue;
    }
    if (std::find(switches.begin(), switches.end(), arg) != switches.end()) {
      flags_.push_back({std::string(arg), ""});
      continue;
    }
    if (i + 1 >= argc) {
      if (status_.ok()) status_ = Status::error(ErrorCode::kInvalidArgument, "%s needs a value", argv[i]);
      flags_.push_back({std::string(arg), ""});
      continue;
    }
    flags_.push_back({std::string(arg), argv[++i]});
  }
}

const Args::Flag* Args::find(std::initializer_list<std::string_view> names) const {
  for (const Flag& f : flags_) {
    for (std::string_view n : names) {
      if (f.name == n) return &f;
    }
  }
  return nullptr;
}

bool Args::has(std::string_view flag) const { return find({flag}) != nullptr; }

std::string Args::get_string(std::initializer_list<std::string_view> names, std::string fallback) const {
  const Flag* f = find(names);
  return f ? f->value : fallback;
}

Result<int64_t> Args::get_int(std::initializer_list<std::string_view> names, int64_t fallback) const {
  const Flag* f = find(names);
  if (!f) return fallback;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(f->value.c_str(), &end, 10);
  if (f->value.empty() || *end != '\0' || errno == ERANGE) {
    return Status::error(ErrorCode::kInvalidArgument, "%s expects an integer, got '%s'", f->name.c_str(),
                         f->value.c_str());
  }
  return static_cast<int64_t>(v);
}

Result<double> Args::get_double(std::initializer_list<std::string_view> names, double fallback) const {
  const Flag* f = find(names);
  if (!f) return fallback;
  char* end = nullptr;
  const double v = std::strtod(f->value.c_str(), &end);
  if (f->value.empty() || *end != '\0' || !std::isfinite(v)) {
    return Status::error(ErrorCode::kInvalidArgument, "%s expects a number, got '%s'", f->name.c_str(),
                         f->value.c_str());
  }
  return v;
}

Status Args::check_known(const std::vector<std::string_view>& known) const {
  for (const Flag& f : flags_) {
    if (std::find(known.begin(), known.end(), f.name) != known.end()) continue;
    const std::string meant = flag_meant(f.name, known);
    if (meant.empty()) return Status::error(ErrorCode::kInvalidArgument, "unknown option '%s'", f.name.c_str());
    return Status::error(ErrorCode::kInvalidArgument, "unknown option '%s' (did you mean '%s'?)", f.name.c_str(),
                         meant.c_str());
  }
  return {};
}

}  // namespace wllm::cli
