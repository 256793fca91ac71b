// For each token t of the batch (position p = pos + t):
// out[t, h] = Σ_u softmax_u(q_{t,h} · k_u · scale) · v_u over the positions u
// that p sees (u <= p; with a window, also u > p - window), with query head h
// reading key-value head h / (n_heads / n_kv_heads).
// Both products go through a float tiled kernel (gemm): the scores with the
// keys as rows and the queries as activations, the weighted sum with the
// value dimensions as rows (the value cache is stored transposed, so each is
// a contiguous row over slots) and the probabilities as activations. Each
// value is therefore a dot with the fixed 8-lane order, whatever the batch.
//
// Work is split by (kv head, tile of consecutive tokens), head-major; each is
// computed whole by one thread. A tile's queries (its tokens' heads of the
// group, up to kAttentionActs) are one gemm's activations, so the kv head's
// keys and values are read once per tile, not once per token. The tile's
// tokens share one span of slots, from the first one its first token sees to
// its last position; a token's scores outside what it sees are masked: -inf
// before the softmax below it, 0 after its position, so they add +0 to the
// weighted sum (+0·v is +0; an exact no-op on a non-negative-zero sum).
// Spans start on a multiple of 8 slots, so a slot meets the same lane of the
// 8-lane sums in every span that holds it: a batch computes the bits that
// token-by-token evaluation computes.
//
// A sliding-window layer's ring (kv_cache.h) holds slot = position until the
// positions wrap around it; from then on the span is the whole ring, in slot
// order, and each score is masked by the position its slot holds.
//
// Where f16 converts slowly (wasm) a thread first converts the kv head's
// cached keys and values of the batch's span to f32 (exactly) and runs the
// f32 kernel: the same bits as the f16 kernel on the cache, without
// converting each key again for every tile. One token, and native builds,
// read the f16 cache directly.
#include "model/attention.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "core/math.h"
#include "ops/ops.h"
#include "quant/kernels.h"

namespace wllm {
namespace {

// Tokens per attention tile: queries of one kv head up to kAttentionActs, so
// each key and value row read serves many products (docs/performance.md).
constexpr int kAttentionActs = 16;
int tile_tokens(int group) { return std::max(1, kAttentionActs / group); }
int tile_acts(int group) { return tile_tokens(group) * group; }

int max_tile_acts(const ModelConfig& c) {
  int most = 1;
  for (int l = 0; l < c.n_layers; ++l) {
    if (c.layers[l].attention) most = std::max(most, tile_acts(c.n_heads / c.layers[l].n_kv_heads));
  }
  return most;
}

// Floats of f32 cache copies per thread (one kv head's keys and values), for
// a batch's attention where the kernels' f16 conversion is slow. x86
// converts in one instruction inside its f16 kernel, and the copies made
// prompts slower there.
// An encoder's keys and values are f32 already: none.
int64_t copy_floats(const ModelConfig& c, int n_ctx) {
  return active_isa_has_slow_f16() && !c.encoder ? 2LL * n_ctx * c.head_dim : 0;
}

// The first position p sees, rounded down to a multiple of 8 (see the top).
int64_t span_start(int64_t p, int window) {
  return window > 0 ? std::max<int64_t>(0, p - window + 1) / 8 * 8 : 0;
}

constexpr float kMasked = -std::numeric_limits<float>::infinity();

// A tile's queries as one block of rows: the group's queries of each of its
// `tokens` tokens (q: the first token's, rows q_dim apart) copied into
// `tile` when there is more than one token; else q itself.
const float* gather_queries(const float* q, int tokens, int64_t q_dim, int64_t group_floats, float* tile) {
  if (tokens == 1) return q;
  for (int t = 0; t < tokens; ++t) std::copy_n(q + t * q_dim, group_floats, tile + t * group_floats);
  return tile;
}

// The inverse for a tile's outputs: each token's rows back to `out` (rows q_dim apart).
void scatter_outputs(const float* tile, int tokens, int64_t q_dim, int64_t group_floats, float* out) {
  for (int t = 0; t < tokens; ++t) std::copy_n(tile + t * group_floats, group_floats, out + t * q_dim);
}

// ALiBi's slope of each of n_heads query heads, as ggml's soft_max computes
// it: m0^(h+1) for the first 2^floor(log2 n_heads) heads, m1^(2(h−that)+1)
// after, with m0 = 2^(−max_bias/that) and m1 = 2^(−max_bias/2/that).
std::vector<float> alibi_slopes(int n_heads, float max_bias) {
  if (max_bias <= 0.0f) return {};
  int pow2 = 1;
  while (pow2 * 2 <= n_heads) pow2 *= 2;
  const float m0 = static_cast<float>(pow_f64(2.0, -static_cast<double>(max_bias) / pow2));
  const float m1 = static_cast<float>(pow_f64(2.0, -static_cast<double>(max_bias) / 2.0 / pow2));
  std::vector<float> slopes(n_heads);
  for (int h = 0; h < n_heads; ++h) {
    slopes[h] = h < pow2 ? static_cast<float>(pow_f64(m0, h + 1)) : static_cast<float>(pow_f64(m1, 2 * (h - pow2) + 1));
  }
  return slopes;
}

// Positions a packed batch's tiles start at (encoders only).
int64_t tile_start_count(const ModelConfig& c, int n_ctx) { return c.encoder ? n_ctx : 0; }

// scores[i] = cap·tanh(scores[i]·scale·(1/cap)) over n scores (as llama.cpp:
// a multiplication by the reciprocal).
void soft_cap(float* scores, int64_t n, float scale, float cap) {
  const float inv_cap = 1.0f / cap;
  for (int64_t i = 0; i < n; ++i) scores[i] = cap * tanh_f32(scores[i] * scale * inv_cap);
}

}  // namespace

Attention::Attention(const ModelConfig& c, int n_ctx, int n_threads)
    : config_(c),
      n_ctx_(n_ctx),
      tile_acts_(max_tile_acts(c)),
      att_(static_cast<size_t>(n_threads) * tile_acts_ * n_ctx),
      tile_qo_(static_cast<size_t>(n_threads) * 2 * tile_acts_ * c.head_dim),
      kv_f32_(static_cast<size_t>(n_threads * copy_floats(c, n_ctx))),
      alibi_slopes_(alibi_slopes(c.n_heads, c.alibi_bias_max)),
      tile_starts_(static_cast<size_t>(tile_start_count(c, n_ctx))) {}

int64_t Attention::bytes() const {
  return static_cast<int64_t>((att_.size() + tile_qo_.size() + kv_f32_.size() + alibi_slopes_.size()) * sizeof(float) +
                              tile_starts_.size() * sizeof(int32_t));
}

int64_t Attention::plan_bytes(const ModelConfig& c, int n_ctx, int n_threads) {
  const int64_t acts = max_tile_acts(c);
  const int64_t per_thread = acts * (n_ctx + 2 * c.head_dim) + copy_floats(c, n_ctx);
  const int64_t slopes = c.alibi_bias_max > 0.0f ? c.n_heads : 0;
  return (n_threads * per_thread + slopes) * static_cast<int64_t>(sizeof(float)) +
         tile_start_count(c, n_ctx) * static_cast<int64_t>(sizeof(int32_t));
}

void Attention::run(const KvCache& cache, int l, const float* q_all, int n, int64_t pos, const AttentionParams& p,
                    float* out_all, ThreadPool& pool) {
  const ModelConfig& c = config_;
  const int n_kv_heads = c.layers[l].n_kv_heads;
  const int group = c.n_heads / n_kv_heads, head_dim = c.head_dim, kv_dim = n_kv_heads * head_dim, q_dim = c.q_dim();
  const int tile = tile_tokens(group), tiles = (n + tile - 1) / tile;
  const int64_t group_floats = static_cast<int64_t>(group) * head_dim;  // one token's queries of the group
  const TypeTraits& f16 = type_traits(TensorType::kF16);
  const TypeTraits& f32 = type_traits(TensorType::kF32);
  const int slots = cache.slots(l);
  const uint16_t* keys = cache.keys(l);      // (slots, kv_dim)
  const uint16_t* values = cache.values(l);  // (kv_dim, slots)
  const int64_t len = pos + n;               // positions stored, the batch's included
  const bool wrapped = len > slots;          // a ring whose positions have wrapped around
  // The slots the batch reads: [span0, span1).
  const int64_t span0 = wrapped ? 0 : span_start(pos, p.window);
  const int64_t span1 = wrapped ? slots : len;
  const int64_t span = span1 - span0;
  const bool copies = n > 1 && !kv_f32_.empty();
  const int64_t copy_size = static_cast<int64_t>(kv_f32_.size()) / pool.size();  // floats per thread
  const int64_t tile_floats = tile * group_floats;
  pool.run([&](int ith, int nth) {
    float* att = att_.data() + static_cast<int64_t>(ith) * tile_acts_ * n_ctx_;  // (tile · group, n_ctx)
    float* tile_q = tile_qo_.data() + static_cast<int64_t>(ith) * 2 * tile_acts_ * head_dim;  // (tile · group, head_dim)
    float* tile_out = tile_q + tile_floats;                                                    // (tile · group, head_dim)
    float* keys_f32 = kv_f32_.data() + ith * copy_size;                                         // (span, head_dim)
    float* values_f32 = keys_f32 + copy_size / 2;                                               // (head_dim, span)
    int converted = -1;  // the kv head keys_f32 and values_f32 hold
    int64_t begin, end;
    split_range(static_cast<int64_t>(tiles) * n_kv_heads, ith, nth, &begin, &end);
    for (int64_t item = begin; item < end; ++item) {
      const int g = static_cast<int>(item / tiles), t0 = static_cast<int>(item % tiles) * tile;
      const int tokens = std::min(tile, n - t0), acts = tokens * group;
      const int64_t first = pos + t0, last = first + tokens - 1;  // the tile's positions
      const int64_t head0 = static_cast<int64_t>(g) * group_floats;  // the group's first query head
      const uint16_t* head_keys = keys + static_cast<int64_t>(g) * head_dim;
      const uint16_t* head_values = values + static_cast<int64_t>(g) * head_dim * slots;
      if (copies && converted != g) {
        for (int64_t u = 0; u < span; ++u) {
          f16.to_float(head_keys + (span0 + u) * kv_dim, keys_f32 + u * head_dim, head_dim);
        }
        for (int i = 0; i < head_dim; ++i) {
          f16.to_float(head_values + static_cast<int64_t>(i) * slots + span0, values_f32 + i * span, span);
        }
        converted = g;
      }
      // The tile's slots: [s0, s1).
      const int64_t s0 = wrapped ? 0 : span_start(first, p.window), s1 = wrapped ? slots : last + 1;
      // The rows both products read: the f32 copies, or the cache itself.
      const TypeTraits& rows = copies ? f32 : f16;
      const void* key_rows = copies ? static_cast<const void*>(keys_f32 + (s0 - span0) * head_dim)
                                    : static_cast<const void*>(head_keys + s0 * kv_dim);
      const void* value_rows = copies ? static_cast<const void*>(values_f32 + (s0 - span0))
                                      : static_cast<const void*>(head_values + s0);
      const int64_t key_stride = copies ? head_dim * 4 : kv_dim * 2;
      const int64_t value_stride = copies ? span * 4 : static_cast<int64_t>(slots) * 2;
      // A token's queries of the group are contiguous; a tile of several
      // tokens gathers them into one block of rows (and scatters the output).
      float* out = out_all + static_cast<int64_t>(t0) * q_dim + head0;
      const float* q = gather_queries(q_all + static_cast<int64_t>(t0) * q_dim + head0, tokens, q_dim, group_floats,
                                      tile_q);
      float* result = tokens > 1 ? tile_out : out;
      // att[a, s] = q_a · k_s, then the softmax over the slots a's token sees.
      const int64_t n_slots = s1 - s0;
      gemm(rows, head_dim, key_rows, key_stride, static_cast<int>(n_slots), q, head_dim * 4, acts, att, n_ctx_);
      for (int a = 0; a < acts; ++a) {
        float* scores = att + static_cast<int64_t>(a) * n_ctx_;
        const int64_t at = first + a / group;  // the token's position
        const float scale = p.softcap > 0 ? 1.0f : p.scale;
        if (!wrapped) {  // slot = position
          const int64_t seen = p.window > 0 ? std::max<int64_t>(0, at - p.window + 1) : 0;
          if (p.softcap > 0) soft_cap(scores + (seen - s0), at - seen + 1, p.scale, p.softcap);
          std::fill(scores, scores + (seen - s0), kMasked);
          softmax(scores, at - s0 + 1, scale);
          std::fill(scores + (at - s0 + 1), scores + n_slots, 0.0f);
          continue;
        }
        for (int64_t s = 0; s < slots; ++s) {
          const int64_t u = len - 1 - (len - 1 - s) % slots;  // the position slot s holds
          if (u > at || u <= at - p.window) {
            scores[s] = kMasked;
          } else if (p.softcap > 0) {
            soft_cap(scores + s, 1, p.scale, p.softcap);
          }
        }
        softmax(scores, slots, scale);
      }
      // result[a, i] = Σ_s att[a, s] · v_s[i]: row i of the transposed values.
      gemm(rows, static_cast<int>(n_slots), value_rows, value_stride, head_dim, att, n_ctx_ * 4, acts, result,
           head_dim);
      if (tokens > 1) scatter_outputs(tile_out, tokens, q_dim, group_floats, out);
    }
  });
}

}  // namespace wllm

namespace wllm {

void Attention::run_packed(int l, const float* q_all, const float* k, const float* values_t, int64_t values_stride,
                           int n, const int32_t* first, const int32_t* end, bool causal, const AttentionParams& p,
                           float* out_all, ThreadPool& pool) {
  const ModelConfig& c = config_;
  const int n_kv_heads = c.layers[l].n_kv_heads;
  const int group = c.n_heads / n_kv_heads, head_dim = c.head_dim, kv_dim = n_kv_heads * head_dim, q_dim = c.q_dim();
  const int tile = tile_tokens(group);
  const int64_t group_floats = static_cast<int64_t>(group) * head_dim;
  const TypeTraits& f32 = type_traits(TensorType::kF32);
  // Tiles of up to `tile` consecutive tokens of one text.
  int tiles = 0;
  for (int t = 0; t < n; t += std::min(tile, end[t] - t)) tile_starts_[tiles++] = t;
  pool.run([&](int ith, int nth) {
    float* att = att_.data() + static_cast<int64_t>(ith) * tile_acts_ * n_ctx_;  // (tile · group, n_ctx)
    float* tile_q = tile_qo_.data() + static_cast<int64_t>(ith) * 2 * tile_acts_ * head_dim;  // (tile · group, head_dim)
    float* tile_out = tile_q + static_cast<int64_t>(tile) * group_floats;                      // (tile · group, head_dim)
    int64_t begin, stop;
    split_range(static_cast<int64_t>(tiles) * n_kv_heads, ith, nth, &begin, &stop);
    for (int64_t item = begin; item < stop; ++item) {
      const int g = static_cast<int>(item / tiles), t0 = tile_starts_[item % tiles];
      const int tokens = std::min(tile, end[t0] - t0), acts = tokens * group;
      const int64_t head0 = static_cast<int64_t>(g) * group_floats;  // the group's first query head
      // The tile's slots: its text, or (causal) the text up to its last token.
      const int s0 = first[t0], n_slots = (causal ? t0 + tokens : end[t0]) - s0;
      const float* key_rows = k + static_cast<int64_t>(s0) * kv_dim + static_cast<int64_t>(g) * head_dim;
      const float* value_rows = values_t + static_cast<int64_t>(g) * head_dim * values_stride + s0;
      float* out = out_all + static_cast<int64_t>(t0) * q_dim + head0;
      const float* q = gather_queries(q_all + static_cast<int64_t>(t0) * q_dim + head0, tokens, q_dim, group_floats,
                                      tile_q);
      float* result = tokens > 1 ? tile_out : out;
      // att[a, s] = q_a · k_s, then the softmax over the slots a's token sees.
      gemm(f32, head_dim, key_rows, kv_dim * 4, n_slots, q, head_dim * 4, acts, att, n_ctx_);
      for (int a = 0; a < acts; ++a) {
        float* scores = att + static_cast<int64_t>(a) * n_ctx_;
        const int t = t0 + a / group;
        const int seen = causal ? t - s0 + 1 : n_slots;
        float scale = p.scale;
        if (!alibi_slopes_.empty()) {  // scores·scale + slope·−|u − t|, then a softmax of scale 1
          const float slope = alibi_slopes_[g * group + a % group];
          for (int s = 0; s < seen; ++s) scores[s] = scores[s] * p.scale + slope * -static_cast<float>(std::abs(s0 + s - t));
          scale = 1.0f;
        }
        softmax(scores, seen, scale);
        std::fill(scores + seen, scores + n_slots, 0.0f);
      }
      // result[a, i] = Σ_s att[a, s] · v_s[i]: row i of the transposed values.
      gemm(f32, n_slots, value_rows, values_stride * 4, head_dim, att, n_ctx_ * 4, acts, result, head_dim);
      if (tokens > 1) scatter_outputs(tile_out, tokens, q_dim, group_floats, out);
    }
  });
}

}  // namespace wllm
