// The working set the sampler stages operate on, as llama.cpp's
// llama_token_data_array (src/llama-sampling.cpp): each stage shrinks,
// reorders or rescores it in place, and the last one selects a token.
#pragma once

#include <cstddef>
#include <cstdint>

namespace wllm {

struct TokenData {
  int32_t id;   // token id
  float logit;  // score, modified by penalties and temperature
  float p;      // probability, valid after a stage that ran softmax()
};

struct Candidates {
  TokenData* data = nullptr;  // (size) entries; the Sampler owns the buffer
  size_t size = 0;
  bool sorted = false;    // data is in rank order (see ranks_before)
  int32_t selected = -1;  // index into data chosen by the final stage
};

// Rank order: higher logit first, equal logits by lower token id. A strict
// total order (ids are unique, NaN never enters), so any sort gives the same
// result on every standard library.
inline bool ranks_before(const TokenData& a, const TokenData& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// Puts the entries of rank [from, to) into positions [from, to) in rank order,
// given that positions [0, from) already hold ranks [0, from) in order. O(n)
// selection plus a sort of the new range; allocates nothing.
void sort_ranks(Candidates& cur, size_t from, size_t to);

// w_i = e^(l_i − max) into p, with exp_f32. Logits equal to the maximum get
// weight 1, so +inf logits share the mass and an all −inf set becomes uniform
// instead of NaN. Returns Σ w_i summed in double in index order (>= 1).
double softmax_weights(Candidates& cur);

// p_i = w_i / Σ_j w_j: softmax_weights() then normalisation.
void softmax(Candidates& cur);

}  // namespace wllm
