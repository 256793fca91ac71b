// Runs the built `wasm-llm` binary (it sits next to the test executables)
// from a test, with scratch files that the test removes when it ends.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace wllm::testing {

inline std::string cli_path() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  std::string self(buf, static_cast<size_t>(n));
  return self.substr(0, self.rfind('/') + 1) + "wasm-llm";
}

inline std::string shared_models() { return WLLM_SHARED_MODELS; }

// Scratch files of the running test (remove_scratch_files() deletes them).
inline std::vector<std::string>& scratch_files() {
  static std::vector<std::string> files;
  return files;
}

inline void remove_scratch_files() {
  for (const std::string& path : scratch_files()) std::remove(path.c_str());
  scratch_files().clear();
}

// CTest runs each test case as its own process, in parallel: the pid keeps
// their scratch files apart.
inline std::string scratch_file(const std::string& name) {
  std::string path = ::testing::TempDir() + "wllm_test_" + std::to_string(getpid()) + "_" + name;
  scratch_files().push_back(path);
  return path;
}

inline std::vector<uint8_t> read_file_bytes(const std::string& path) {
  std::vector<uint8_t> out;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return out;
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.insert(out.end(), buf, buf + n);
  std::fclose(f);
  return out;
}

struct CliResult {
  int exit_code;
  std::string err;  // stderr
  std::string out;  // stdout
};

// Runs `wasm-llm ARGS`, capturing stdout and stderr.
inline CliResult run_cli(const std::string& args) {
  const std::string err_path = scratch_file("stderr.txt"), out_path = scratch_file("stdout.txt");
  const std::string cmd = cli_path() + " " + args + " >" + out_path + " 2>" + err_path;
  const int status = std::system(cmd.c_str());
  const std::vector<uint8_t> err = read_file_bytes(err_path), out = read_file_bytes(out_path);
  std::remove(err_path.c_str());
  std::remove(out_path.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, std::string(err.begin(), err.end()),
          std::string(out.begin(), out.end())};
}

}  // namespace wllm::testing
