#include "model/weights.h"

#include <string>
#include <vector>

namespace wllm {
namespace {

class Binder {
 public:
  Binder(const GgufFile& f, const uint8_t* data) : file_(f), data_(data) {}

  // A required tensor of shape (cols, rows); rows == 0 means 1-D.
  Status get(const std::string& name, int64_t cols, int64_t rows, Tensor* out, bool required = true) {
    const GgufTensorInfo* info = file_.find_tensor(name);
    if (!info) {
      if (!required) return {};
      return Status::error(ErrorCode::kBadFile, "tensor '%s' is missing", name.c_str());
    }
    const int64_t want_rows = rows == 0 ? 1 : rows;
    if (info->ne[0] != cols || info->ne[1] * info->ne[2] * info->ne[3] != want_rows) {
      return Status::error(ErrorCode::kBadFile, "tensor '%s' has shape [%lld, %lld] but the metadata implies [%lld, %lld]",
                           name.c_str(), static_cast<long long>(info->ne[0]),
                           static_cast<long long>(info->ne[1] * info->ne[2] * info->ne[3]),
                           static_cast<long long>(cols), static_cast<long long>(want_rows));
    }
    out->traits = &type_traits(info->type);
    for (int d = 0; d < 4; ++d) out->ne[d] = info->ne[d];
    out->data = data_ + info->offset;
    return {};
  }

  // Norms, biases and frequency factors are read as plain floats.
  Status get_f32(const std::string& name, int64_t n, Tensor* out, bool required = true) {
    WLLM_RETURN_IF_ERROR(get(name, n, 0, out, required));
    if (out->present() && out->traits->type != TensorType::kF32) {
      return Status::error(ErrorCode::kUnsupported, "tensor '%s' is %s; this engine expects f32 here", name.c_str(),
                           out->traits->name);
    }
    return {};
  }

 private:
  const GgufFile& file_;
  const uint8_t* data_;
};

}  // namespace

Result<ModelWeights> bind_weights(const GgufFile& file, const ModelConfig& c, const uint8_t* data) {
  Binder b(file, data);
  ModelWeights w;
  WLLM_RETURN_IF_ERROR(b.get("token_embd.weight", c.dim, c.n_vocab, &w.token_embd));
  WLLM_RETURN_IF_ERROR(b.get_f32("output_norm.weight", c.dim, &w.output_norm));
  WLLM_RETURN_IF_ERROR(b.get("output.weight", c.dim, c.n_vocab, &w.output, /*required=*/false));
  if (!w.output.present()) w.output = w.token_embd;  // tied embeddings
  WLLM_RETURN_IF_ERROR(b.get_f32("rope_freqs.weight", c.rope_dims / 2, &w.rope_freqs, /*required=*/false));

  const bool biases = c.arch == Architecture::kQwen2;
  w.layers.resize(c.n_layers);
  for (int l = 0; l < c.n_layers; ++l) {
    LayerWeights& L = w.layers[l];
    const std::string p = "blk." + std::to_string(l) + ".";
    WLLM_RETURN_IF_ERROR(b.get_f32(p + "attn_norm.weight", c.dim, &L.attn_norm));
    WLLM_RETURN_IF_ERROR(b.get(p + "attn_q.weight", c.dim, c.q_dim(), &L.wq));
    WLLM_RETURN_IF_ERROR(b.get(p + "attn_k.weight", c.dim, c.kv_dim(), &L.wk));
    WLLM_RETURN_IF_ERROR(b.get(p + "attn_v.weight", c.dim, c.kv_dim(), &L.wv));
    WLLM_RETURN_IF_ERROR(b.get_f32(p + "attn_q.bias", c.q_dim(), &L.bq, biases));
    WLLM_RETURN_IF_ERROR(b.get_f32(p + "attn_k.bias", c.kv_dim(), &L.bk, biases));
    WLLM_RETURN_IF_ERROR(b.get_f32(p + "attn_v.bias", c.kv_dim(), &L.bv, biases));
    WLLM_RETURN_IF_ERROR(b.get(p + "attn_output.weight", c.q_dim(), c.dim, &L.wo));
    WLLM_RETURN_IF_ERROR(b.get_f32(p + "ffn_norm.weight", c.dim, &L.ffn_norm));
    WLLM_RETURN_IF_ERROR(b.get(p + "ffn_gate.weight", c.dim, c.ffn_dim, &L.w_gate));
    WLLM_RETURN_IF_ERROR(b.get(p + "ffn_up.weight", c.dim, c.ffn_dim, &L.w_up));
    WLLM_RETURN_IF_ERROR(b.get(p + "ffn_down.weight", c.ffn_dim, c.dim, &L.w_down));
  }
  return w;
}

int repack_weights(ModelWeights* w, uint8_t* arena) {
  // Every bound view, to refuse a tensor whose bytes overlap another's (a
  // file may point two names at the same data; repacking would change both).
  std::vector<const Tensor*> all = {&w->token_embd, &w->output_norm, &w->output, &w->rope_freqs};
  std::vector<Tensor*> matrices;
  if (w->output.data != w->token_embd.data) matrices.push_back(&w->output);
  for (LayerWeights& L : w->layers) {
    for (Tensor* t : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down}) matrices.push_back(t);
    for (const Tensor* t : {&L.attn_norm, &L.bq, &L.bk, &L.bv, &L.ffn_norm}) all.push_back(t);
  }
  all.insert(all.end(), matrices.begin(), matrices.end());
  const auto bytes = [](const Tensor& t) { return t.rows() * t.row_size(); };
  const auto overlaps_another = [&](const Tensor& t) {
    for (const Tensor* other : all) {
      if (other == &t || !other->present()) continue;
      if (t.data < other->data + bytes(*other) && other->data < t.data + bytes(t)) return true;
    }
    return false;
  };
  int repacked = 0;
  for (Tensor* t : matrices) {
    if (!t->present()) continue;
    const RepackedType* type = repacked_type_for(t->traits->type);
    if (!type || t->rows() % type->rows != 0 || overlaps_another(*t)) continue;
    type->repack(arena + (t->data - arena), t->cols(), t->rows());
    t->repacked = type;
    ++repacked;
  }
  return repacked;
}

}  // namespace wllm
