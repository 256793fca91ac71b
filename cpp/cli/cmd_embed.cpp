// wasm-llm embed: prints the embedding of each TEXT (or of each line of
// --file) as JSON, {"pooling": NAME, "dimensions": N, "embeddings": [[...], ...]},
// or with --rank QUERY each TEXT's relevance to the query from a reranker,
// {"scores": [...]}. Floats are printed with 9 significant digits, enough
// to give back the exact f32 (the parity tests compare bits).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/help.h"
#include "cli/model_file.h"

namespace wllm::cli {
namespace {

void print_number(float v) {
  if (std::isfinite(v)) {
    std::printf("%.9g", v);
  } else {
    std::fputs("null", stdout);  // JSON has no NaN or infinity
  }
}

void print_numbers(const std::vector<float>& values) {
  std::putchar('[');
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) std::putchar(',');
    print_number(values[i]);
  }
  std::putchar(']');
}

// The texts: the positionals, or the lines of --file.
Result<std::vector<std::string>> texts_of(const Args& args) {
  const std::string file = args.get_string({"--file"});
  if (file.empty()) return args.positionals();
  if (!args.positionals().empty()) {
    return Status::error(ErrorCode::kInvalidArgument, "give the texts as arguments or with --file, not both");
  }
  WLLM_ASSIGN_OR_RETURN(const std::string content, read_file(file));
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < content.size()) {
    size_t end = content.find('\n', start);
    if (end == std::string::npos) end = content.size();
    lines.push_back(content.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

Status run(const Args& args) {
  const std::string model = args.get_string({"-m", "--model"});
  WLLM_ASSIGN_OR_RETURN(const std::vector<std::string> texts, texts_of(args));
  if (model.empty() || texts.empty()) {
    std::fputs(usage_text(kEmbedCommand).c_str(), stderr);
    return Status::error(ErrorCode::kInvalidArgument, "embed needs -m FILE and at least one text");
  }
  EmbedOptions options;
  options.normalize = !args.has("--no-normalize");
  if (args.has("--pooling")) {
    Pooling pooling;
    const std::string name = args.get_string({"--pooling"});
    if (!parse_pooling(name, &pooling) || pooling == Pooling::kNone) {
      return Status::error(ErrorCode::kInvalidArgument, "--pooling '%s' is not one of mean, cls, last, rank",
                           name.c_str());
    }
    options.pooling = pooling;
  }
  WLLM_ASSIGN_OR_RETURN(LoadOptions load, load_options_from(args));
  Engine engine;
  WLLM_RETURN_IF_ERROR(load_model(model, /*tokenizer_path=*/"", load, &engine));

  // The embedding or ranking alone is timed (the benchmark reads it).
  const auto start = std::chrono::steady_clock::now();
  const auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  double elapsed = 0;
  if (args.has("--rank")) {
    WLLM_ASSIGN_OR_RETURN(const std::vector<float> scores, engine.rank(args.get_string({"--rank"}), texts));
    elapsed = seconds();
    std::fputs("{\"scores\":", stdout);
    print_numbers(scores);
    std::fputs("}\n", stdout);
  } else {
    WLLM_ASSIGN_OR_RETURN(const std::vector<std::vector<float>> embeddings, engine.embed(texts, options));
    elapsed = seconds();
    std::printf("{\"pooling\":\"%s\",\"dimensions\":%d,\"embeddings\":[",
                pooling_name(engine.embedding_pooling(options.pooling)), engine.config().dim);
    for (size_t i = 0; i < embeddings.size(); ++i) {
      std::fputs(i ? ",\n" : "\n", stdout);
      print_numbers(embeddings[i]);
    }
    std::fputs("\n]}\n", stdout);
  }
  std::fprintf(stderr, "%zu texts in %.3f s\n", texts.size(), elapsed);
  return {};
}

}  // namespace

const Command kEmbedCommand = {
    .name = "embed",
    .synopsis = "embed -m FILE [--pooling mean|cls|last|rank] [--no-normalize] [--threads N] [--ctx N]\n"
                "      (TEXT... | --file F)\n"
                "embed -m FILE --rank QUERY (DOCUMENT... | --file F)",
    .summary = "print each text's embedding (JSON), or with --rank each document's\n"
               "relevance to QUERY from a reranker",
    .details = [] {
      return std::string(
          "--file F: one text per line. --pooling: the model's own unless given;\n"
          "--no-normalize: the pooled vectors as they are (default: unit length).\n");
    },
    .reads_model = true,
    .switches = {"--no-normalize"},
    .options = {"-m", "--model", "--pooling", "--rank", "--file", "-t", "--threads", "-c", "--ctx"},
    .run = run,
};

}  // namespace wllm::cli
