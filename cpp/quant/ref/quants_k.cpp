// K-quants: Q2_K, Q3_K, Q4_K, Q5_K, Q6_K in 256-element super-blocks, dotted
// against Q8_K. Dequantizers follow ggml/src/ggml-quants.c dequantize_row_*_K
// (same float operations, so the same bits); quantizers port its
// quantize_row_*_K_ref with the make_qkx2_quants / make_q3_quants /
// make_qx_quants searches. Dot formulas are listed in ref.h.
//
// Each kernel first unpacks a block's codes into q[256] (signed, offset
// removed where the format has one), then works per sub-block.
#include <cmath>
#include <cstring>

#include "core/half.h"
#include "quant/blocks.h"
#include "quant/ref/ref.h"
#include "quant/traits.h"

namespace wllm::ref {
namespace {

constexpr float kGroupMaxEps = 1e-15f;  // ggml's GROUP_MAX_EPS: "all zero" below this

// ---- unpacking codes (element order as documented in blocks.h) --------------

// Low 2 bits shared by Q2_K and Q3_K: element i is bits 2g..2g+1 of
// qs[32h + i%32], h = i/128, g = (i%128)/32.
inline void unpack_2bit(const uint8_t qs[64], int8_t q[kQK_K]) {
  for (int i = 0; i < kQK_K; ++i) {
    const int h = i / 128, g = (i % 128) / 32;
    q[i] = static_cast<int8_t>((qs[32 * h + i % 32] >> (2 * g)) & 3);
  }
}

inline void unpack_q3_K(const BlockQ3_K& b, int8_t q[kQK_K]) {
  unpack_2bit(b.qs, q);
  for (int i = 0; i < kQK_K; ++i) {
    if (((b.hmask[i % 32] >> (i / 32)) & 1) == 0) q[i] = static_cast<int8_t>(q[i] - 4);
  }
}

// Q4_K/Q5_K low nibbles: element i is nibble (i%64)/32 of qs[32*(i/64) + i%32].
inline void unpack_4bit(const uint8_t qs[128], int8_t q[kQK_K]) {
  for (int i = 0; i < kQK_K; ++i) {
    q[i] = static_cast<int8_t>((qs[32 * (i / 64) + i % 32] >> (4 * ((i % 64) / 32))) & 15);
  }
}

inline void unpack_q4_K(const BlockQ4_K& b, int8_t q[kQK_K]) { unpack_4bit(b.qs, q); }

inline void unpack_q5_K(const BlockQ5_K& b, int8_t q[kQK_K]) {
  unpack_4bit(b.qs, q);
  for (int i = 0; i < kQK_K; ++i) q[i] = static_cast<int8_t>(q[i] | (((b.qh[i % 32] >> (i / 32)) & 1) << 4));
}

inline void unpack_q6_K(const BlockQ6_K& b, int8_t q[kQK_K]) {
  for (int i = 0; i < kQK_K; ++i) {
    const int h = i / 128, g = (i % 128) / 32, l = i % 32;
    const int low = (b.ql[64 * h + 32 * (g & 1) + l] >> (4 * (g >> 1))) & 15;
    const int high = (b.qh[32 * h + l] >> (2 * g)) & 3;
    q[i] = static_cast<int8_t>((low | (high << 4)) - 32);
  }
}

// Σ q_i·x_i over n elements, exact.
inline int32_t isum(const int8_t* q, const int8_t* x, int n) {
  int32_t s = 0;
  for (int i = 0; i < n; ++i) s += q[i] * x[i];
  return s;
}

// Q4_K and Q5_K share everything but how their quants unpack: eight 32-element
// sub-blocks, each with a 6-bit scale and a 6-bit min (k4_scale_min).
template <typename Block, void (*unpack)(const Block&, int8_t*)>
void to_float_k4_like(const void* src, float* dst, int64_t n) {
  const Block* b = static_cast<const Block*>(src);
  int8_t q[kQK_K];
  for (int64_t ib = 0; ib < n / kQK_K; ++ib, dst += kQK_K) {
    const float d = f16_to_f32(b[ib].d);
    const float dmin = f16_to_f32(b[ib].dmin);
    unpack(b[ib], q);
    for (int j = 0; j < 8; ++j) {
      int sc, m;
      k4_scale_min(b[ib].scales, j, &sc, &m);
      const float dl = d * static_cast<float>(sc);
      const float ml = dmin * static_cast<float>(m);
      for (int l = 0; l < 32; ++l) dst[32 * j + l] = dl * static_cast<float>(q[32 * j + l]) - ml;
    }
  }
}

template <typename Block, void (*unpack)(const Block&, int8_t*)>
float dot_k4_like(int64_t n, const void* row, const void* act) {
  const Block* w = static_cast<const Block*>(row);
  const BlockQ8_K* x = static_cast<const BlockQ8_K*>(act);
  int8_t q[kQK_K];
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t ib = 0; ib < n / kQK_K; ++ib) {
    unpack(w[ib], q);
    int32_t sumi = 0, summ = 0;
    for (int j = 0; j < 8; ++j) {
      int sc, m;
      k4_scale_min(w[ib].scales, j, &sc, &m);
      sumi += sc * isum(q + 32 * j, x[ib].qs + 32 * j, 32);
      summ += m * (x[ib].bsums[2 * j] + x[ib].bsums[2 * j + 1]);
    }
    const float dx = x[ib].d;
    const float term = (dx * f16_to_f32(w[ib].d)) * static_cast<float>(sumi) -
                       (dx * f16_to_f32(w[ib].dmin)) * static_cast<float>(summ);
    acc[ib % 8] += term;
  }
  return sum_lanes8(acc);
}

// ---- packing (inverse of the above) ------------------------------------------

// L[i] in 0..3 into the 2-bit layout.
inline void pack_2bit(const uint8_t L[kQK_K], uint8_t qs[64]) {
  for (int h = 0; h < 2; ++h) {
    for (int l = 0; l < 32; ++l) {
      const uint8_t* s = L + 128 * h + l;
      qs[32 * h + l] = static_cast<uint8_t>(s[0] | (s[32] << 2) | (s[64] << 4) | (s[96] << 6));
    }
  }
}

// L[i] in 0..15 into the Q4_K/Q5_K nibble layout.
inline void pack_4bit(const uint8_t L[kQK_K], uint8_t qs[128]) {
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l) qs[32 * c + l] = static_cast<uint8_t>((L[64 * c + l] & 15) | ((L[64 * c + l + 32] & 15) << 4));
  }
}

// 6-bit scales ls[j] and mins lm[j] (j < 8) into Q4_K/Q5_K's 12 bytes.
inline void pack_k4_scales(const int ls[8], const int lm[8], uint8_t s[12]) {
  std::memset(s, 0, 12);
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      s[j] = static_cast<uint8_t>(ls[j]);
      s[j + 4] = static_cast<uint8_t>(lm[j]);
    } else {
      s[j + 4] = static_cast<uint8_t>((ls[j] & 15) | ((lm[j] & 15) << 4));
      s[j - 4] = static_cast<uint8_t>(s[j - 4] | ((ls[j] >> 4) << 6));
      s[j] = static_cast<uint8_t>(s[j] | ((lm[j] >> 4) << 6));
    }
  }
}

// 6-bit biased scales l[j] (j < 16, 0..63) into Q3_K's 12 bytes.
inline void pack_q3_K_scales(const int l[16], uint8_t s[12]) {
  std::memset(s, 0, 12);
  for (int j = 0; j < 16; ++j) {
    if (j < 8) {
      s[j] = static_cast<uint8_t>(l[j] & 15);
    } else {
      s[j - 8] = static_cast<uint8_t>(s[j - 8] | ((l[j] & 15) << 4));
    }
    s[8 + j % 4] = static_cast<uint8_t>(s[8 + j % 4] | ((l[j] >> 4) << (2 * (j / 4))));
  }
}

// ---- ggml's scale searches ------------------------------------------------------

// make_qkx2_quants: fits x ≈ scale·L - the_min with L in 0..nmax, weighted by
// `weights`, trying nstep+1 candidate inverse scales around nmax/(max-min) and
// solving least squares for scale and min at each; keeps the lowest weighted
// error (|diff| if use_mad, else diff²). Returns scale; min is clamped ≤ 0.
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* the_min,
                       uint8_t* Laux, float rmin, float rdelta, int nstep, bool use_mad) {
  float min = x[0];
  float max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    const float w = weights[i];
    sum_w += w;
    sum_x += w * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    *the_min = -min;
    return 0.0f;
  }
  float iscale = static_cast<float>(nmax) / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < n; ++i) {
    L[i] = static_cast<uint8_t>(round_clamp(iscale * (x[i] - min), 0, nmax));
    float diff = scale * L[i] + min - x[i];
    diff = use_mad ? std::fabs(diff) : diff * diff;
    best_error += weights[i] * diff;
  }
  if (nstep < 1) {
    *the_min = -min;
    return scale;
  }
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * is + nmax) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = round_clamp(iscale * (x[i] - min), 0, nmax);
      Laux[i] = static_cast<uint8_t>(l);
      const float w = weights[i];
      sum_l += w * l;
      sum_l2 += w * l * l;
      sum_xl += w * l * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (D > 0) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
      if (this_min > 0) {
        this_min = 0;
        this_scale = sum_xl / sum_l2;
      }
      float cur_error = 0;
      for (int i = 0; i < n; ++i) {
        float diff = this_scale * Laux[i] + this_min - x[i];
        diff = use_mad ? std::fabs(diff) : diff * diff;
        cur_error += weights[i] * diff;
      }
      if (cur_error < best_error) {
        for (int i = 0; i < n; ++i) L[i] = Laux[i];
        best_error = cur_error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *the_min = -min;
  return scale;
}

// make_q3_quants with do_rmse: symmetric L in -nmax..nmax-1 (stored + nmax),
// the signed max mapping to -nmax, then up to 5 rounds of coordinate descent
// on the x²-weighted least-squares error. Returns the scale (sign included).
float make_q3_quants(int n, int nmax, const float* x, int8_t* L) {
  float max = 0, amax = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    return 0.0f;
  }
  const float iscale = static_cast<float>(-nmax) / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = round_clamp(iscale * x[i], -nmax, nmax - 1);
    L[i] = static_cast<int8_t>(l);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * l;
    suml2 += w * l * l;
  }
  for (int itry = 0; itry < 5; ++itry) {
    int n_changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      float slx = sumlx - w * x[i] * L[i];
      if (slx > 0) {
        float sl2 = suml2 - w * L[i] * L[i];
        const int new_l = round_clamp(x[i] * sl2 / slx, -nmax, nmax - 1);
        if (new_l != L[i]) {
          slx += w * x[i] * new_l;
          sl2 += w * new_l * new_l;
          if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
            L[i] = static_cast<int8_t>(new_l);
            sumlx = slx;
            suml2 = sl2;
            ++n_changed;
          }
        }
      }
    }
    if (!n_changed) break;
  }
  for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(L[i] + nmax);
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// make_qx_quants with rmse_type 1 and no importance weights (what Q6_K's ref
// quantizer uses): symmetric L as make_q3_quants, weights x², trying inverse
// scales -(nmax + 0.1·is)/max for is in -9..9 and keeping the best
// least-squares fit. Returns the scale (sign included).
float make_qx_quants(int n, int nmax, const float* x, int8_t* L) {
  float max = 0, amax = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    return 0.0f;
  }
  float iscale = static_cast<float>(-nmax) / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = round_clamp(iscale * x[i], -nmax, nmax - 1);
    L[i] = static_cast<int8_t>(l + nmax);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * l;
    suml2 += w * l * l;
  }
  float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    iscale = -(nmax + 0.1f * is) / max;
    sumlx = suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = round_clamp(iscale * x[i], -nmax, nmax - 1);
      const float w = x[i] * x[i];
      sumlx += w * x[i] * l;
      suml2 += w * l * l;
    }
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(nmax + round_clamp(iscale * x[i], -nmax, nmax - 1));
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// Q4_K and Q5_K share everything but the code width (nmax 15 or 31) and the
// search parameters. Writes d, dmin, the packed scales and the codes L.
void quantize_k4_like(const float* x, int nmax, float rmin, int nstep, uint16_t* d_out, uint16_t* dmin_out,
                      uint8_t scales_out[12], uint8_t L[kQK_K]) {
  float scales[8], mins[8], weights[32];
  uint8_t Laux[32];
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < 8; ++j) {
    const float* xs = x + 32 * j;
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += xs[l] * xs[l];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(xs[l]);
    scales[j] = make_qkx2_quants(32, nmax, xs, weights, L + 32 * j, &mins[j], Laux, rmin, 0.1f, nstep, false);
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }
  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  int ls[8], lm[8];
  for (int j = 0; j < 8; ++j) {
    // ggml stores min(63, (uint8_t)nearest_int(...)); a negative scale (never
    // produced for finite input) is clamped to 0 here instead of wrapping.
    ls[j] = round_clamp(inv_scale * scales[j], 0, 63);
    lm[j] = round_clamp(inv_min * mins[j], 0, 63);
  }
  pack_k4_scales(ls, lm, scales_out);
  *d_out = f32_to_f16(max_scale / 63.f);
  *dmin_out = f32_to_f16(max_min / 63.f);
  // Requantize against the scales as stored.
  for (int j = 0; j < 8; ++j) {
    int sc, m;
    k4_scale_min(scales_out, j, &sc, &m);
    const float d = f16_to_f32(*d_out) * sc;
    if (d == 0.0f) continue;
    const float dm = f16_to_f32(*dmin_out) * m;
    for (int l = 0; l < 32; ++l) L[32 * j + l] = static_cast<uint8_t>(round_clamp((x[32 * j + l] + dm) / d, 0, nmax));
  }
}

}  // namespace

// ---- Q2_K --------------------------------------------------------------------

void to_float_q2_K(const void* src, float* dst, int64_t n) {
  const BlockQ2_K* b = static_cast<const BlockQ2_K*>(src);
  int8_t q[kQK_K];
  for (int64_t ib = 0; ib < n / kQK_K; ++ib, dst += kQK_K) {
    const float d = f16_to_f32(b[ib].d);
    const float dmin = f16_to_f32(b[ib].dmin);
    unpack_2bit(b[ib].qs, q);
    for (int j = 0; j < 16; ++j) {
      const float dl = d * static_cast<float>(b[ib].scales[j] & 15);
      const float ml = dmin * static_cast<float>(b[ib].scales[j] >> 4);
      for (int l = 0; l < 16; ++l) dst[16 * j + l] = dl * static_cast<float>(q[16 * j + l]) - ml;
    }
  }
}

// Per 16-element sub-block: make_qkx2_quants(nmax 3, weights |x|, mean
// absolute error); scales and mins to 4 bits against their maxima.
void from_float_q2_K(const float* src, void* dst, int64_t n) {
  BlockQ2_K* b = static_cast<BlockQ2_K*>(dst);
  uint8_t L[kQK_K], Laux[16];
  float weights[16], mins[16], scales[16];
  for (int64_t ib = 0; ib < n / kQK_K; ++ib, src += kQK_K) {
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < 16; ++j) {
      for (int l = 0; l < 16; ++l) weights[l] = std::fabs(src[16 * j + l]);
      scales[j] = make_qkx2_quants(16, 3, src + 16 * j, weights, L + 16 * j, &mins[j], Laux, -0.5f, 0.1f, 15, true);
      if (scales[j] > max_scale) max_scale = scales[j];
      if (mins[j] > max_min) max_min = mins[j];
    }
    if (max_scale > 0) {
      const float iscale = 15.f / max_scale;
      for (int j = 0; j < 16; ++j) b[ib].scales[j] = static_cast<uint8_t>(round_clamp(iscale * scales[j], 0, 15));
      b[ib].d = f32_to_f16(max_scale / 15.f);
    } else {
      for (int j = 0; j < 16; ++j) b[ib].scales[j] = 0;
      b[ib].d = f32_to_f16(0.f);
    }
    if (max_min > 0) {
      const float iscale = 15.f / max_min;
      for (int j = 0; j < 16; ++j) {
        b[ib].scales[j] = static_cast<uint8_t>(b[ib].scales[j] | (round_clamp(iscale * mins[j], 0, 15) << 4));
      }
      b[ib].dmin = f32_to_f16(max_min / 15.f);
    } else {
      b[ib].dmin = f32_to_f16(0.f);
    }
    for (int j = 0; j < 16; ++j) {
      const float d = f16_to_f32(b[ib].d) * (b[ib].scales[j] & 15);
      if (d == 0.0f) continue;
      const float dm = f16_to_f32(b[ib].dmin) * (b[ib].scales[j] >> 4);
      for (int l = 0; l < 16; ++l) L[16 * j + l] = static_cast<uint8_t>(round_clamp((src[16 * j + l] + dm) / d, 0, 3));
    }
    pack_2bit(L, b[ib].qs);
  }
}

float dot_q2_K_q8_K(int64_t n, const void* row, const void* act) {
  const BlockQ2_K* w = static_cast<const BlockQ2_K*>(row);
  const BlockQ8_K* x = static_cast<const BlockQ8_K*>(act);
  int8_t q[kQK_K];
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t ib = 0; ib < n / kQK_K; ++ib) {
    unpack_2bit(w[ib].qs, q);
    int32_t sumi = 0, summ = 0;
    for (int j = 0; j < 16; ++j) {
      sumi += (w[ib].scales[j] & 15) * isum(q + 16 * j, x[ib].qs + 16 * j, 16);
      summ += (w[ib].scales[j] >> 4) * x[ib].bsums[j];
    }
    const float dx = x[ib].d;
    const float term = (dx * f16_to_f32(w[ib].d)) * static_cast<float>(sumi) -
                       (dx * f16_to_f32(w[ib].dmin)) * static_cast<float>(summ);
    acc[ib % 8] += term;
  }
  return sum_lanes8(acc);
}

// ---- Q3_K --------------------------------------------------------------------

void to_float_q3_K(const void* src, float* dst, int64_t n) {
  const BlockQ3_K* b = static_cast<const BlockQ3_K*>(src);
  int8_t q[kQK_K];
  for (int64_t ib = 0; ib < n / kQK_K; ++ib, dst += kQK_K) {
    const float d = f16_to_f32(b[ib].d);
    unpack_q3_K(b[ib], q);
    for (int j = 0; j < 16; ++j) {
      const float dl = d * static_cast<float>(q3_K_scale(b[ib].scales, j) - 32);
      for (int l = 0; l < 16; ++l) dst[16 * j + l] = dl * static_cast<float>(q[16 * j + l]);
    }
  }
}

// Per 16-element sub-block: make_q3_quants (symmetric, -4..3); the signed
// largest scale maps to -32 in the 6-bit biased super-scale.
void from_float_q3_K(const float* src, void* dst, int64_t n) {
  BlockQ3_K* b = static_cast<BlockQ3_K*>(dst);
  int8_t L[kQK_K];
  float scales[16];
  for (int64_t ib = 0; ib < n / kQK_K; ++ib, src += kQK_K) {
    float max_scale = 0, amax = 0;
    for (int j = 0; j < 16; ++j) {
      scales[j] = make_q3_quants(16, 4, src + 16 * j, L + 16 * j);
      const float scale = std::fabs(scales[j]);
      if (scale > amax) {
        amax = scale;
        max_scale = scales[j];
      }
    }
    int ls[16] = {};
    if (max_scale != 0.0f) {
      const float iscale = -32.f / max_scale;
      for (int j = 0; j < 16; ++j) ls[j] = round_clamp(iscale * scales[j], -32, 31) + 32;
      pack_q3_K_scales(ls, b[ib].scales);
      b[ib].d = f32_to_f16(1 / iscale);
    } else {
      std::memset(b[ib].scales, 0, 12);
      b[ib].d = f32_to_f16(0.f);
    }
    for (int j = 0; j < 16; ++j) {
      const float d = f16_to_f32(b[ib].d) * (q3_K_scale(b[ib].scales, j) - 32);
      if (d == 0.0f) continue;
      for (int l = 0; l < 16; ++l) L[16 * j + l] = static_cast<int8_t>(round_clamp(src[16 * j + l] / d, -4, 3) + 4);
    }
    // Bit 2 goes to hmask (element i: bit i/32 of hmask[i%32]); the low 2 bits to qs.
    std::memset(b[ib].hmask, 0, sizeof(b[ib].hmask));
    uint8_t low[kQK_K];
    for (int i = 0; i < kQK_K; ++i) {
      if (L[i] > 3) b[ib].hmask[i % 32] = static_cast<uint8_t>(b[ib].hmask[i % 32] | (1 << (i / 32)));
      low[i] = static_cast<uint8_t>(L[i] & 3);
    }
    pack_2bit(low, b[ib].qs);
  }
}

float dot_q3_K_q8_K(int64_t n, const void* row, const void* act) {
  const BlockQ3_K* w = static_cast<const BlockQ3_K*>(row);
  const BlockQ8_K* x = static_cast<const BlockQ8_K*>(act);
  int8_t q[kQK_K];
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t ib = 0; ib < n / kQK_K; ++ib) {
    unpack_q3_K(w[ib], q);
    int32_t sumi = 0;
    for (int j = 0; j < 16; ++j) sumi += (q3_K_scale(w[ib].scales, j) - 32) * isum(q + 16 * j, x[ib].qs + 16 * j, 16);
    const float term = (x[ib].d * f16_to_f32(w[ib].d)) * static_cast<float>(sumi);
    acc[ib % 8] += term;
  }
  return sum_lanes8(acc);
}

// ---- Q4_K --------------------------------------------------------------------

void to_float_q4_K(const void* src, float* dst, int64_t n) { to_float_k4_like<BlockQ4_K, unpack_q4_K>(src, dst, n); }

// Per 32-element sub-block: make_qkx2_quants(nmax 15, weights av|x| + |x|,
// 21 steps from -1); scales and mins to 6 bits against their maxima.
void from_float_q4_K(const float* src, void* dst, int64_t n) {
  BlockQ4_K* b = static_cast<BlockQ4_K*>(dst);
  uint8_t L[kQK_K];
  for (int64_t ib = 0; ib < n / kQK_K; ++ib, src += kQK_K) {
    quantize_k4_like(src, 15, -1.f, 20, &b[ib].d, &b[ib].dmin, b[ib].scales, L);
    pack_4bit(L, b[ib].qs);
  }
}

float dot_q4_K_q8_K(int64_t n, const void* row, const void* act) {
  return dot_k4_like<BlockQ4_K, unpack_q4_K>(n, row, act);
}

// ---- Q5_K --------------------------------------------------------------------

void to_float_q5_K(const void* src, float* dst, int64_t n) { to_float_k4_like<BlockQ5_K, unpack_q5_K>(src, dst, n); }

// As Q4_K with nmax 31 and 16 steps from -0.5; bit 4 of element i goes to
// bit i/32 of qh[i%32].
void from_float_q5_K(const float* src, void* dst, int64_t n) {
  BlockQ5_K* b = static_cast<BlockQ5_K*>(dst);
  uint8_t L[kQK_K];
  for (int64_t ib = 0; ib < n / kQK_K; ++ib, src += kQK_K) {
    quantize_k4_like(src, 31, -0.5f, 15, &b[ib].d, &b[ib].dmin, b[ib].scales, L);
    std::memset(b[ib].qh, 0, sizeof(b[ib].qh));
    for (int i = 0; i < kQK_K; ++i) {
      if (L[i] > 15) b[ib].qh[i % 32] = static_cast<uint8_t>(b[ib].qh[i % 32] | (1 << (i / 32)));
    }
    pack_4bit(L, b[ib].qs);
  }
}

float dot_q5_K_q8_K(int64_t n, const void* row, const void* act) {
  return dot_k4_like<BlockQ5_K, unpack_q5_K>(n, row, act);
}

// ---- Q6_K --------------------------------------------------------------------

void to_float_q6_K(const void* src, float* dst, int64_t n) {
  const BlockQ6_K* b = static_cast<const BlockQ6_K*>(src);
  int8_t q[kQK_K];
  for (int64_t ib = 0; ib < n / kQK_K; ++ib, dst += kQK_K) {
    const float d = f16_to_f32(b[ib].d);
    unpack_q6_K(b[ib], q);
    for (int j = 0; j < 16; ++j) {
      const float dl = d * static_cast<float>(b[ib].scales[j]);
      for (int l = 0; l < 16; ++l) dst[16 * j + l] = dl * static_cast<float>(q[16 * j + l]);
    }
  }
}

// Per 16-element sub-block: make_qx_quants (symmetric, -32..31); the signed
// largest scale maps to -128 in the 8-bit scales.
void from_float_q6_K(const float* src, void* dst, int64_t n) {
  BlockQ6_K* b = static_cast<BlockQ6_K*>(dst);
  int8_t L[kQK_K];
  float scales[16];
  for (int64_t ib = 0; ib < n / kQK_K; ++ib, src += kQK_K) {
    float max_scale = 0, max_abs_scale = 0;
    for (int j = 0; j < 16; ++j) {
      scales[j] = make_qx_quants(16, 32, src + 16 * j, L + 16 * j);
      const float abs_scale = std::fabs(scales[j]);
      if (abs_scale > max_abs_scale) {
        max_abs_scale = abs_scale;
        max_scale = scales[j];
      }
    }
    if (max_abs_scale < kGroupMaxEps) {
      std::memset(&b[ib], 0, sizeof(BlockQ6_K));
      continue;
    }
    const float iscale = -128.f / max_scale;
    b[ib].d = f32_to_f16(1 / iscale);
    for (int j = 0; j < 16; ++j) b[ib].scales[j] = static_cast<int8_t>(round_clamp(iscale * scales[j], -128, 127));
    for (int j = 0; j < 16; ++j) {
      const float d = f16_to_f32(b[ib].d) * b[ib].scales[j];
      if (d == 0.0f) continue;
      for (int l = 0; l < 16; ++l) L[16 * j + l] = static_cast<int8_t>(round_clamp(src[16 * j + l] / d, -32, 31) + 32);
    }
    for (int h = 0; h < 2; ++h) {
      for (int l = 0; l < 32; ++l) {
        const int8_t* s = L + 128 * h + l;
        b[ib].ql[64 * h + l] = static_cast<uint8_t>((s[0] & 15) | ((s[64] & 15) << 4));
        b[ib].ql[64 * h + l + 32] = static_cast<uint8_t>((s[32] & 15) | ((s[96] & 15) << 4));
        b[ib].qh[32 * h + l] = static_cast<uint8_t>((s[0] >> 4) | ((s[32] >> 4) << 2) | ((s[64] >> 4) << 4) | ((s[96] >> 4) << 6));
      }
    }
  }
}

float dot_q6_K_q8_K(int64_t n, const void* row, const void* act) {
  const BlockQ6_K* w = static_cast<const BlockQ6_K*>(row);
  const BlockQ8_K* x = static_cast<const BlockQ8_K*>(act);
  int8_t q[kQK_K];
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t ib = 0; ib < n / kQK_K; ++ib) {
    unpack_q6_K(w[ib], q);
    int32_t sumi = 0;
    for (int j = 0; j < 16; ++j) sumi += w[ib].scales[j] * isum(q + 16 * j, x[ib].qs + 16 * j, 16);
    const float term = (x[ib].d * f16_to_f32(w[ib].d)) * static_cast<float>(sumi);
    acc[ib % 8] += term;
  }
  return sum_lanes8(acc);
}

}  // namespace wllm::ref
