#include "engine/embedding.h"

#include <algorithm>
#include <cmath>

#include "core/math.h"

namespace wllm {

EmbeddingJob::EmbeddingJob(Transformer& model, const ModelWeights& weights, ThreadPool& pool,
                           std::vector<std::vector<int32_t>> inputs, Pooling pooling, Output output)
    : model_(model),
      weights_(weights),
      pool_(pool),
      inputs_(std::move(inputs)),
      pooling_(pooling),
      output_(output),
      pooled_(static_cast<size_t>(model.config().dim)),
      head_(static_cast<size_t>(model.config().dim)),
      acts_(model.config().dim, 1) {
  batch_.reserve(static_cast<size_t>(model.max_batch()));
  lengths_.reserve(static_cast<size_t>(model.max_batch()));
  results_.reserve(inputs_.size());
}

bool EmbeddingJob::step() {
  if (done()) return false;
  if (model_.config().encoder) {
    encode_some();
  } else {
    decode_some();
  }
  return !done();
}

void EmbeddingJob::encode_some() {
  batch_.clear();
  lengths_.clear();
  // Whole texts while they fit (the first always does: the caller checked).
  while (next_input_ < inputs_.size() &&
         (batch_.empty() || batch_.size() + inputs_[next_input_].size() <= static_cast<size_t>(model_.max_batch()))) {
    const std::vector<int32_t>& text = inputs_[next_input_++];
    batch_.insert(batch_.end(), text.begin(), text.end());
    lengths_.push_back(static_cast<int32_t>(text.size()));
  }
  const int dim = model_.config().dim;
  const float* hidden = model_.encode(batch_.data(), static_cast<int>(batch_.size()), lengths_.data(),
                                      static_cast<int>(lengths_.size()));
  for (const int32_t length : lengths_) {
    std::fill(pooled_.begin(), pooled_.end(), 0.0f);
    pool_rows(hidden, 0, length, length);
    finish_text();
    hidden += static_cast<int64_t>(length) * dim;
  }
  tokens_done_ += static_cast<int>(batch_.size());
}

void EmbeddingJob::decode_some() {
  const std::vector<int32_t>& text = inputs_[next_input_];
  const int length = static_cast<int>(text.size());
  if (!in_text_) {
    in_text_ = true;
    text_pos_ = 0;
    std::fill(pooled_.begin(), pooled_.end(), 0.0f);
  }
  const int n = std::min(Transformer::kMaxBatch, length - text_pos_);
  pool_rows(model_.hidden_batch(text.data() + text_pos_, n, text_pos_), text_pos_, n, length);
  text_pos_ += n;
  tokens_done_ += n;
  if (text_pos_ == length) {
    finish_text();
    in_text_ = false;
    ++next_input_;
  }
}

void EmbeddingJob::pool_rows(const float* rows, int first, int n, int length) {
  const ModelConfig& c = model_.config();
  const int64_t dim = c.dim;
  // The row a single-row pooling takes: the first token, or the last (rank
  // pooling of a decoder reranker takes its last, as llama.cpp).
  const bool last = pooling_ == Pooling::kLast || (pooling_ == Pooling::kRank && c.rank_softmax);
  if (pooling_ == Pooling::kMean) {
    // Σ_t h_t · (1/length), in token order (llama.cpp: a product with a
    // column of 1/length).
    const float inv = 1.0f / static_cast<float>(length);
    for (int t = 0; t < n; ++t) {
      const float* row = rows + t * dim;
      for (int64_t d = 0; d < dim; ++d) pooled_[d] += row[d] * inv;
    }
  } else if (last && first + n == length) {
    std::copy_n(rows + static_cast<int64_t>(n - 1) * dim, dim, pooled_.begin());
  } else if (!last && first == 0) {
    std::copy_n(rows, dim, pooled_.begin());
  }
}

void EmbeddingJob::finish_text() {
  std::vector<float> result;
  if (pooling_ == Pooling::kRank) {
    // The classification head (llama.cpp's build_pooling): y = tanh(W_cls·h
    // + b), then scores = W_out·y + b; the first n_cls_out values (qwen3:
    // after a softmax).
    const float* x = pooled_.data();
    int64_t width = model_.config().dim;
    if (weights_.cls.present()) {
      width = weights_.cls.rows();
      matmul(weights_.cls, x, 1, head_.data(), acts_, pool_);
      if (weights_.cls_b.present()) add_to(head_.data(), weights_.cls_b.f32(), width);
      for (int64_t i = 0; i < width; ++i) head_[i] = tanh_f32(head_[i]);
      x = head_.data();
    }
    if (weights_.cls_out.present()) {
      width = weights_.cls_out.rows();
      scores_.resize(static_cast<size_t>(width));
      matmul(weights_.cls_out, x, 1, scores_.data(), acts_, pool_);
      if (weights_.cls_out_b.present()) add_to(scores_.data(), weights_.cls_out_b.f32(), width);
    } else {
      scores_.assign(x, x + width);
    }
    if (model_.config().rank_softmax) softmax(scores_.data(), width);
    scores_.resize(std::min<size_t>(scores_.size(), static_cast<size_t>(model_.config().n_cls_out)));
    if (output_ == Output::kRelevance) {
      // A probability, as node-llama-cpp's LlamaRankingContext gives: the
      // softmax's first (qwen3), or the logistic of the first score.
      const float s = scores_[0];
      result.assign(1, model_.config().rank_softmax ? s : 1.0f / (1.0f + exp_f32(-s)));
    } else {
      result = scores_;
    }
  } else {
    result = pooled_;
    if (output_ == Output::kEmbedding) {
      // v / ‖v‖, the norm summed in double (llama.cpp's common_embd_normalize).
      double sum = 0.0;
      for (const float v : result) sum += v * v;
      const float scale = sum > 0.0 ? static_cast<float>(1.0 / std::sqrt(sum)) : 0.0f;
      for (float& v : result) v *= scale;
    }
  }
  results_.push_back(std::move(result));
}

}  // namespace wllm
