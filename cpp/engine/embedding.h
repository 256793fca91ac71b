// Embeddings and reranking scores: tokenized texts through the model, their
// hidden states pooled (model/config.h: Pooling) as llama.cpp's
// build_pooling does, then L2-normalised (embeddings) or turned into a
// relevance probability (reranking).
//
// As a step-by-step job, like Generation: each step() is one forward pass,
// so a caller that must stay responsive (the wasm worker) runs the loop and
// sees an abort between passes. An encoder packs as many whole texts as fit
// its context into one pass (each attends only to itself, so a text's
// embedding has the same bits alone or packed); a decoder runs each text
// through its KV cache in batches, as a prompt.
#pragma once

#include <cstdint>
#include <vector>

#include "model/transformer.h"
#include "ops/ops.h"
#include "runtime/thread_pool.h"

namespace wllm {

class EmbeddingJob {
 public:
  enum class Output {
    kEmbedding,             // the pooled vector, L2-normalised
    kRawEmbedding,          // the pooled vector as it is
    kRelevance,             // rank pooling: a probability, σ(score 0), or softmax's (qwen3) first
  };

  // inputs: token sequences, each non-empty and within the context, checked
  // by the caller; weights: the model's (for the classification head).
  EmbeddingJob(Transformer& model, const ModelWeights& weights, ThreadPool& pool,
               std::vector<std::vector<int32_t>> inputs, Pooling pooling, Output output);

  // Runs one forward pass. Returns false once every input is done.
  bool step();
  bool done() const { return next_input_ == inputs_.size() && !in_text_; }
  // One vector per input: dim floats (n_cls_out scores for kRank pooling
  // with kRawEmbedding), or one probability (kRelevance).
  const std::vector<std::vector<float>>& results() const { return results_; }
  int tokens_done() const { return tokens_done_; }

 private:
  void encode_some();   // an encoder's pass: the next texts that fit
  void decode_some();   // a decoder's pass: the next batch of one text's tokens
  // Pools rows [0, n) of one text's hidden states (dim floats each) into
  // pooled_, for the text's tokens [first, first + n) of `length`.
  void pool_rows(const float* rows, int first, int n, int length);
  void finish_text();   // pooled_ → results_

  Transformer& model_;
  const ModelWeights& weights_;
  ThreadPool& pool_;
  const std::vector<std::vector<int32_t>> inputs_;
  const Pooling pooling_;
  const Output output_;
  size_t next_input_ = 0;
  bool in_text_ = false;     // a decoder is part-way through inputs_[next_input_]
  int text_pos_ = 0;         // ... at this position
  int tokens_done_ = 0;
  std::vector<int32_t> batch_;    // an encoder pass's tokens, texts one after another
  std::vector<int32_t> lengths_;  // and their lengths
  std::vector<float> pooled_;     // (dim) the text being pooled
  std::vector<float> head_;       // (dim) scratch of the classification head
  std::vector<float> scores_;     // (n_cls_out)
  ActivationCache acts_;
  std::vector<std::vector<float>> results_;
};

}  // namespace wllm
