// A small command-line parser for the CLI subcommands: flags with values
// (-m FILE, --temp 0.5), boolean switches (--no-bos) and positionals. Every
// malformed value is reported as a Status, never by exiting.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace wllm::cli {

class Args {
 public:
  // `switches` are flags that take no value; every other flag takes one.
  Args(int argc, char** argv, std::vector<std::string_view> switches);

  // The first problem met while parsing (e.g. a flag missing its value; the
  // flag is still listed, so check_known can name it if it is a typo).
  const Status& status() const { return status_; }

  bool has(std::string_view flag) const;
  // Value of the first of `names` present (e.g. {"-m", "--model"}), or fallback.
  std::string get_string(std::initializer_list<std::string_view> names, std::string fallback = "") const;
  Result<int64_t> get_int(std::initializer_list<std::string_view> names, int64_t fallback) const;
  Result<double> get_double(std::initializer_list<std::string_view> names, double fallback) const;
  const std::vector<std::string>& positionals() const { return positionals_; }

  // The first flag given that is not in `known`, as an error that names the
  // flag meant where one is close (flag_meant): typos are not ignored.
  Status check_known(const std::vector<std::string_view>& known) const;

 private:
  struct Flag {
    std::string name;
    std::string value;
  };
  const Flag* find(std::initializer_list<std::string_view> names) const;
  std::vector<Flag> flags_;
  std::vector<std::string> positionals_;
  Status status_;
};

}  // namespace wllm::cli
