#include "cli/help.h"

#include <string_view>

namespace wllm::cli {
namespace {

constexpr const char* kModelFile =
    "FILE (-m, IN): a GGUF file, the first file of a split model (NAME-00001-of-0000N.gguf;\n"
    "the others are found beside it), or a llama2.c checkpoint: its tokenizer is --tokenizer\n"
    "FILE, else tokenizer.bin or tok<VOCAB>.bin beside it, whichever fits.\n";

constexpr size_t kSummaryColumn = 22;  // the overview's column of summaries

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  }
  return lines;
}

// `text`'s lines, each after `indent` spaces.
std::string indented(std::string_view text, size_t indent) {
  std::string out;
  for (const std::string_view line : lines_of(text)) out.append(indent, ' ').append(line).append("\n");
  return out;
}

}  // namespace

std::string overview_text(const std::vector<const Command*>& commands) {
  std::string out =
      "usage: wasm-llm <command> [options]\n"
      "       wasm-llm help <command>   (or <command> --help): its usage and options\n"
      "       wasm-llm --version\n"
      "\n"
      "commands:\n";
  for (const Command* c : commands) out += indented(c->synopsis, 2) + indented(c->summary, kSummaryColumn);
  return out + "\n" + kModelFile;
}

std::string usage_text(const Command& command) {
  constexpr std::string_view kFirst = "usage: wasm-llm ", kOther = "       wasm-llm ";
  std::string out;
  for (const std::string_view line : lines_of(command.synopsis)) {
    if (line.starts_with(' ')) {
      out.append(kFirst.size(), ' ');
    } else {
      out += out.empty() ? kFirst : kOther;
    }
    out.append(line).append("\n");
  }
  out += "\n" + std::string(command.summary) + "\n";
  if (command.details) out += "\n" + command.details();
  if (command.reads_model) out += std::string("\n") + kModelFile;
  return out;
}

}  // namespace wllm::cli
