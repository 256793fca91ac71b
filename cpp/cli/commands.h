// The CLI's subcommands. Each cmd_*.cpp defines one Command: its name, the
// usage that `wasm-llm help NAME` and `NAME --help` print, the flags it
// takes and what it runs. main.cpp dispatches on them and builds the
// overview from the same rows (help.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace wllm::cli {

class Args;

struct Command {
  const char* name;
  // The usage lines after "wasm-llm ": each starts with `name` (another form
  // of the command) or with spaces (a continuation, lined up under the form).
  const char* synopsis;
  const char* summary;  // what it does, a line or two
  // More for `help NAME` (what the values may be, defaults), or null: a
  // function, as some lists (types, shapes) are built at run time.
  std::string (*details)();
  bool reads_model;  // takes a model file (-m or IN): its help explains FILE
  std::vector<std::string_view> switches;  // flags without a value
  std::vector<std::string_view> options;   // flags with a value
  // Runs it on arguments checked against switches and options; an error is
  // printed by the caller as "error: <message>".
  Status (*run)(const Args& args);
};

extern const Command kGenerateCommand;
extern const Command kTokenizeCommand;
extern const Command kInfoCommand;
extern const Command kEmbedCommand;
extern const Command kQuantizeCommand;
extern const Command kConvertCommand;
extern const Command kSplitCommand;
extern const Command kMergeCommand;
extern const Command kBenchCommand;
extern const Command kSynthCommand;
extern const Command kLogitsCommand;

}  // namespace wllm::cli
