#include "llama2c/checkpoint.h"

#include <cstring>

namespace wllm {
namespace {

// Bounds on the header's fields, far above any llama2.c model (Llama 2 70B
// has dim 8192, hidden 28672, 80 layers): within them every size below is
// computed in 64 bits without overflow, and a file of other bytes (text, a
// different format) almost never passes.
constexpr int kMaxDim = 1 << 16;
constexpr int kMaxHidden = 1 << 18;
constexpr int kMaxLayers = 1 << 10;
constexpr int kMaxVocab = 1 << 24;
constexpr int kMaxSeqLen = 1 << 24;

unsigned long long ull(uint64_t v) { return static_cast<unsigned long long>(v); }

// The weights' sizes in floats, in file order (the layout in checkpoint.h).
struct Sizes {
  uint64_t embedding, norm, q, kv, o, ffn, final_norm, freq_cis, classifier;
};

Sizes sizes_of(const Llama2cConfig& c) {
  const uint64_t dim = c.dim, kv_dim = uint64_t(c.n_kv_heads) * c.head_size();
  Sizes s;
  s.embedding = uint64_t(c.vocab_size) * dim;
  s.norm = dim;
  s.q = dim * dim;
  s.kv = kv_dim * dim;
  s.o = dim * dim;
  s.ffn = uint64_t(c.hidden_dim) * dim;
  s.final_norm = dim;
  s.freq_cis = uint64_t(c.seq_len) * (c.head_size() / 2) * 2;  // real and imaginary
  s.classifier = c.shared_classifier ? 0 : s.embedding;
  return s;
}

uint64_t expected_file_size(const Llama2cConfig& c) {
  const Sizes s = sizes_of(c);
  const uint64_t layers = c.n_layers;
  const uint64_t floats = s.embedding + layers * (2 * s.norm + s.q + 2 * s.kv + s.o + 3 * s.ffn) + s.final_norm +
                          s.freq_cis + s.classifier;
  return kLlama2cHeaderBytes + 4 * floats;
}

std::string describe(const Llama2cConfig& c) {
  return str_printf("dim %d, hidden_dim %d, %d layers, %d heads, %d kv heads, vocab %d%s, seq_len %d", c.dim,
                    c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.vocab_size,
                    c.shared_classifier ? "" : " (own classifier)", c.seq_len);
}

}  // namespace

Result<Llama2cConfig> parse_llama2c_header(std::span<const uint8_t> prefix) {
  if (prefix.size() < kLlama2cHeaderBytes) {
    return Status::error(ErrorCode::kBadFile, "a llama2.c header has %llu bytes, the file %zu",
                         ull(kLlama2cHeaderBytes), prefix.size());
  }
  int32_t f[7];
  std::memcpy(f, prefix.data(), sizeof f);
  // vocab_size may be negative (its own classifier): its magnitude is checked.
  const struct { const char* name; int64_t value; int max; } fields[] = {
      {"dim", f[0], kMaxDim},           {"hidden_dim", f[1], kMaxHidden}, {"n_layers", f[2], kMaxLayers},
      {"n_heads", f[3], kMaxDim},       {"n_kv_heads", f[4], kMaxDim},
      {"vocab_size", f[5] < 0 ? -int64_t(f[5]) : f[5], kMaxVocab}, {"seq_len", f[6], kMaxSeqLen},
  };
  for (const auto& field : fields) {
    if (field.value < 1 || field.value > field.max) {
      return Status::error(ErrorCode::kBadFile, "its %s would be %lld", field.name, static_cast<long long>(field.value));
    }
  }
  Llama2cConfig c;
  c.dim = f[0];
  c.hidden_dim = f[1];
  c.n_layers = f[2];
  c.n_heads = f[3];
  c.n_kv_heads = f[4];
  c.shared_classifier = f[5] > 0;
  c.vocab_size = f[5] > 0 ? f[5] : -f[5];
  c.seq_len = f[6];
  return c;
}

Status check_llama2c_checkpoint(const Llama2cConfig& c, uint64_t file_size) {
  if (c.dim % c.n_heads != 0 || c.head_size() % 2 != 0) {
    return Status::error(ErrorCode::kBadFile,
                         "llama2.c checkpoint (%s): %d heads do not split dim %d into heads of an even size",
                         describe(c).c_str(), c.n_heads, c.dim);
  }
  if (c.n_kv_heads > c.n_heads || c.n_heads % c.n_kv_heads != 0) {
    return Status::error(ErrorCode::kBadFile, "llama2.c checkpoint (%s): %d kv heads do not divide %d heads",
                         describe(c).c_str(), c.n_kv_heads, c.n_heads);
  }
  const uint64_t expected = expected_file_size(c);
  if (file_size != expected) {
    return Status::error(ErrorCode::kBadFile,
                         "llama2.c checkpoint (%s): its weights take %llu bytes, but the file has %llu%s",
                         describe(c).c_str(), ull(expected), ull(file_size), file_size < expected ? " (truncated?)" : "");
  }
  return {};
}

std::vector<Llama2cTensor> llama2c_tensors(const Llama2cConfig& c) {
  const Sizes s = sizes_of(c);
  const int64_t dim = c.dim, hidden = c.hidden_dim, vocab = c.vocab_size;
  const int64_t kv_dim = int64_t(c.n_kv_heads) * c.head_size();
  const uint64_t layers = c.n_layers;

  // Where each block starts, in floats from the end of the header.
  uint64_t at = 0;
  const auto block = [&at](uint64_t floats) {
    const uint64_t start = at;
    at += floats;
    return start;
  };
  const uint64_t embedding = block(s.embedding);
  const uint64_t rms_att = block(layers * s.norm);
  const uint64_t wq = block(layers * s.q);
  const uint64_t wk = block(layers * s.kv);
  const uint64_t wv = block(layers * s.kv);
  const uint64_t wo = block(layers * s.o);
  const uint64_t rms_ffn = block(layers * s.norm);
  const uint64_t w1 = block(layers * s.ffn);
  const uint64_t w2 = block(layers * s.ffn);
  const uint64_t w3 = block(layers * s.ffn);
  const uint64_t rms_final = block(s.final_norm);
  block(s.freq_cis);
  const uint64_t wcls = block(s.classifier);

  std::vector<Llama2cTensor> out;
  const auto add = [&out](std::string name, std::vector<int64_t> shape, uint64_t first_float, uint64_t floats) {
    out.push_back({std::move(name), std::move(shape), kLlama2cHeaderBytes + 4 * first_float, 4 * floats});
  };
  add("token_embd.weight", {dim, vocab}, embedding, s.embedding);
  add("output_norm.weight", {dim}, rms_final, s.final_norm);
  if (!c.shared_classifier) add("output.weight", {dim, vocab}, wcls, s.classifier);
  for (uint64_t l = 0; l < layers; ++l) {
    const std::string blk = "blk." + std::to_string(l) + ".";
    add(blk + "attn_q.weight", {dim, dim}, wq + l * s.q, s.q);
    add(blk + "attn_k.weight", {dim, kv_dim}, wk + l * s.kv, s.kv);
    add(blk + "attn_v.weight", {dim, kv_dim}, wv + l * s.kv, s.kv);
    add(blk + "attn_output.weight", {dim, dim}, wo + l * s.o, s.o);
    add(blk + "attn_norm.weight", {dim}, rms_att + l * s.norm, s.norm);
    add(blk + "ffn_gate.weight", {dim, hidden}, w1 + l * s.ffn, s.ffn);
    add(blk + "ffn_down.weight", {hidden, dim}, w2 + l * s.ffn, s.ffn);
    add(blk + "ffn_up.weight", {dim, hidden}, w3 + l * s.ffn, s.ffn);
    add(blk + "ffn_norm.weight", {dim}, rms_ffn + l * s.norm, s.norm);
  }
  return out;
}

}  // namespace wllm
