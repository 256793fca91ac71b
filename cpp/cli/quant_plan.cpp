#include "cli/quant_plan.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace wllm::cli {
namespace {

// LLAMA_FTYPE_* numbers from llama.h. Plain q3_K/q4_K/q5_K get the number of
// the matching "_S" type: those are "mostly" that type. (llama-quantize reads
// "Q4_K" as an alias of Q4_K_M; here the plain name means no layer rules, so
// every type's kernel is exercised on every kind of weight.)
constexpr QuantScheme kSchemes[] = {
    {"f32", TensorType::kF32, 0, QuantMix::kUniform},
    {"f16", TensorType::kF16, 1, QuantMix::kUniform},
    {"bf16", TensorType::kBF16, 32, QuantMix::kUniform},
    {"q4_0", TensorType::kQ4_0, 2, QuantMix::kPlain},
    {"q4_1", TensorType::kQ4_1, 3, QuantMix::kPlain},
    {"q5_0", TensorType::kQ5_0, 8, QuantMix::kPlain},
    {"q5_1", TensorType::kQ5_1, 9, QuantMix::kPlain},
    {"q8_0", TensorType::kQ8_0, 7, QuantMix::kPlain},
    {"q2_K", TensorType::kQ2_K, 10, QuantMix::kPlain},
    {"q3_K", TensorType::kQ3_K, 11, QuantMix::kPlain},
    {"q4_K", TensorType::kQ4_K, 14, QuantMix::kPlain},
    {"q5_K", TensorType::kQ5_K, 16, QuantMix::kPlain},
    {"q6_K", TensorType::kQ6_K, 18, QuantMix::kPlain},
    // llama.cpp's Q3_K_S and Q5_K_S add no layer rules to the output rule.
    {"q3_K_S", TensorType::kQ3_K, 11, QuantMix::kPlain},
    {"q3_K_M", TensorType::kQ3_K, 12, QuantMix::kQ3_K_M},
    {"q3_K_L", TensorType::kQ3_K, 13, QuantMix::kQ3_K_L},
    {"q4_K_S", TensorType::kQ4_K, 14, QuantMix::kQ4_K_S},
    {"q4_K_M", TensorType::kQ4_K, 15, QuantMix::kQ4_K_M},
    {"q5_K_S", TensorType::kQ5_K, 16, QuantMix::kPlain},
    {"q5_K_M", TensorType::kQ5_K, 17, QuantMix::kQ5_K_M},
};

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool is_quantized(TensorType t) { return type_traits(t).block_size > 1; }

// llama.cpp's use_more_bits: the first and last eighth of the layers and
// every third one in between.
bool use_more_bits(int i_layer, int n_layers) {
  return i_layer < n_layers / 8 || i_layer >= 7 * n_layers / 8 || (i_layer - n_layers / 8) % 3 == 2;
}

// llama.cpp's tensor_type_fallback for a row length the type cannot hold.
TensorType fallback_type(TensorType t, int64_t ne0) {
  TensorType f;
  switch (t) {
    // llama.cpp picked iq4_nl here until recently (it now picks q4_0 too);
    // this engine has no iq4_nl, so q4_0.
    case TensorType::kQ2_K: case TensorType::kQ3_K: f = TensorType::kQ4_0; break;
    case TensorType::kQ4_K: f = TensorType::kQ5_0; break;
    case TensorType::kQ5_K: f = TensorType::kQ5_1; break;
    case TensorType::kQ6_K: f = TensorType::kQ8_0; break;
    // llama.cpp refuses to quantize these; f16 (its last resort) keeps tiny
    // models such as stories260K (ffn 172) quantizable.
    default: f = TensorType::kF16; break;
  }
  if (ne0 % type_traits(f).block_size != 0) f = TensorType::kF16;
  return f;
}

}  // namespace

const QuantScheme* find_quant_scheme(std::string_view name) {
  for (const QuantScheme& s : kSchemes) {
    if (iequals(s.name, name)) return &s;
  }
  return nullptr;
}

std::string quant_scheme_names() {
  std::string out;
  for (const QuantScheme& s : kSchemes) {
    if (!out.empty()) out += ", ";
    out += s.name;
  }
  return out;
}

QuantPlanner::QuantPlanner(const QuantScheme& scheme, bool pure, std::span<const std::string> names)
    : scheme_(scheme), pure_(pure) {
  for (const std::string& n : names) {
    if (contains(n, "attn_v.weight") || contains(n, "attn_qkv.weight") || contains(n, "attn_kv_b.weight")) {
      ++n_attn_v_;
    }
    if (contains(n, "ffn_down")) ++n_ffn_down_;
    if (n == "output.weight") has_output_ = true;
  }
}

TensorChoice QuantPlanner::choose(std::string_view name, int n_dims, int64_t ne0) {
  // llama.cpp's tensor_allows_quantization, for the tensors of the supported
  // architectures: only 2-D+ "*weight" tensors that are not norms, learned
  // positions (gpt2, bert), token types (encoders) or convolution taps
  // (lfm2). The rest stays f32 (the engine reads norms, biases, rope factors
  // and taps as f32).
  const bool quantizable = n_dims >= 2 && ends_with(name, "weight") && !contains(name, "_norm.weight") &&
                           !contains(name, "ffn_gate_inp.weight") && name != "position_embd.weight" &&
                           name != "token_types.weight" && !contains(name, "shortconv.conv.weight");
  if (!quantizable) return {TensorType::kF32, TensorType::kF32, false};

  const TensorType base = scheme_.base;
  TensorType t = base;
  const bool rules = !pure_ && scheme_.mix != QuantMix::kUniform && is_quantized(base);
  if (rules) {
    const QuantMix mix = scheme_.mix;
    const bool is_output = name == "output.weight" || (!has_output_ && name == "token_embd.weight");
    if (is_output) {
      // Tied embeddings: token_embd doubles as the output, so it is treated as one.
      if (ne0 % type_traits(base).block_size != 0) {
        t = TensorType::kQ8_0;
      } else if (base != TensorType::kQ8_0) {
        t = TensorType::kQ6_K;
      }
    } else if (contains(name, "attn_v.weight") || contains(name, "attn_qkv.weight") ||
               contains(name, "attn_kv_b.weight")) {
      if (mix == QuantMix::kQ3_K_M) {
        t = i_attn_v_ < 2 ? TensorType::kQ5_K : TensorType::kQ4_K;
      } else if (mix == QuantMix::kQ3_K_L) {
        t = TensorType::kQ5_K;
      } else if ((mix == QuantMix::kQ4_K_M || mix == QuantMix::kQ5_K_M) && use_more_bits(i_attn_v_, n_attn_v_)) {
        t = TensorType::kQ6_K;
      } else if (mix == QuantMix::kQ4_K_S && i_attn_v_ < 4) {
        t = TensorType::kQ5_K;
      }
      ++i_attn_v_;
    } else if (contains(name, "ffn_down")) {
      const int i = i_ffn_down_, n = n_ffn_down_;
      if (mix == QuantMix::kQ3_K_M) {
        t = i < n / 16 ? TensorType::kQ5_K : TensorType::kQ4_K;  // non-Falcon arches
      } else if (mix == QuantMix::kQ3_K_L) {
        t = TensorType::kQ5_K;
      } else if ((mix == QuantMix::kQ4_K_M || mix == QuantMix::kQ5_K_M) && use_more_bits(i, n)) {
        t = TensorType::kQ6_K;
      } else if (mix == QuantMix::kQ4_K_S && i < n / 8) {
        t = TensorType::kQ5_K;
      }
      ++i_ffn_down_;
    } else if (contains(name, "attn_output.weight")) {
      if (mix == QuantMix::kQ3_K_M) t = TensorType::kQ4_K;
      else if (mix == QuantMix::kQ3_K_L) t = TensorType::kQ5_K;
    }
  }
  const TensorType wanted = t;
  if (ne0 % type_traits(t).block_size != 0) t = fallback_type(t, ne0);
  return {t, wanted, true};
}

Status check_kernels(const TypeTraits& type, bool need_from_float, bool need_to_float) {
  if (need_from_float && type.from_float == nullptr) {
    return Status::error(ErrorCode::kUnsupported, "type %s has no quantizer (from_float) in this build", type.name);
  }
  if (need_to_float && type.to_float == nullptr) {
    return Status::error(ErrorCode::kUnsupported, "type %s has no dequantizer (to_float) in this build", type.name);
  }
  return {};
}

GgufTensorProducer make_row_producer(const TypeTraits& to, int64_t row_len, int64_t n_rows, RowSource source,
                                     ThreadPool* pool) {
  return [&to, row_len, n_rows, source = std::move(source), pool](GgufSink& out) -> Status {
    const int64_t out_row = row_bytes(to, row_len);
    // About 8 MiB of output or float input per block, and at least a row per thread.
    const int64_t per_row = std::max<int64_t>(out_row, row_len * int64_t(sizeof(float)));
    const int64_t chunk = std::max<int64_t>(pool->size(), (8 << 20) / std::max<int64_t>(per_row, 1));
    std::vector<uint8_t> buf(static_cast<size_t>(std::min(chunk, n_rows) * out_row));
    std::vector<std::vector<float>> scratch(pool->size(), std::vector<float>(static_cast<size_t>(row_len)));
    for (int64_t first = 0; first < n_rows; first += chunk) {
      const int64_t count = std::min(chunk, n_rows - first);
      if (source.load) WLLM_RETURN_IF_ERROR(source.load(first, count));
      pool->run([&](int thread, int n_threads) {
        int64_t begin = 0, end = 0;
        split_range(count, thread, n_threads, &begin, &end);
        float* tmp = scratch[thread].data();
        for (int64_t r = begin; r < end; ++r) {
          source.row(first + r, tmp);
          to.from_float(tmp, buf.data() + r * out_row, row_len);
        }
      });
      WLLM_RETURN_IF_ERROR(out.write(buf.data(), static_cast<size_t>(count * out_row)));
    }
    return Status();
  };
}

std::string format_bytes(uint64_t n) {
  if (n < 1024) return str_printf("%llu B", static_cast<unsigned long long>(n));
  if (n < (1u << 20)) return str_printf("%.1f KiB", n / 1024.0);
  if (n < (1u << 30)) return str_printf("%.1f MiB", n / 1048576.0);
  return str_printf("%.2f GiB", n / 1073741824.0);
}

}  // namespace wllm::cli
