#include "grammar/trigger_scanner.h"

#include <algorithm>

namespace wllm {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

TriggerScanner::TriggerScanner(std::vector<std::string> triggers, std::vector<std::string> start_triggers)
    : triggers_(std::move(triggers)), start_triggers_(std::move(start_triggers)) {
  std::erase(triggers_, std::string());
  std::erase(start_triggers_, std::string());
  for (const std::string& t : triggers_) keep_ = std::max(keep_, t.size() - 1);
  at_start_ = !start_triggers_.empty();
}

void TriggerScanner::start_text(std::string_view token) {
  size_t skip = 0;
  if (start_.empty()) {
    while (skip < token.size() && is_space(token[skip])) ++skip;
  }
  text_.assign(start_);
  text_.append(token.substr(skip));
}

bool TriggerScanner::find(std::string_view token, Match* match) {
  if (at_start_) {
    start_text(token);
    for (const std::string& t : start_triggers_) {
      if (text_.compare(0, t.size(), t) == 0) {
        *match = {text_, start_.size()};
        return true;
      }
    }
  }
  if (triggers_.empty()) return false;
  text_.assign(tail_);
  text_.append(token);
  size_t first = std::string::npos;
  for (const std::string& t : triggers_) first = std::min(first, text_.find(t));
  if (first == std::string::npos) return false;
  *match = {text_.substr(first), first < tail_.size() ? tail_.size() - first : 0};
  return true;
}

void TriggerScanner::push(std::string_view token) {
  if (at_start_) {
    start_text(token);
    start_.swap(text_);
    // Still a start trigger's beginning (or only whitespace so far)?
    at_start_ = std::any_of(start_triggers_.begin(), start_triggers_.end(), [&](const std::string& t) {
      return t.compare(0, std::min(t.size(), start_.size()), start_, 0, std::min(t.size(), start_.size())) == 0;
    });
    if (!at_start_) start_.clear();
  }
  tail_.append(token);
  if (tail_.size() > keep_) tail_.erase(0, tail_.size() - keep_);
}

}  // namespace wllm
