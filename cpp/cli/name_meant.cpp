#include "cli/name_meant.h"

#include <algorithm>
#include <cctype>

namespace wllm::cli {
namespace {

// Lower case without '-' and '_': "--Top_K" and "--top-k" are both "topk".
std::string normalize(std::string_view name) {
  std::string out;
  for (const char c : name) {
    if (c != '-' && c != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// Other tools' names for our flags, by normalized name; the first of a row's
// flags that the command takes is the one meant.
struct OtherName {
  const char* name;
  std::vector<std::string_view> flags;
};
const std::vector<OtherName>& other_names() {
  static const std::vector<OtherName> table = {
      {"maxtokens", {"-n"}},        {"maxnewtokens", {"-n"}},      {"ntokens", {"-n"}},
      {"numpredict", {"-n"}},
      {"npredict", {"-n"}},         {"ngen", {"-n"}},       {"temperature", {"--temp"}},   {"ctxsize", {"--ctx", "-c"}},
      {"contextsize", {"--ctx", "-c"}}, {"contextlength", {"--ctx", "-c"}}, {"nctx", {"--ctx", "-c"}},
      {"context", {"--ctx", "-c"}}, {"thread", {"--threads", "-t"}}, {"nthreads", {"--threads", "-t"}},
      {"numthreads", {"--threads", "-t"}}, {"threadcount", {"--threads", "-t"}},
      {"repetitionpenalty", {"--repeat-penalty"}}, {"penaltylastn", {"--repeat-last-n"}},
      {"reverseprompt", {"--stop"}}, {"stopstrings", {"--stop"}}, {"modelpath", {"--model", "-m"}},
      {"modelfile", {"--model", "-m"}}, {"out", {"--output", "-o"}}, {"outfile", {"--output", "-o"}},
      {"schema", {"--json-schema"}}, {"grammarfile", {"--grammar"}}, {"promptcachefile", {"--prompt-cache"}},
      {"promptfile", {"--file"}}, {"vocabfile", {"--vocab"}}, {"quant", {"--type"}}, {"randomseed", {"--seed"}},
  };
  return table;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// A name to compare with, and the flag or command it stands for.
struct Candidate {
  std::string key;
  std::string_view name;
};

// The name of the candidate whose key is closest to `wanted`, within the
// typo allowance: none for names of one or two letters (any -x is "close"
// to -n), one letter up to five letters, two beyond.
std::string closest(const std::string& wanted, const std::vector<Candidate>& candidates) {
  const size_t allowed = wanted.size() <= 2 ? 0 : wanted.size() <= 5 ? 1 : 2;
  std::string best;
  size_t best_distance = allowed + 1;
  for (const Candidate& c : candidates) {
    const size_t d = edit_distance(wanted, c.key);
    if (d < best_distance) {
      best = c.name;
      best_distance = d;
    }
  }
  return best;
}

}  // namespace

std::string flag_meant(std::string_view given, const std::vector<std::string_view>& known) {
  // The flags by their normalized names, then the other tools' names of the
  // flags taken here (so a typo of one, --temprature, is found too).
  std::vector<Candidate> candidates;
  for (const std::string_view flag : known) candidates.push_back({normalize(flag), flag});
  for (const OtherName& other : other_names()) {
    const auto taken = std::find_first_of(other.flags.begin(), other.flags.end(), known.begin(), known.end());
    if (taken != other.flags.end()) candidates.push_back({other.name, *taken});
  }
  return closest(normalize(given), candidates);
}

std::string name_meant(std::string_view given, const std::vector<std::string_view>& known) {
  std::vector<Candidate> candidates;
  for (const std::string_view name : known) candidates.push_back({std::string(name), name});
  return closest(std::string(given), candidates);
}

}  // namespace wllm::cli
