// wasm-llm: the native command-line interface. Each subcommand lives in its
// own cmd_*.cpp; this file only dispatches and prints usage.
#include <cstdio>
#include <cstring>

#include "cli/commands.h"

namespace wllm::cli {

int report_error(const char* message) {
  std::fprintf(stderr, "error: %s\n", message);
  return 1;
}

}  // namespace wllm::cli

namespace {

constexpr const char* kUsage =
    "usage: wasm-llm <command> [options]\n"
    "\n"
    "commands:\n"
    "  generate -m FILE -p TEXT [-n N] [--temp T] [--top-k K] [--top-p P] [--min-p M]\n"
    "           [--repeat-penalty R] [--repeat-last-n N] [--frequency-penalty F]\n"
    "           [--presence-penalty P] [--seed S] [--threads N] [--ctx N] [--stop TEXT]\n"
    "           [--json | --json-object | --json-schema FILE | --grammar FILE]\n"
    "           [--prompt-cache FILE]\n"
    "                      stream a continuation of TEXT to stdout; --json: the output is\n"
    "                      a JSON value (--json-object: an object; --json-schema: valid\n"
    "                      against the schema), --grammar: it matches the GBNF grammar;\n"
    "                      --prompt-cache: the state after the prompt is saved in FILE\n"
    "                      (created if missing), and a prompt starting with its tokens\n"
    "                      evaluates only the rest\n"
    "  tokenize -m FILE [--no-bos] [--special] (TEXT | --file F)\n"
    "                      print token ids as a JSON array\n"
    "  info -m FILE        architecture, shapes, tensor types, tokenizer, sizes\n"
    "  quantize IN.gguf OUT.gguf TYPE\n"
    "                      convert a model's weights to TYPE (e.g. q4_0, q8_0, q4_K_M)\n"
    "  bench -m FILE [-p PROMPT_TOKENS] [-n GEN_TOKENS] [-r REPETITIONS] [--threads N] [--bandwidth]\n"
    "                      print load time, prefill and decode speed, peak memory (JSON)\n"
    "  synth --shape NAME|DIMS --type TYPE --vocab VOCAB.gguf -o OUT.gguf\n"
    "                      write a random-weight model of a real shape\n"
    "  logits -m FILE --tokens ID,ID,... -o OUT.f32\n"
    "                      write every position's next-token logits (for parity tests)\n"
    "  embed -m FILE [--pooling mean|cls|last|rank] [--no-normalize] (TEXT... | --file F)\n"
    "                      print each text's embedding (JSON)\n"
    "  embed -m FILE --rank QUERY (DOCUMENT... | --file F)\n"
    "                      print each document's relevance to QUERY from a reranker (JSON)\n"
    "  convert IN [--tokenizer FILE] -o OUT.gguf\n"
    "                      write a llama2.c checkpoint (or a split model) as one GGUF file\n"
    "  split [--split-max-tensors N | --split-max-size SIZE] IN OUT\n"
    "                      write OUT-00001-of-0000N.gguf, ... as llama.cpp's gguf-split does\n"
    "  merge IN-00001-of-0000N.gguf OUT.gguf\n"
    "                      join the files of a split model into one GGUF file\n"
    "\n"
    "FILE (-m, IN): a GGUF file, the first file of a split model (NAME-00001-of-0000N.gguf;\n"
    "the others are found beside it), or a llama2.c checkpoint: its tokenizer is --tokenizer\n"
    "FILE, else tokenizer.bin or tok<VOCAB>.bin beside it, whichever fits.\n";

struct Command {
  const char* name;
  int (*run)(int argc, char** argv);
};

constexpr Command kCommands[] = {
    {"generate", wllm::cli::cmd_generate}, {"tokenize", wllm::cli::cmd_tokenize},
    {"info", wllm::cli::cmd_info},         {"quantize", wllm::cli::cmd_quantize},
    {"bench", wllm::cli::cmd_bench},       {"synth", wllm::cli::cmd_synth},
    {"logits", wllm::cli::cmd_logits},     {"embed", wllm::cli::cmd_embed},
    {"convert", wllm::cli::cmd_convert},   {"split", wllm::cli::cmd_split},
    {"merge", wllm::cli::cmd_merge},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  for (const Command& c : kCommands) {
    if (std::strcmp(argv[1], c.name) == 0) return c.run(argc - 2, argv + 2);
  }
  std::fprintf(stderr, "error: unknown command '%s'\n\n%s", argv[1], kUsage);
  return 2;
}
