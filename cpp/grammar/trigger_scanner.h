// Where a lazy grammar (output_constraint.h) takes over: the scanner sees
// the output's bytes token by token and finds the first trigger in them —
// a trigger anywhere, or a start trigger at the start of the output after
// any whitespace. A trigger may be split over several tokens, so the scanner
// keeps the few bytes a trigger could have begun in.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace wllm {

class TriggerScanner {
 public:
  TriggerScanner(std::vector<std::string> triggers, std::vector<std::string> start_triggers);

  struct Match {
    std::string text;    // from the trigger's first byte to the end of the token
    size_t before = 0;   // how many bytes of `text` came before the token
  };
  // Whether the output so far plus `token` (its bytes) holds a trigger; if
  // so, *match says where. Nothing is recorded: push() the token if not.
  bool find(std::string_view token, Match* match);
  // Records a token in which no trigger completed.
  void push(std::string_view token);

 private:
  // Sets text_ to the output without its leading whitespace, if `token` were added.
  void start_text(std::string_view token);

  std::vector<std::string> triggers_;
  std::vector<std::string> start_triggers_;
  size_t keep_ = 0;       // the longest trigger's length - 1
  std::string tail_;      // the output's last keep_ bytes
  std::string start_;     // the output after leading whitespace, while a start trigger may still begin it
  bool at_start_ = true;  // start_ may still grow into a start trigger
  std::string text_;      // scratch, reused so that tokens allocate nothing
};

}  // namespace wllm
