#include "model/weights.h"

#include <algorithm>
#include <cstring>

#include "core/checksum.h"
#include "model/architecture.h"

namespace wllm {

std::string layer_tensor(int layer, const char* name) { return "blk." + std::to_string(layer) + "." + name; }

void embedding_tensors(TensorList& t, const ModelConfig& c, ModelWeights* w) {
  t.add("token_embd.weight", {c.dim, c.n_vocab}, TensorRole::kEmbedding, &w->token_embd);
}

void output_tensors(TensorList& t, const ModelConfig& c, ModelWeights* w, const char* norm) {
  t.add(norm, {c.dim}, TensorRole::kNorm, &w->output_norm);
  if (c.tied_output) {
    t.part(&w->output, &w->token_embd, 0, c.n_vocab);
  } else {
    t.add("output.weight", {c.dim, c.n_vocab}, TensorRole::kOutput, &w->output);
  }
  if (c.rope_factors) t.add("rope_freqs.weight", {c.rope_dims / 2}, TensorRole::kFactors, &w->rope_freqs);
  if (c.rope_long_short) {
    t.add("rope_factors_long.weight", {c.rope_dims / 2}, TensorRole::kFactors, &w->rope_long);
    t.add("rope_factors_short.weight", {c.rope_dims / 2}, TensorRole::kFactors, &w->rope_short);
  }
}

void qkv_tensors(TensorList& t, const ModelConfig& c, int l, LayerWeights* L) {
  const int64_t q = c.q_dim(), kv = c.layer_kv_dim(l);
  if (c.fused_qkv) {
    t.add(layer_tensor(l, "attn_qkv.weight"), {c.dim, q + 2 * kv}, TensorRole::kMatrix, &L->wqkv);
    t.part(&L->wq, &L->wqkv, 0, q);
    t.part(&L->wk, &L->wqkv, q, kv);
    t.part(&L->wv, &L->wqkv, q + kv, kv);
    if (c.qkv_bias) {
      t.add(layer_tensor(l, "attn_qkv.bias"), {q + 2 * kv}, TensorRole::kBias, &L->bqkv);
      t.part(&L->bq, &L->bqkv, 0, q);
      t.part(&L->bk, &L->bqkv, q, kv);
      t.part(&L->bv, &L->bqkv, q + kv, kv);
    }
    return;
  }
  t.add(layer_tensor(l, "attn_q.weight"), {c.dim, q}, TensorRole::kMatrix, &L->wq);
  t.add(layer_tensor(l, "attn_k.weight"), {c.dim, kv}, TensorRole::kMatrix, &L->wk);
  t.add(layer_tensor(l, "attn_v.weight"), {c.dim, kv}, TensorRole::kMatrix, &L->wv);
  if (c.qkv_bias) {
    t.add(layer_tensor(l, "attn_q.bias"), {q}, TensorRole::kBias, &L->bq);
    t.add(layer_tensor(l, "attn_k.bias"), {kv}, TensorRole::kBias, &L->bk);
    t.add(layer_tensor(l, "attn_v.bias"), {kv}, TensorRole::kBias, &L->bv);
  }
}

void qk_norm_tensors(TensorList& t, const ModelConfig& c, int l, LayerWeights* L) {
  t.add(layer_tensor(l, "attn_q_norm.weight"), {c.head_dim}, TensorRole::kNorm, &L->q_norm);
  t.add(layer_tensor(l, "attn_k_norm.weight"), {c.head_dim}, TensorRole::kNorm, &L->k_norm);
}

void gated_ffn_tensors(TensorList& t, const ModelConfig& c, int l, LayerWeights* L) {
  const int64_t ffn = c.ffn_dim;
  if (c.fused_gate_up) {
    t.add(layer_tensor(l, "ffn_up.weight"), {c.dim, 2 * ffn}, TensorRole::kMatrix, &L->w_gate_up);
    t.part(&L->w_gate, &L->w_gate_up, 0, ffn);
    t.part(&L->w_up, &L->w_gate_up, ffn, ffn);
  } else {
    t.add(layer_tensor(l, "ffn_gate.weight"), {c.dim, ffn}, TensorRole::kMatrix, &L->w_gate);
    t.add(layer_tensor(l, "ffn_up.weight"), {c.dim, ffn}, TensorRole::kMatrix, &L->w_up);
  }
  t.add(layer_tensor(l, "ffn_down.weight"), {ffn, c.dim}, TensorRole::kMatrix, &L->w_down);
}

void classifier_tensors(TensorList& t, const ModelConfig& c, ModelWeights* w, int64_t cls_rows) {
  if (c.cls_head) {
    t.add("cls.weight", {c.dim, cls_rows}, TensorRole::kMatrix, &w->cls);
    t.add_optional("cls.bias", {cls_rows}, TensorRole::kBias, &w->cls_b);
  }
  if (c.cls_out) {
    t.add("cls.output.weight", {c.cls_head ? cls_rows : c.dim, c.n_cls_out}, TensorRole::kMatrix, &w->cls_out);
    // qwen3's yes/no projection has no bias (llama.cpp reads none).
    if (!c.rank_softmax) t.add_optional("cls.output.bias", {c.n_cls_out}, TensorRole::kBias, &w->cls_out_b);
  }
}

namespace {

// Rows [first, first + n) of `whole` as a tensor of their own.
Tensor rows_of(const Tensor& whole, int64_t first, int64_t n) {
  Tensor part = whole;
  if (whole.ne[1] == 1 && whole.ne[2] == 1 && whole.ne[3] == 1) {  // 1-D: elements
    part.ne[0] = n;
    part.data = whole.data + row_bytes(*whole.traits, first);  // f32 in practice
    return part;
  }
  part.ne[1] = n;
  part.ne[2] = part.ne[3] = 1;
  part.data = whole.data + first * whole.row_size();
  part.repacked_rows = std::clamp<int64_t>(whole.repacked_rows - first, 0, n);
  return part;
}

class Binder : public TensorList {
 public:
  Binder(const GgufFile& f, const uint8_t* data) : file_(f), data_(data) {}

  void add(const std::string& name, std::initializer_list<int64_t> ne, TensorRole role, Tensor* dest) override {
    if (!status_.ok()) return;
    status_ = bind(name, ne, role, dest);
  }

  void part(Tensor* dest, const Tensor* whole, int64_t first_row, int64_t n_rows) override {
    if (status_.ok()) *dest = rows_of(*whole, first_row, n_rows);
  }

  bool has(const std::string& name) const override { return file_.find_tensor(name) != nullptr; }

  const Status& status() const { return status_; }

 private:
  Status bind(const std::string& name, std::initializer_list<int64_t> ne, TensorRole role, Tensor* out) {
    const GgufTensorInfo* info = file_.find_tensor(name);
    if (!info) return Status::error(ErrorCode::kBadFile, "tensor '%s' is missing", name.c_str());
    bool same = true;
    int d = 0;
    for (const int64_t n : ne) same = same && info->ne[d++] == n;
    for (; d < 4; ++d) same = same && info->ne[d] == 1;
    if (!same) {
      std::string want, have;
      for (const int64_t n : ne) want += (want.empty() ? "" : ", ") + std::to_string(n);
      for (d = 0; d < static_cast<int>(info->n_dims); ++d) have += (d ? ", " : "") + std::to_string(info->ne[d]);
      return Status::error(ErrorCode::kBadFile, "tensor '%s' has shape [%s] but the metadata implies [%s]",
                           name.c_str(), have.c_str(), want.c_str());
    }
    out->traits = &type_traits(info->type);
    for (d = 0; d < 4; ++d) out->ne[d] = info->ne[d];
    out->data = data_ + info->offset;
    const bool plain_floats = role == TensorRole::kNorm || role == TensorRole::kBias || role == TensorRole::kFactors ||
                              role == TensorRole::kConv;
    if (plain_floats && info->type != TensorType::kF32) {  // read as float arrays
      return Status::error(ErrorCode::kUnsupported, "tensor '%s' is %s; this engine expects f32 here", name.c_str(),
                           out->traits->name);
    }
    return {};
  }

  const GgufFile& file_;
  const uint8_t* data_;
  Status status_;
};

// Every tensor of the file and every part of one, as bound.
class Collector : public TensorList {
 public:
  struct Part {
    Tensor* dest;
    const Tensor* whole;
    int64_t first_row, n_rows;
  };
  void add(const std::string&, std::initializer_list<int64_t>, TensorRole role, Tensor* dest) override {
    tensors.push_back({dest, role});
  }
  void part(Tensor* dest, const Tensor* whole, int64_t first_row, int64_t n_rows) override {
    parts.push_back({dest, whole, first_row, n_rows});
  }
  std::vector<std::pair<Tensor*, TensorRole>> tensors;
  std::vector<Part> parts;
};

}  // namespace

Result<ModelWeights> bind_weights(const GgufFile& file, const ModelConfig& c, const uint8_t* data) {
  ModelWeights w;
  w.layers.resize(c.n_layers);
  Binder binder(file, data);
  c.arch->tensors(binder, c, &w);
  if (!binder.status().ok()) return binder.status();
  return w;
}

int repack_weights(const ModelConfig& c, ModelWeights* w, uint8_t* arena) {
  Collector all;
  c.arch->tensors(all, c, w);
  const auto bytes = [](const Tensor& t) { return t.rows() * t.row_size(); };
  // A file may point two names at the same data; repacking would change both.
  const auto overlaps_another = [&](const Tensor& t) {
    for (const auto& [other, role] : all.tensors) {
      if (other == &t || !other->present()) continue;
      if (t.data < other->data + bytes(*other) && other->data < t.data + bytes(t)) return true;
    }
    return false;
  };
  // The kernels read a repacked tensor in groups of rows: each part of a
  // fused matrix (or a tied output) must start on a group, and end on one or
  // where the tensor ends.
  const auto parts_are_whole_groups = [&](const Tensor& t, int group) {
    for (const Collector::Part& p : all.parts) {
      const int64_t end = p.first_row + p.n_rows;
      if (p.whole == &t && (p.first_row % group != 0 || (end % group != 0 && end != t.rows()))) return false;
    }
    return true;
  };
  // A tied token_embd is the output matrix too, read whole every token: it is
  // repacked as one (get_row unpacks the group of each row it looks up).
  const auto is_matrix = [&](const Tensor* t, TensorRole role) {
    return role == TensorRole::kMatrix || role == TensorRole::kOutput || (c.tied_output && t == &w->token_embd);
  };
  int repacked = 0;
  for (const auto& [t, role] : all.tensors) {
    if (!is_matrix(t, role) || !t->present()) continue;
    const RepackedType* type = repacked_type_for(t->traits->type);
    if (!type || t->rows() < type->rows || overlaps_another(*t) || !parts_are_whole_groups(*t, type->rows)) {
      continue;
    }
    // Whole groups; the last rows (fewer than a group) stay as they are.
    const int64_t rows = t->rows() / type->rows * type->rows;
    type->repack(arena + (t->data - arena), t->cols(), rows);
    t->repacked = type;
    t->repacked_rows = rows;
    ++repacked;
  }
  // The parts take their whole's new layout.
  for (const Collector::Part& p : all.parts) *p.dest = rows_of(*p.whole, p.first_row, p.n_rows);
  return repacked;
}

uint64_t file_checksum(const GgufFile& file, const ModelConfig& c, ModelWeights* w, const uint8_t* arena) {
  Collector all;
  c.arch->tensors(all, c, w);
  std::vector<const Tensor*> repacked;
  for (const auto& [t, role] : all.tensors) {
    if (t->repacked) repacked.push_back(t);
  }
  std::sort(repacked.begin(), repacked.end(), [](const Tensor* a, const Tensor* b) { return a->data < b->data; });
  Checksum64 sum;
  sum.update(file.header_bytes().data(), file.header_bytes().size());
  const uint8_t* at = arena;  // what is summed up to
  std::vector<uint8_t> group;
  for (const Tensor* t : repacked) {
    sum.update(at, static_cast<size_t>(t->data - at));
    const int rows = t->repacked->rows;
    group.resize(static_cast<size_t>(rows * t->row_size()));
    for (int64_t r = 0; r < t->repacked_rows; r += rows) {
      std::memcpy(group.data(), t->row(r), group.size());
      t->repacked->unpack(group.data(), t->cols(), rows);
      sum.update(group.data(), group.size());
    }
    at = t->row(t->repacked_rows);  // the rows after are as the file has them
  }
  sum.update(at, static_cast<size_t>(arena + file.data_size() - at));
  return sum.digest();
}

}  // namespace wllm
