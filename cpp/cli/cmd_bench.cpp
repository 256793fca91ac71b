// wasm-llm bench: load time, prefill and decode speed and peak memory of one
// model, printed as one JSON object (the benchmark script collects these).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/model_file.h"

namespace wllm::cli {
namespace {

using Clock = std::chrono::steady_clock;
double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// Peak resident memory of this process (Linux VmHWM), in bytes; 0 if unknown.
uint64_t peak_rss_bytes() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  uint64_t kib = 0;
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, "VmHWM:", 6) == 0) kib = std::strtoull(line + 6, nullptr, 10);
  }
  std::fclose(f);
  return kib * 1024;
}

Status run(int argc, char** argv) {
  Args args(argc, argv, {});
  WLLM_RETURN_IF_ERROR(args.status());
  WLLM_RETURN_IF_ERROR(args.check_known({"-m", "--model", "-p", "-n", "-t", "--threads", "-c", "--ctx"}));
  const std::string model = args.get_string({"-m", "--model"});
  if (model.empty()) return Status::error(ErrorCode::kInvalidArgument, "missing -m FILE");
  WLLM_ASSIGN_OR_RETURN(const int64_t n_prompt, args.get_int({"-p"}, 64));
  WLLM_ASSIGN_OR_RETURN(const int64_t n_gen, args.get_int({"-n"}, 128));
  if (n_prompt < 1 || n_gen < 1 || n_prompt + n_gen > (1 << 20)) {
    return Status::error(ErrorCode::kInvalidArgument, "-p and -n must be at least 1");
  }
  WLLM_ASSIGN_OR_RETURN(LoadOptions load, load_options_from(args));
  if (load.n_ctx == 0) load.n_ctx = static_cast<int>(n_prompt + n_gen);

  Engine engine;
  const auto t0 = Clock::now();
  WLLM_RETURN_IF_ERROR(load_model(model, load, &engine));
  const auto t1 = Clock::now();

  // Prefill: a fixed pseudo-random prompt (speed does not depend on the text).
  Transformer& m = engine.model();
  const int n_vocab = engine.config().n_vocab;
  uint32_t state = 12345;
  const float* logits = nullptr;
  for (int64_t i = 0; i < n_prompt; ++i) {
    state = state * 1664525u + 1013904223u;
    logits = m.forward(static_cast<int32_t>(state % n_vocab), static_cast<int>(i));
  }
  const auto t2 = Clock::now();
  // Decode: greedy, one token at a time.
  for (int64_t i = 0; i < n_gen; ++i) {
    int32_t best = 0;
    for (int v = 1; v < n_vocab; ++v) best = logits[v] > logits[best] ? v : best;
    logits = m.forward(best, static_cast<int>(n_prompt + i));
  }
  const auto t3 = Clock::now();

  const MemoryReport mem = engine.memory();
  std::printf(
      "{\"engine\":\"wasm-llm-native\",\"model\":\"%s\",\"threads\":%d,\"load_s\":%.4f,\"prefill_tokens\":%lld,"
      "\"prefill_tok_s\":%.2f,\"decode_tokens\":%lld,\"decode_tok_s\":%.2f,\"peak_rss_mib\":%.1f,"
      "\"weights_mib\":%.1f,\"kv_cache_mib\":%.1f,\"buffers_mib\":%.1f}\n",
      model.c_str(), engine.n_threads(), seconds(t0, t1), static_cast<long long>(n_prompt),
      n_prompt / seconds(t1, t2), static_cast<long long>(n_gen), n_gen / seconds(t2, t3),
      peak_rss_bytes() / 1048576.0, mem.weights / 1048576.0, mem.kv_cache / 1048576.0, mem.buffers / 1048576.0);
  return {};
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  const Status s = run(argc, argv);
  return s.ok() ? 0 : report_error(s.message().c_str());
}

}  // namespace wllm::cli
