// Kernel speed: how many multiply-adds per second (GMAC/s, weight elements
// times activations) each weight type's products reach on one thread, as the
// engine runs them: decode's matvec (rows x one activation) and the prompt's
// gemm (rows x 64 activations), in the file's layout and, where the active
// kernels have one, repacked. Random weights and activations; the matrix (a
// few MB) stays in the CPU's caches, so this measures the kernels, not memory.
//   kernel-bench [--types q4_0,q4_K] [--rows R] [--cols N] [--seconds S]
// Built natively (build/native/kernel-bench) and as wasm by bench/kernels.sh.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "quant/kernels.h"
#include "quant/repack.h"
#include "quant/traits.h"

using namespace wllm;

namespace {

constexpr int kGemmActs = 64;

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// The best rate of three windows of seconds / 3 each (the least disturbed on
// a shared machine): calls of `run` per second times macs per call, in G.
template <typename Run>
double best_rate(double seconds, double macs, Run run) {
  double best = 0;
  for (int window = 0; window < 3; ++window) {
    const double start = now();
    int calls = 0;
    do {
      run();
      ++calls;
    } while (now() - start < seconds / 3);
    best = std::max(best, calls * macs / (now() - start) / 1e9);
  }
  return best;
}

struct Options {
  std::vector<std::string> types;
  int rows = 2048;
  int64_t cols = 2048;
  double seconds = 1.5;
};

bool parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return false;
    const char* value = argv[++i];
    if (arg == "--types") {
      for (const char* p = value; *p;) {
        const char* comma = std::strchr(p, ',');
        o->types.emplace_back(p, comma ? comma - p : std::strlen(p));
        p = comma ? comma + 1 : p + std::strlen(p);
      }
    } else if (arg == "--rows") {
      o->rows = std::atoi(value);
    } else if (arg == "--cols") {
      o->cols = std::atoll(value);
    } else if (arg == "--seconds") {
      o->seconds = std::atof(value);
    } else {
      return false;
    }
  }
  return o->rows > 0 && o->rows % 64 == 0 && o->cols > 0 && o->seconds > 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, &o)) {
    std::fprintf(stderr, "usage: kernel-bench [--types q4_0,q4_K] [--rows R (a multiple of 64)] [--cols N] [--seconds S]\n");
    return 2;
  }
  size_t count = 0;
  const TypeTraits* all = all_type_traits(&count);
  if (o.types.empty()) {
    for (size_t i = 0; i < count; ++i) {
      if (all[i].weight_type) o.types.emplace_back(all[i].name);
    }
  }
  std::printf("kernels: %s, %d x %lld weights, one thread\n", active_kernel_isa(), o.rows, static_cast<long long>(o.cols));
  std::printf("%-6s %-10s %14s %18s\n", "type", "layout", "matvec GMAC/s", "gemm x64 GMAC/s");
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  for (const std::string& name : o.types) {
    const TypeTraits* found = find_type_traits_by_name(name.c_str());
    if (!found || !found->weight_type) {
      std::fprintf(stderr, "kernel-bench: unknown weight type %s\n", name.c_str());
      return 2;
    }
    const TypeTraits& t = *found;
    const TypeTraits& act = type_traits(t.act_type);
    if (o.cols % t.block_size != 0) {
      std::printf("%-6s (--cols is not a multiple of its %lld-element block)\n", t.name, static_cast<long long>(t.block_size));
      continue;
    }
    const int64_t row_size = row_bytes(t, o.cols), act_size = row_bytes(act, o.cols);
    std::vector<uint8_t> weights(static_cast<size_t>(row_size * o.rows)), acts(static_cast<size_t>(act_size * kGemmActs));
    std::vector<float> row(static_cast<size_t>(o.cols));
    for (int r = 0; r < o.rows; ++r) {
      // Spread as synth's (and real models') weights: 0.2% of f16 values are
      // then subnormal halves, which the wasm f16 kernels pay for.
      for (float& v : row) v = 0.022f * normal(rng);
      t.from_float(row.data(), weights.data() + r * row_size, o.cols);
    }
    for (int a = 0; a < kGemmActs; ++a) {
      for (float& v : row) v = normal(rng);
      act.from_float(row.data(), acts.data() + a * act_size, o.cols);
    }
    // The file's layout, then the repacked one where the active kernels have it.
    const RepackedType* repacked_type = repacked_type_for(t.type);
    for (const RepackedType* repacked : {static_cast<const RepackedType*>(nullptr), repacked_type}) {
      if (repacked) repacked->repack(weights.data(), o.cols, o.rows);
      std::vector<float> out(static_cast<size_t>(o.rows) * kGemmActs);
      const double macs = static_cast<double>(o.rows) * o.cols;
      const double matvec = best_rate(o.seconds / 2, macs, [&] {
        if (repacked) repacked->matvec(o.cols, weights.data(), row_size, o.rows, acts.data(), out.data());
        else matvec_rows(t, o.cols, weights.data(), row_size, o.rows, acts.data(), out.data());
      });
      const double gemm_rate = best_rate(o.seconds / 2, macs * kGemmActs, [&] {
        if (repacked) {
          repacked->gemm(o.cols, weights.data(), row_size, o.rows, acts.data(), act_size, kGemmActs, out.data(), o.rows);
        } else {
          gemm(t, o.cols, weights.data(), row_size, o.rows, acts.data(), act_size, kGemmActs, out.data(), o.rows);
        }
      });
      std::printf("%-6s %-10s %14.1f %18.1f\n", t.name, repacked ? repacked->name : "file", matvec, gemm_rate);
      if (!repacked_type) break;
    }
  }
  return 0;
}
