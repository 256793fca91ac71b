// wasm-llm bench: load time, prefill and decode speed and peak memory of one
// model, printed as one JSON object (the benchmark script collects these).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/model_file.h"
#include "core/large_alloc.h"
#include "engine/bench.h"
#include "quant/kernels.h"
#include "runtime/thread_pool.h"

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

// `s` as a JSON string literal.
std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// Sums n words with two 32-byte vector accumulators (GCC vector extensions),
// so the adds keep up with the loads. Compiled twice on x86: for the baseline
// ISA and for AVX2, whose wider loads reach the bandwidth with fewer threads.
#define WLLM_SUM_RANGE_BODY                                \
  using Vec = uint64_t __attribute__((vector_size(32)));   \
  Vec v0 = {0, 0, 0, 0}, v1 = {0, 0, 0, 0};                \
  int64_t i = 0;                                           \
  for (; i + 8 <= n; i += 8) {                             \
    Vec x, y;                                              \
    std::memcpy(&x, p + i, sizeof x);                      \
    std::memcpy(&y, p + i + 4, sizeof y);                  \
    v0 += x;                                               \
    v1 += y;                                               \
  }                                                        \
  uint64_t s = 0;                                          \
  for (; i < n; ++i) s += p[i];                            \
  const Vec v = v0 + v1;                                   \
  return s + v[0] + v[1] + v[2] + v[3];

uint64_t sum_range_baseline(const uint64_t* p, int64_t n) { WLLM_SUM_RANGE_BODY }
#if defined(__x86_64__)
__attribute__((target("avx2"))) uint64_t sum_range_avx2(const uint64_t* p, int64_t n) { WLLM_SUM_RANGE_BODY }
#endif
#undef WLLM_SUM_RANGE_BODY

uint64_t sum_range(const uint64_t* p, int64_t n) {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2")) return sum_range_avx2(p, n);
#endif
  return sum_range_baseline(p, n);
}

// Memory read bandwidth with `pool`'s threads, in GB/s: the best of a few
// passes summing a buffer far larger than any cache, allocated as the
// weights are (huge pages natively: with 4 KiB pages it read less than decode
// itself streams, docs/performance.md). The benchmark prints it beside decode
// speed, which on large models is bound by it.
double read_bandwidth_gb_s(ThreadPool& pool) {
  constexpr size_t kBytes = size_t{512} << 20;
  const std::unique_ptr<uint8_t, decltype(&std::free)> memory(allocate_large(kBytes), &std::free);
  if (!memory) return 0;
  const std::span<uint64_t> buf(reinterpret_cast<uint64_t*>(memory.get()), kBytes / sizeof(uint64_t));
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = i;  // touch every page
  std::vector<uint64_t> sums(static_cast<size_t>(pool.size()) * 8);  // a cache line per thread
  double best = 0;
  for (int pass = 0; pass < 4; ++pass) {
    const auto t0 = Clock::now();
    pool.run([&](int ith, int nth) {
      int64_t begin, end;
      split_range(static_cast<int64_t>(buf.size()), ith, nth, &begin, &end);
      sums[static_cast<size_t>(ith) * 8] = sum_range(buf.data() + begin, end - begin);
    });
    const double s = seconds(t0, Clock::now());
    best = std::max(best, kBytes / s / 1e9);
  }
  uint64_t total = 0;
  for (uint64_t v : sums) total += v;
  if (total == 42) std::fputs("", stderr);  // keep the sums observable
  return best;
}

Status run(const Args& args) {
  const std::string model = args.get_string({"-m", "--model"});
  if (model.empty()) return Status::error(ErrorCode::kInvalidArgument, "missing -m FILE");
  WLLM_ASSIGN_OR_RETURN(const int64_t n_prompt, args.get_int({"-p"}, 64));
  WLLM_ASSIGN_OR_RETURN(const int64_t n_gen, args.get_int({"-n"}, 128));
  if (n_prompt < 1 || n_gen < 1 || n_prompt + n_gen > (1 << 20)) {
    return Status::error(ErrorCode::kInvalidArgument, "-p and -n must be at least 1");
  }
  // -r N: exactly N measured runs (e.g. many, for profiling: a short prefill
  // alone is too brief to sample); without it, as BenchRuns' defaults say.
  BenchRuns runs;
  if (args.has("-r") || args.has("--repetitions")) {
    WLLM_ASSIGN_OR_RETURN(const int64_t r, args.get_int({"-r", "--repetitions"}, 1));
    if (r < 1 || r > 10000) return Status::error(ErrorCode::kInvalidArgument, "-r must be between 1 and 10000");
    runs = BenchRuns{static_cast<int>(r), static_cast<int>(r), 0};
  }
  WLLM_ASSIGN_OR_RETURN(LoadOptions load, load_options_from(args));
  if (load.n_ctx == 0) load.n_ctx = static_cast<int>(n_prompt + n_gen);

  Engine engine;
  const auto t0 = Clock::now();
  WLLM_RETURN_IF_ERROR(load_model(model, args.get_string({"--tokenizer"}), load, &engine));
  const auto t1 = Clock::now();

  WLLM_ASSIGN_OR_RETURN(const BenchTimes times, run_bench(engine, n_prompt, n_gen, runs));

  const MemoryReport mem = engine.memory();
  const uint64_t peak_rss = peak_rss_bytes();  // before the bandwidth buffer
  std::string bandwidth;
  if (args.has("--bandwidth")) {
    ThreadPool pool(engine.n_threads());
    char buf[64];
    std::snprintf(buf, sizeof buf, ",\"read_gb_s\":%.2f", read_bandwidth_gb_s(pool));
    bandwidth = buf;
  }
  std::printf(
      "{\"engine\":\"wasm-llm\",\"kernels\":\"%s\",\"model\":%s,\"threads\":%d,\"load_s\":%.4f,\"prefill_tokens\":%lld,"
      "\"prefill_tok_s\":%.2f,\"decode_tokens\":%lld,\"decode_tok_s\":%.2f,\"runs\":%d,\"peak_rss_mib\":%.1f,"
      "\"weights_mib\":%.1f,\"kv_cache_mib\":%.1f,\"buffers_mib\":%.1f,\"repacked_tensors\":%d%s}\n",
      active_kernel_isa(), json_string(model).c_str(), engine.n_threads(), seconds(t0, t1), static_cast<long long>(n_prompt),
      n_prompt / times.prefill_seconds, static_cast<long long>(n_gen), n_gen / times.decode_seconds, times.runs,
      peak_rss / 1048576.0, mem.weights / 1048576.0, mem.kv_cache / 1048576.0, mem.buffers / 1048576.0,
      engine.repacked_tensors(), bandwidth.c_str());
  return {};
}

}  // namespace

const Command kBenchCommand = {
    .name = "bench",
    .synopsis = "bench -m FILE [-p PROMPT_TOKENS] [-n GEN_TOKENS] [-r REPETITIONS] [--threads N] [--bandwidth]",
    .summary = "print load time, prefill and decode speed, peak memory (JSON)",
    .details = [] {
      return std::string(
          "Defaults: a 64-token prompt, 128 generated tokens; the speeds are the median of the\n"
          "runs (-r: exactly that many). --bandwidth adds the memory read bandwidth its threads reach.\n");
    },
    .reads_model = true,
    .switches = {"--bandwidth"},
    .options = {"-m", "--model", "-p", "-n", "-r", "--repetitions", "-t", "--threads", "-c", "--ctx", "--tokenizer"},
    .run = run,
};

}  // namespace wllm::cli
