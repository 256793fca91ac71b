// wasm-llm: the native command-line interface. Each subcommand lives in its
// own cmd_*.cpp as a Command (commands.h); this file dispatches to them and
// answers --help, help NAME and --version.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/help.h"
#include "cli/name_meant.h"

#ifndef WLLM_VERSION
#error "WLLM_VERSION: CMakeLists.txt defines it as package.json's version"
#endif

namespace wllm::cli {
namespace {

// In the order the overview lists them.
const std::vector<const Command*> kCommands = {
    &kGenerateCommand, &kTokenizeCommand, &kInfoCommand,  &kQuantizeCommand, &kBenchCommand, &kSynthCommand,
    &kLogitsCommand,   &kEmbedCommand,    &kConvertCommand, &kSplitCommand,  &kMergeCommand,
};

// Exit codes: 1 for a command that failed, 2 for a command line that names none.
constexpr int kFailed = 1, kBadCommandLine = 2;

bool is_help(std::string_view arg) { return arg == "--help" || arg == "-h"; }
bool is_version(std::string_view arg) { return arg == "--version" || arg == "-V"; }

int report_error(const std::string& message, int code) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return code;
}

const Command* find_command(std::string_view name) {
  for (const Command* c : kCommands) {
    if (name == c->name) return c;
  }
  return nullptr;
}

// "unknown command 'X' (did you mean 'Y'?); the commands: ...".
std::string unknown_command(std::string_view name) {
  std::vector<std::string_view> names;
  std::string list;
  for (const Command* c : kCommands) {
    names.emplace_back(c->name);
    list += (list.empty() ? "" : ", ") + std::string(c->name);
  }
  const std::string meant = name_meant(name, names);
  return "unknown command '" + std::string(name) + "'" + (meant.empty() ? "" : " (did you mean '" + meant + "'?)") +
         "; the commands: " + list + " (wasm-llm --help describes them)";
}

int print(const std::string& text) {
  std::fputs(text.c_str(), stdout);
  return std::fflush(stdout) == 0 ? 0 : report_error("cannot write to stdout", kFailed);
}

// `wasm-llm help [NAME]`.
int help(int argc, char** argv) {
  if (argc == 0) return print(overview_text(kCommands));
  if (argc > 1) return report_error("help takes one command name", kBadCommandLine);
  const Command* c = find_command(argv[0]);
  return c ? print(usage_text(*c)) : report_error(unknown_command(argv[0]), kBadCommandLine);
}

// `wasm-llm NAME ARGS...`: --help (-h) anywhere a flag may stand prints its
// usage instead; any other flag must be one it takes.
int run(const Command& command, int argc, char** argv) {
  std::vector<std::string_view> switches = command.switches;
  switches.insert(switches.end(), {"--help", "-h"});
  const Args args(argc, argv, switches);
  if (args.has("--help") || args.has("-h")) return print(usage_text(command));
  std::vector<std::string_view> known = switches;
  known.insert(known.end(), command.options.begin(), command.options.end());
  Status s = args.check_known(known);
  if (s.ok()) s = args.status();
  if (s.ok()) s = command.run(args);
  return s.ok() ? 0 : report_error(s.message(), kFailed);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(overview_text(kCommands).c_str(), stderr);
    return kBadCommandLine;
  }
  const std::string_view first = argv[1];
  if (is_help(first)) return print(overview_text(kCommands));
  if (is_version(first)) return print(WLLM_VERSION "\n");
  if (first == "help") return help(argc - 2, argv + 2);
  if (const Command* c = find_command(first)) return run(*c, argc - 2, argv + 2);
  if (first.starts_with('-')) {
    const std::string meant = flag_meant(first, {"--help", "-h", "--version", "-V"});
    return report_error("unknown option '" + std::string(first) + "'" +
                            (meant.empty() ? "" : " (did you mean '" + meant + "'?)") +
                            "; wasm-llm --help lists the commands",
                        kBadCommandLine);
  }
  return report_error(unknown_command(first), kBadCommandLine);
}

}  // namespace
}  // namespace wllm::cli

int main(int argc, char** argv) { return wllm::cli::main(argc, argv); }
