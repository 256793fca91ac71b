// wasm-llm generate: streams a continuation of the prompt to stdout and a
// one-line summary to stderr. --prompt-cache FILE, as llama.cpp's: the
// state after the prompt is saved there (created if missing), and a later
// prompt that starts with the same tokens evaluates only the rest.
#include <cstdio>
#include <random>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/model_file.h"
#include "cli/state_file_io.h"
#include "core/file_io.h"

namespace wllm::cli {
namespace {

// --json, --json-object, --json-schema FILE or --grammar FILE (at most one).
Result<OutputConstraint> constraint_from(const Args& args) {
  OutputConstraint c;
  int given = 0;
  if (args.has("--json")) {
    c.kind = OutputConstraint::Kind::kJson;
    ++given;
  }
  if (args.has("--json-object")) {
    c.kind = OutputConstraint::Kind::kJsonObject;
    ++given;
  }
  for (const char* flag : {"--json-schema", "--grammar"}) {
    if (!args.has(flag)) continue;
    const std::string path = args.get_string({flag});
    Result<std::string> text = read_file(path);
    if (!text.ok()) return text.status();
    c.kind = std::string_view(flag) == "--grammar" ? OutputConstraint::Kind::kGrammar : OutputConstraint::Kind::kJsonSchema;
    c.text = std::move(*text);
    ++given;
  }
  if (given > 1) {
    return Status::error(ErrorCode::kInvalidArgument, "--json, --json-object, --json-schema and --grammar exclude each other");
  }
  return c;
}

// Without --seed, a fresh seed per run, as llama.cpp's CLI draws one: the
// same command samples another text each time (the summary prints the seed,
// so --seed gives that text again).
Result<uint64_t> seed_from(const Args& args) {
  if (args.has("--seed")) {
    WLLM_ASSIGN_OR_RETURN(const int64_t seed, args.get_int({"--seed"}, 0));
    constexpr int64_t kMaxSeed = (int64_t{1} << 53) - 1;  // the largest integer a JS number holds exactly
    if (seed < 0 || seed > kMaxSeed) {
      return Status::error(ErrorCode::kInvalidArgument, "--seed must be 0 to %lld", static_cast<long long>(kMaxSeed));
    }
    return static_cast<uint64_t>(seed);
  }
  std::random_device entropy;
  return static_cast<uint64_t>(entropy());
}

std::string details() {
  const SamplerParams d;
  return str_printf(
      "options:\n"
      "  -n, --n-predict N     tokens to generate (default 128; 0: only evaluate the prompt)\n"
      "  --temp T              temperature (default %g; 0: greedy, the most likely token)\n"
      "  --top-k K             sample from the K most likely tokens (default %d; 0: all)\n"
      "  --top-p P             ... whose probabilities add up to P (default %g; 1: all)\n"
      "  --min-p M             ... at least M times the likeliest one's (default %g; 0: all)\n"
      "  --repeat-penalty R    penalize the logits of recent tokens by R (default %g: none)\n"
      "  --repeat-last-n N     the recent tokens the penalties look at (default %d)\n"
      "  --frequency-penalty F, --presence-penalty P\n"
      "                        subtract F times a recent token's count, P if it occurs (default 0)\n"
      "  --seed S              the sampler's seed (default: a random one, printed in the summary)\n"
      "  -t, --threads N       threads (default: the machine's cores, at most 8)\n"
      "  -c, --ctx N           context positions (default: min(the model's, 4096))\n"
      "  --stop TEXT           stop once the output contains TEXT\n"
      "  --no-special          control-token text in the prompt stays text\n"
      "  --tokenizer FILE      a llama2.c checkpoint's tokenizer\n"
      "\n"
      "The prompt and its continuation go to stdout, a summary to stderr: tokens, of them\n"
      "cached, tok/s, why it stopped, threads and the seed.\n",
      d.temperature, d.top_k, d.top_p, d.min_p, d.repeat_penalty, d.penalty_last_n);
}

Status run(const Args& args) {
  const std::string model = args.get_string({"-m", "--model"});
  if (model.empty()) return Status::error(ErrorCode::kInvalidArgument, "missing -m FILE");
  if (!args.has("-p") && !args.has("--prompt")) return Status::error(ErrorCode::kInvalidArgument, "missing -p TEXT");
  const std::string prompt = args.get_string({"-p", "--prompt"});

  GenerateOptions g;
  SamplerParams& s = g.sampling;
  WLLM_ASSIGN_OR_RETURN(const int64_t n, args.get_int({"-n", "--n-predict"}, 128));
  WLLM_ASSIGN_OR_RETURN(const double temp, args.get_double({"--temp"}, s.temperature));
  WLLM_ASSIGN_OR_RETURN(const int64_t top_k, args.get_int({"--top-k"}, s.top_k));
  WLLM_ASSIGN_OR_RETURN(const double top_p, args.get_double({"--top-p"}, s.top_p));
  WLLM_ASSIGN_OR_RETURN(const double min_p, args.get_double({"--min-p"}, s.min_p));
  WLLM_ASSIGN_OR_RETURN(const double repeat, args.get_double({"--repeat-penalty"}, s.repeat_penalty));
  WLLM_ASSIGN_OR_RETURN(const int64_t last_n, args.get_int({"--repeat-last-n"}, s.penalty_last_n));
  WLLM_ASSIGN_OR_RETURN(const double freq, args.get_double({"--frequency-penalty"}, s.frequency_penalty));
  WLLM_ASSIGN_OR_RETURN(const double presence, args.get_double({"--presence-penalty"}, s.presence_penalty));
  WLLM_ASSIGN_OR_RETURN(const uint64_t seed, seed_from(args));
  // The JS API's ranges (js/option-table.js; tests/js/options.test.mjs reads these lines).
  if (n < 0 || n > INT32_MAX) return Status::error(ErrorCode::kInvalidArgument, "-n must be 0 to %d", INT32_MAX);
  if (top_k < INT32_MIN || top_k > INT32_MAX) {
    return Status::error(ErrorCode::kInvalidArgument, "--top-k must be %d to %d (0 or less: off)", INT32_MIN, INT32_MAX);
  }
  if (last_n < 0 || last_n > Sampler::kMaxPenaltyLastN) {
    return Status::error(ErrorCode::kInvalidArgument, "--repeat-last-n must be 0 to %d", Sampler::kMaxPenaltyLastN);
  }
  g.max_tokens = static_cast<int>(n);
  s.temperature = static_cast<float>(temp);
  s.top_k = static_cast<int>(top_k);
  s.top_p = static_cast<float>(top_p);
  s.min_p = static_cast<float>(min_p);
  s.repeat_penalty = static_cast<float>(repeat);
  s.penalty_last_n = static_cast<int>(last_n);
  s.frequency_penalty = static_cast<float>(freq);
  s.presence_penalty = static_cast<float>(presence);
  s.seed = seed;
  g.parse_special = !args.has("--no-special");
  const std::string stop = args.get_string({"--stop"});
  if (!stop.empty()) g.stop.push_back(stop);
  WLLM_ASSIGN_OR_RETURN(g.constraint, constraint_from(args));

  WLLM_ASSIGN_OR_RETURN(const LoadOptions load, load_options_from(args));
  Engine engine;
  WLLM_RETURN_IF_ERROR(load_model(model, args.get_string({"--tokenizer"}), load, &engine));
  const std::string prompt_cache = args.get_string({"--prompt-cache"});
  std::vector<int32_t> cached;  // the tokens of the prompt cache
  if (!prompt_cache.empty()) {
    WLLM_RETURN_IF_ERROR(load_state_file(prompt_cache, &engine).status());
    cached = engine.model().sequence();
  }
  // Once the prompt is in, the cache file gets its state, unless it has it already.
  const auto save_prompt_cache = [&]() -> Status {
    if (prompt_cache.empty() || engine.model().sequence() == cached) return {};
    return save_state_file(prompt_cache, &engine);
  };

  write_fully(stdout, prompt.data(), prompt.size());
  std::fflush(stdout);
  const auto print = [](std::string_view text) {
    write_fully(stdout, text.data(), text.size());
    std::fflush(stdout);
  };
  WLLM_ASSIGN_OR_RETURN(const GenerateStats st, engine.generate(prompt, g, print, nullptr, save_prompt_cache));
  std::fputc('\n', stdout);
  std::fflush(stdout);  // before the summary on stderr, which is unbuffered
  const auto rate = [](int tokens, double seconds) { return seconds > 0 ? tokens / seconds : 0.0; };
  std::string grammar;
  if (g.constraint.active()) {
    // Masking's share of decoding: per sampled token (the last one, an end
    // of generation, is sampled but not counted as generated).
    const int sampled = st.generated_tokens + (st.stop_reason == StopReason::kEndOfGeneration ? 1 : 0);
    const double per_token = sampled > 0 ? st.grammar_seconds / sampled : 0.0;
    const double model = st.decode_seconds - st.grammar_seconds;
    const ConstraintCache& cache = engine.constraints();
    grammar = str_printf(" | grammar %.3f ms/token (%.1f%% of decode; token trie %.1f MiB built in %.0f ms, caches %.1f MiB)",
                         per_token * 1e3, model > 0 ? 100.0 * st.grammar_seconds / model : 0.0,
                         cache.trie_bytes() / 1048576.0, cache.trie_build_seconds() * 1e3,
                         (cache.memory_bytes() - cache.trie_bytes()) / 1048576.0);
  }
  std::fprintf(stderr,
               "prompt %d tokens (%d cached), %.1f tok/s | generated %d tokens, %.1f tok/s | stop: %s | threads %d | "
               "seed %llu%s\n",
               st.prompt_tokens, st.cached_tokens, rate(st.prompt_tokens - st.cached_tokens, st.prefill_seconds),
               st.generated_tokens,
               rate(st.generated_tokens, st.decode_seconds), stop_reason_name(st.stop_reason), engine.n_threads(),
               static_cast<unsigned long long>(seed), grammar.c_str());
  return {};
}

}  // namespace

const Command kGenerateCommand = {
    .name = "generate",
    .synopsis = "generate -m FILE -p TEXT [-n N] [--temp T] [--top-k K] [--top-p P] [--min-p M]\n"
                "         [--repeat-penalty R] [--repeat-last-n N] [--frequency-penalty F]\n"
                "         [--presence-penalty P] [--seed S] [--threads N] [--ctx N] [--stop TEXT]\n"
                "         [--no-special] [--json | --json-object | --json-schema FILE | --grammar FILE]\n"
                "         [--prompt-cache FILE]",
    .summary = "stream a continuation of TEXT to stdout; --json: the output is\n"
               "a JSON value (--json-object: an object; --json-schema: valid\n"
               "against the schema), --grammar: it matches the GBNF grammar;\n"
               "--prompt-cache: the state after the prompt is saved in FILE\n"
               "(created if missing), and a prompt starting with its tokens\n"
               "evaluates only the rest",
    .details = details,
    .reads_model = true,
    .switches = {"--no-special", "--json", "--json-object"},
    .options = {"-m", "--model", "-p", "--prompt", "-n", "--n-predict", "--temp", "--top-k", "--top-p", "--min-p",
                "--repeat-penalty", "--repeat-last-n", "--frequency-penalty", "--presence-penalty", "--seed", "-t",
                "--threads", "-c", "--ctx", "--stop", "--json-schema", "--grammar", "--tokenizer", "--prompt-cache"},
    .run = run,
};

}  // namespace wllm::cli
