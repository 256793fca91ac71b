// Tensor types: every row of the traits table checked against decoders written
// here from ggml's byte layouts (not from blocks.h), hand-built blocks with
// values worked out by hand, round-trip error bounds, dot products against
// double-precision references, the fixed lane structure, edge data and
// determinism. Generic tests loop over all_type_traits(); per-type data (the
// decoders, hand-built blocks and error bounds) live in tables below, and a
// coverage test fails if a table lacks a row for a type.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/half.h"
#include "quant/traits.h"

namespace wllm {
namespace {

// ---- helpers -------------------------------------------------------------------

using Bytes = std::vector<uint8_t>;

std::vector<const TypeTraits*> all_types() {
  size_t count = 0;
  const TypeTraits* table = all_type_traits(&count);
  std::vector<const TypeTraits*> out;
  for (size_t i = 0; i < count; ++i) out.push_back(&table[i]);
  return out;
}

bool is_float_type(const TypeTraits& t) { return t.block_size == 1; }

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// splitmix64: the same numbers on every platform and standard library.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
  // Irwin-Hall(12) - 6: mean 0, variance 1, no libm.
  float gauss() {
    double a = 0;
    for (int i = 0; i < 12; ++i) a += uniform();
    return static_cast<float>(a - 6);
  }
  std::vector<float> gauss_vec(int64_t n, float scale = 1.0f, float offset = 0.0f) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = gauss() * scale + offset;
    return v;
  }

 private:
  uint64_t state_;
};

Bytes quantize(const TypeTraits& t, const std::vector<float>& x) {
  Bytes q(static_cast<size_t>(row_bytes(t, static_cast<int64_t>(x.size()))));
  t.from_float(x.data(), q.data(), static_cast<int64_t>(x.size()));
  return q;
}

std::vector<float> dequantize(const TypeTraits& t, const Bytes& q, int64_t n) {
  std::vector<float> y(static_cast<size_t>(n));
  t.to_float(q.data(), y.data(), n);
  return y;
}

// sqrt(Σe²/n) / sqrt(Σx²/n).
double relative_rmse(const std::vector<float>& x, const std::vector<float>& y) {
  double se = 0, sx = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double e = static_cast<double>(x[i]) - y[i];
    se += e * e;
    sx += static_cast<double>(x[i]) * x[i];
  }
  return std::sqrt(se / x.size()) / std::sqrt(sx / x.size());
}

// Decoding straight from bytes, little-endian.
uint16_t rd16(const uint8_t* p, int off) { return static_cast<uint16_t>(p[off] | (p[off + 1] << 8)); }
uint32_t rd32(const uint8_t* p, int off) {
  return static_cast<uint32_t>(p[off]) | static_cast<uint32_t>(p[off + 1]) << 8 |
         static_cast<uint32_t>(p[off + 2]) << 16 | static_cast<uint32_t>(p[off + 3]) << 24;
}
int8_t i8(const uint8_t* p, int off) { return static_cast<int8_t>(p[off]); }

// IEEE half and bfloat16 from their definitions, independent of core/half.h.
float half_value(uint16_t h) {
  const int sign = (h >> 15) ? -1 : 1;
  const int exp = (h >> 10) & 31;
  const int mant = h & 1023;
  if (exp == 31) return mant ? std::numeric_limits<float>::quiet_NaN() : sign * std::numeric_limits<float>::infinity();
  if (exp == 0) return static_cast<float>(sign * std::ldexp(static_cast<double>(mant), -24));
  return static_cast<float>(sign * std::ldexp(static_cast<double>(1024 + mant), exp - 25));
}
float bf16_value(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
float f16at(const uint8_t* p, int off) { return half_value(rd16(p, off)); }

// Q3_K's 16 six-bit scales the way ggml's dequantize_row_q3_K derives them: four
// little-endian u32 words and masks (a different route from blocks.h).
void q3k_scales(const uint8_t* s, int out[16]) {
  const uint32_t kmask1 = 0x03030303, kmask2 = 0x0f0f0f0f;
  uint32_t aux[4] = {rd32(s, 0), rd32(s, 4), rd32(s, 8), 0};
  const uint32_t tmp = aux[2];
  aux[2] = ((aux[0] >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4);
  aux[3] = ((aux[1] >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4);
  aux[0] = (aux[0] & kmask2) | (((tmp >> 0) & kmask1) << 4);
  aux[1] = (aux[1] & kmask2) | (((tmp >> 2) & kmask1) << 4);
  for (int j = 0; j < 16; ++j) out[j] = static_cast<int>((aux[j / 4] >> (8 * (j % 4))) & 0xff) - 32;
}

// Q4_K/Q5_K's 8 scales and 8 mins the way ggml's vec_dot unpacks them (utmp words).
void k4_scales(const uint8_t* s, int sc[8], int m[8]) {
  const uint32_t kmask1 = 0x3f3f3f3f, kmask2 = 0x0f0f0f0f, kmask3 = 0x03030303;
  uint32_t utmp[4] = {rd32(s, 0), rd32(s, 4), rd32(s, 8), 0};
  utmp[3] = ((utmp[2] >> 4) & kmask2) | (((utmp[1] >> 6) & kmask3) << 4);
  const uint32_t uaux = utmp[1] & kmask1;
  utmp[1] = (utmp[2] & kmask2) | (((utmp[0] >> 6) & kmask3) << 4);
  utmp[2] = uaux;
  utmp[0] &= kmask1;
  for (int j = 0; j < 8; ++j) {
    sc[j] = static_cast<int>((utmp[j / 4] >> (8 * (j % 4))) & 0xff);
    m[j] = static_cast<int>((utmp[2 + j / 4] >> (8 * (j % 4))) & 0xff);
  }
}

// Element i of one block, computed from ggml's layout with the float
// operations of ggml's dequantize_row_* (so the result must match exactly).
using ElementFn = float (*)(const uint8_t* b, int i);

float el_f32(const uint8_t* b, int i) {
  float f;
  std::memcpy(&f, b + 4 * i, 4);
  return f;
}
float el_f16(const uint8_t* b, int i) { return half_value(rd16(b, 2 * i)); }
float el_bf16(const uint8_t* b, int i) { return bf16_value(rd16(b, 2 * i)); }

int nibble32(const uint8_t* qs, int i) { return i < 16 ? (qs[i] & 15) : (qs[i - 16] >> 4); }
int bit5(const uint8_t* qh, int i) { return ((qh[i / 8] >> (i % 8)) & 1) << 4; }

// Integer codes of element i, offset removed where the format has one.
int code_q4_0(const uint8_t* b, int i) { return nibble32(b + 2, i) - 8; }       // {d, qs[16]}
int code_q4_1(const uint8_t* b, int i) { return nibble32(b + 4, i); }           // {d, m, qs[16]}
int code_q5_0(const uint8_t* b, int i) { return (nibble32(b + 6, i) | bit5(b + 2, i)) - 16; }  // {d, qh[4], qs[16]}
int code_q5_1(const uint8_t* b, int i) { return nibble32(b + 8, i) | bit5(b + 4, i); }         // {d, m, qh[4], qs[16]}
int code_q8_0(const uint8_t* b, int i) { return i8(b, 2 + i); }                 // {d, qs[32]}
int code_q8_1(const uint8_t* b, int i) { return i8(b, 4 + i); }                 // {d, s, qs[32]}
int code_q8_K(const uint8_t* b, int i) { return i8(b, 4 + i); }                 // {f32 d, qs[256], bsums[16]}
// Q2_K {scales[16] @0, qs[64] @16, d @80, dmin @82}: 128-element halves, each
// byte of a 32-byte group holds 4 elements 32 apart.
int code_q2_K(const uint8_t* b, int i) { return (b[16 + 32 * (i / 128) + i % 32] >> (2 * ((i % 128) / 32))) & 3; }
// Q3_K {hmask[32] @0, qs[64] @32, scales[12] @96, d @108}: low bits as Q2_K,
// a clear high bit subtracts 4.
int code_q3_K(const uint8_t* b, int i) {
  const int low = (b[32 + 32 * (i / 128) + i % 32] >> (2 * ((i % 128) / 32))) & 3;
  return low - (((b[i % 32] >> (i / 32)) & 1) ? 0 : 4);
}
// Q4_K {d @0, dmin @2, scales[12] @4, qs[128] @16}: 64-element chunks, low nibbles first.
int code_q4_K(const uint8_t* b, int i) { return (b[16 + 32 * (i / 64) + i % 32] >> (4 * ((i % 64) / 32))) & 15; }
// Q5_K {d @0, dmin @2, scales[12] @4, qh[32] @16, qs[128] @48}.
int code_q5_K(const uint8_t* b, int i) {
  return ((b[48 + 32 * (i / 64) + i % 32] >> (4 * ((i % 64) / 32))) & 15) | (((b[16 + i % 32] >> (i / 32)) & 1) << 4);
}
// Q6_K {ql[128] @0, qh[64] @128, scales[16] @192, d @208}: per 128-element
// half, ql[l] holds elements l (low) and l+64 (high), ql[l+32] holds l+32 and
// l+96, qh[l] holds the top 2 bits of l, l+32, l+64, l+96.
int code_q6_K(const uint8_t* b, int i) {
  const int h = i / 128, r = i % 128, l = r % 32;
  const int lo_byte = b[64 * h + l + (r / 32 == 1 || r / 32 == 3 ? 32 : 0)];
  const int low = (r < 64) ? (lo_byte & 15) : (lo_byte >> 4);
  const int high = (b[128 + 32 * h + l] >> (2 * (r / 32))) & 3;
  return (low | (high << 4)) - 32;
}

float el_q4_0(const uint8_t* b, int i) { return static_cast<float>(code_q4_0(b, i)) * f16at(b, 0); }
float el_q4_1(const uint8_t* b, int i) { return static_cast<float>(code_q4_1(b, i)) * f16at(b, 0) + f16at(b, 2); }
float el_q5_0(const uint8_t* b, int i) { return static_cast<float>(code_q5_0(b, i)) * f16at(b, 0); }
float el_q5_1(const uint8_t* b, int i) { return static_cast<float>(code_q5_1(b, i)) * f16at(b, 0) + f16at(b, 2); }
float el_q8_0(const uint8_t* b, int i) { return static_cast<float>(code_q8_0(b, i)) * f16at(b, 0); }
float el_q8_1(const uint8_t* b, int i) { return static_cast<float>(code_q8_1(b, i)) * f16at(b, 0); }
float el_q8_K(const uint8_t* b, int i) { return static_cast<float>(code_q8_K(b, i)) * el_f32(b, 0); }
float el_q2_K(const uint8_t* b, int i) {
  const int s = b[i / 16];
  const float dl = f16at(b, 80) * static_cast<float>(s & 15);
  const float ml = f16at(b, 82) * static_cast<float>(s >> 4);
  return dl * static_cast<float>(code_q2_K(b, i)) - ml;
}
float el_q3_K(const uint8_t* b, int i) {
  int sc[16];
  q3k_scales(b + 96, sc);
  const float dl = f16at(b, 108) * static_cast<float>(sc[i / 16]);
  return dl * static_cast<float>(code_q3_K(b, i));
}
float el_q4_K(const uint8_t* b, int i) {
  int sc[8], m[8];
  k4_scales(b + 4, sc, m);
  const float dl = f16at(b, 0) * static_cast<float>(sc[i / 32]);
  const float ml = f16at(b, 2) * static_cast<float>(m[i / 32]);
  return dl * static_cast<float>(code_q4_K(b, i)) - ml;
}
float el_q5_K(const uint8_t* b, int i) {
  int sc[8], m[8];
  k4_scales(b + 4, sc, m);
  const float dl = f16at(b, 0) * static_cast<float>(sc[i / 32]);
  const float ml = f16at(b, 2) * static_cast<float>(m[i / 32]);
  return dl * static_cast<float>(code_q5_K(b, i)) - ml;
}
float el_q6_K(const uint8_t* b, int i) {
  const float dl = f16at(b, 208) * static_cast<float>(i8(b, 192 + i / 16));
  return dl * static_cast<float>(code_q6_K(b, i));
}

// One block's dot term, from raw bytes, as ref.h documents it (w: weight
// block, a: the matching activation block). The kernels must give these bits.
using CodeFn = int (*)(const uint8_t* b, int i);

int32_t isum(CodeFn wc, const uint8_t* w, CodeFn ac, const uint8_t* a, int from, int count) {
  int32_t s = 0;
  for (int i = from; i < from + count; ++i) s += wc(w, i) * ac(a, i);
  return s;
}
int bsum(const uint8_t* a, int g) { return static_cast<int16_t>(rd16(a, 260 + 2 * g)); }

// Q4_0, Q5_0, Q8_0 x Q8_0: (dw*dx)*(float)sumi
template <CodeFn kCode>
float term_sym32(const uint8_t* w, const uint8_t* a) {
  return (f16at(w, 0) * f16at(a, 0)) * static_cast<float>(isum(kCode, w, code_q8_0, a, 0, 32));
}
// Q4_1, Q5_1 x Q8_1: (dw*dx)*(float)sumi + mw*sx
template <CodeFn kCode>
float term_min32(const uint8_t* w, const uint8_t* a) {
  const float scaled = (f16at(w, 0) * f16at(a, 0)) * static_cast<float>(isum(kCode, w, code_q8_1, a, 0, 32));
  return scaled + f16at(w, 2) * f16at(a, 2);
}
float term_q2_K(const uint8_t* w, const uint8_t* a) {
  int32_t sumi = 0, summ = 0;
  for (int j = 0; j < 16; ++j) {
    sumi += (w[j] & 15) * isum(code_q2_K, w, code_q8_K, a, 16 * j, 16);
    summ += (w[j] >> 4) * bsum(a, j);
  }
  const float dx = el_f32(a, 0);
  return (dx * f16at(w, 80)) * static_cast<float>(sumi) - (dx * f16at(w, 82)) * static_cast<float>(summ);
}
float term_q3_K(const uint8_t* w, const uint8_t* a) {
  int sc[16];
  q3k_scales(w + 96, sc);
  int32_t sumi = 0;
  for (int j = 0; j < 16; ++j) sumi += sc[j] * isum(code_q3_K, w, code_q8_K, a, 16 * j, 16);
  return (el_f32(a, 0) * f16at(w, 108)) * static_cast<float>(sumi);
}
template <CodeFn kCode>
float term_k4(const uint8_t* w, const uint8_t* a) {
  int sc[8], m[8];
  k4_scales(w + 4, sc, m);
  int32_t sumi = 0, summ = 0;
  for (int j = 0; j < 8; ++j) {
    sumi += sc[j] * isum(kCode, w, code_q8_K, a, 32 * j, 32);
    summ += m[j] * (bsum(a, 2 * j) + bsum(a, 2 * j + 1));
  }
  const float dx = el_f32(a, 0);
  return (dx * f16at(w, 0)) * static_cast<float>(sumi) - (dx * f16at(w, 2)) * static_cast<float>(summ);
}
float term_q6_K(const uint8_t* w, const uint8_t* a) {
  int32_t sumi = 0;
  for (int j = 0; j < 16; ++j) sumi += i8(w, 192 + j) * isum(code_q6_K, w, code_q8_K, a, 16 * j, 16);
  return (el_f32(a, 0) * f16at(w, 208)) * static_cast<float>(sumi);
}

using TermFn = float (*)(const uint8_t* w, const uint8_t* a);
struct TermRow {
  const char* name;
  TermFn term;
};
const std::vector<TermRow>& block_terms() {
  static const std::vector<TermRow> kTerms = {
      {"q4_0", term_sym32<code_q4_0>}, {"q5_0", term_sym32<code_q5_0>}, {"q8_0", term_sym32<code_q8_0>},
      {"q4_1", term_min32<code_q4_1>}, {"q5_1", term_min32<code_q5_1>}, {"q2_K", term_q2_K},
      {"q3_K", term_q3_K},             {"q4_K", term_k4<code_q4_K>},    {"q5_K", term_k4<code_q5_K>},
      {"q6_K", term_q6_K},
  };
  return kTerms;
}
const TermRow* find_term(const TypeTraits& t) {
  for (const TermRow& r : block_terms()) {
    if (std::string(r.name) == t.name) return &r;
  }
  return nullptr;
}

// Where each type's scale fields are, so random-byte tests can keep them finite.
struct Layout {
  const char* name;
  ElementFn element;
  std::vector<int> f16_fields;  // byte offsets of f16 scales in a block
  int f32_field;                // byte offset of an f32 scale, or -1
};

const std::vector<Layout>& layouts() {
  static const std::vector<Layout> kLayouts = {
      {"f32", el_f32, {}, -1},       {"f16", el_f16, {}, -1},        {"bf16", el_bf16, {}, -1},
      {"q4_0", el_q4_0, {0}, -1},    {"q4_1", el_q4_1, {0, 2}, -1},  {"q5_0", el_q5_0, {0}, -1},
      {"q5_1", el_q5_1, {0, 2}, -1}, {"q8_0", el_q8_0, {0}, -1},     {"q8_1", el_q8_1, {0, 2}, -1},
      {"q2_K", el_q2_K, {80, 82}, -1}, {"q3_K", el_q3_K, {108}, -1}, {"q4_K", el_q4_K, {0, 2}, -1},
      {"q5_K", el_q5_K, {0, 2}, -1}, {"q6_K", el_q6_K, {208}, -1},   {"q8_K", el_q8_K, {}, 0},
  };
  return kLayouts;
}

const Layout* find_layout(const TypeTraits& t) {
  for (const Layout& l : layouts()) {
    if (std::string(l.name) == t.name) return &l;
  }
  return nullptr;
}

// Error bounds, measured on the data these tests use (max over their seeds,
// scales and lengths) with about 20-50% headroom. rmse: relative round-trip
// RMSE. dot_exact: |dot - Σ deq(w)·deq(x)| / Σ|deq(w)·x|, float rounding only
// (Q8_1's s is an f16, hence the looser Q4_1/Q5_1 rows). dot_float: the same
// against the unquantized activation x, so it adds activation quantization;
// the worst case is a single block.
struct Bounds {
  const char* name;
  double rmse;
  double dot_exact;
  double dot_float;
};

const std::vector<Bounds>& bounds() {
  static const std::vector<Bounds> kBounds = {
      {"f32", 0.0, 1e-6, 1e-6},        {"f16", 2.7e-4, 1e-6, 1e-6},     {"bf16", 2.1e-3, 1e-6, 1e-6},
      {"q4_0", 0.104, 1e-6, 3.5e-3},   {"q4_1", 0.097, 8e-4, 3.5e-3},   {"q5_0", 0.053, 1e-6, 3.5e-3},
      {"q5_1", 0.046, 8e-4, 3.5e-3},   {"q8_0", 0.0067, 1e-6, 3.5e-3},  {"q8_1", 0.0067, 0, 0},
      {"q2_K", 0.36, 1e-6, 3.5e-3},    {"q3_K", 0.186, 1e-6, 3.5e-3},   {"q4_K", 0.088, 1e-6, 3.5e-3},
      {"q5_K", 0.044, 1e-6, 3.5e-3},   {"q6_K", 0.022, 1e-6, 3.5e-3},   {"q8_K", 0.0089, 0, 0},
  };
  return kBounds;
}

const Bounds* find_bounds(const TypeTraits& t) {
  for (const Bounds& b : bounds()) {
    if (std::string(b.name) == t.name) return &b;
  }
  return nullptr;
}

// ---- goldens ------------------------------------------------------------------

// The quantizers must produce exactly the bytes of ggml's quantize_row_*_ref
// (llama-quantize without an importance matrix), so files we write equal
// llama.cpp's. These FNV-1a hashes of the output for golden_input() were
// computed with a transcription of ggml-quants.c built with -ffp-contract=off.
// Q8_0/Q8_1 round ties to even where ggml uses roundf; the input has no ties.
std::vector<float> golden_input() {
  Rng rng(2024);
  std::vector<float> x(1024);
  for (int i = 0; i < 1024; ++i) {
    float v = rng.gauss();
    if (i % 7 == 0) v *= 5.0f;     // outliers
    if (i >= 512) v += 0.3f;       // an offset, for the min-carrying formats
    x[i] = v;
  }
  return x;
}

uint64_t fnv1a(const Bytes& b) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t v : b) h = (h ^ v) * 0x100000001b3ull;
  return h;
}

struct Golden {
  const char* name;
  uint64_t hash;
};

const std::vector<Golden>& goldens() {
  static const std::vector<Golden> kGoldens = {
      {"q4_0", 0x026689bd674467b3ull},
      {"q4_1", 0x41f016d212c0dbb6ull},
      {"q5_0", 0x0e1f5528606e7d0cull},
      {"q5_1", 0xd51b0a048881b68bull},
      {"q8_0", 0x3db6c911b2ceb4c9ull},
      {"q8_1", 0xf447f935dd38edbfull},
      {"q2_K", 0x3957d19f18569732ull},
      {"q3_K", 0xcbbbf8432b6f07edull},
      {"q4_K", 0xa2f5d8e30064ba9dull},
      {"q5_K", 0x84fe6594b93b54feull},
      {"q6_K", 0xd0e1e8e16c43633cull},
      {"q8_K", 0x9d71e7a4b2ee2c4dull},
  };
  return kGoldens;
}

const Golden* find_golden(const TypeTraits& t) {
  for (const Golden& g : goldens()) {
    if (std::string(g.name) == t.name) return &g;
  }
  return nullptr;
}

// ---- hand-built blocks ------------------------------------------------------------

struct HandCase {
  const char* name;
  Bytes bytes;                              // one block (float types: a short row)
  std::vector<std::pair<int, float>> expect;  // element → value worked out by hand
};

void put16(Bytes& b, int off, uint16_t v) {
  b[off] = static_cast<uint8_t>(v & 0xff);
  b[off + 1] = static_cast<uint8_t>(v >> 8);
}

// f16 constants used below.
constexpr uint16_t kHalfOne = 0x3C00, kHalfTwo = 0x4000, kHalfHalf = 0x3800, kHalfQuarter = 0x3400,
                   kHalfEighth = 0x3000, kHalfOneAndHalf = 0x3E00, kHalfMinusOne = 0xBC00;

std::vector<HandCase> hand_cases() {
  std::vector<HandCase> cases;
  {  // F32: bits are the value.
    Bytes b(16);
    const float v[4] = {1.5f, -0.0f, FLT_MAX, -FLT_MIN};
    std::memcpy(b.data(), v, 16);
    cases.push_back({"f32", b, {{0, 1.5f}, {1, -0.0f}, {2, FLT_MAX}, {3, -FLT_MIN}}});
  }
  {  // F16: 1, -2, max normal, min subnormal, -min normal.
    Bytes b(10);
    put16(b, 0, 0x3C00);
    put16(b, 2, 0xC000);
    put16(b, 4, 0x7BFF);
    put16(b, 6, 0x0001);
    put16(b, 8, 0x8400);
    cases.push_back({"f16", b, {{0, 1.0f}, {1, -2.0f}, {2, 65504.0f}, {3, 5.9604644775390625e-8f}, {4, -6.103515625e-5f}}});
  }
  {  // BF16: 1, -3, max finite, min subnormal.
    Bytes b(8);
    put16(b, 0, 0x3F80);
    put16(b, 2, 0xC040);
    put16(b, 4, 0x7F7F);
    put16(b, 6, 0x0001);
    cases.push_back({"bf16", b, {{0, 1.0f}, {1, -3.0f}, {2, 3.38953139e38f}, {3, 9.18354962e-41f}}});
  }
  {  // Q4_0, d = 0.5: qs[0] = 0x1F → e0 = (15-8)/2, e16 = (1-8)/2; qs[5] = 0x80 → e5 = -4, e21 = 0.
    Bytes b(18, 0);
    put16(b, 0, kHalfHalf);
    b[2 + 0] = 0x1F;
    b[2 + 5] = 0x80;
    cases.push_back({"q4_0", b, {{0, 3.5f}, {16, -3.5f}, {5, -4.0f}, {21, 0.0f}, {1, -4.0f}}});
  }
  {  // Q4_1, d = 0.25, m = 1.5: qs[0] = 0xF0 → e0 = 1.5, e16 = 15/4 + 1.5.
    Bytes b(20, 0);
    put16(b, 0, kHalfQuarter);
    put16(b, 2, kHalfOneAndHalf);
    b[4 + 0] = 0xF0;
    b[4 + 15] = 0x09;
    cases.push_back({"q4_1", b, {{0, 1.5f}, {16, 5.25f}, {15, 3.75f}, {31, 1.5f}}});
  }
  {  // Q5_0, d = 0.5, qh bits 0, 16, 31 set: e0 = 31 → 7.5, e16 = 18 → 1, e15 = 0 → -8, e31 = 19 → 1.5.
    Bytes b(22, 0);
    put16(b, 0, kHalfHalf);
    b[2] = 0x01;
    b[4] = 0x01;
    b[5] = 0x80;
    b[6 + 0] = 0x2F;
    b[6 + 15] = 0x30;
    cases.push_back({"q5_0", b, {{0, 7.5f}, {16, 1.0f}, {15, -8.0f}, {31, 1.5f}}});
  }
  {  // Q5_1, d = 0.5, m = -1, qh bits 0 and 31: e0 = 31 → 14.5, e16 = 0 → -1, e31 = 23 → 10.5.
    Bytes b(24, 0);
    put16(b, 0, kHalfHalf);
    put16(b, 2, kHalfMinusOne);
    b[4] = 0x01;
    b[7] = 0x80;
    b[8 + 0] = 0x0F;
    b[8 + 15] = 0x70;
    cases.push_back({"q5_1", b, {{0, 14.5f}, {16, -1.0f}, {31, 10.5f}, {15, -1.0f}}});
  }
  {  // Q8_0, d = 1/8: -127/8, 100/8.
    Bytes b(34, 0);
    put16(b, 0, kHalfEighth);
    b[2 + 0] = 0x81;
    b[2 + 31] = 100;
    cases.push_back({"q8_0", b, {{0, -15.875f}, {31, 12.5f}, {1, 0.0f}}});
  }
  {  // Q8_1, d = 2 (s is not used by to_float).
    Bytes b(36, 0);
    put16(b, 0, kHalfTwo);
    put16(b, 2, 0x7C00);
    b[4 + 0] = 0x81;
    b[4 + 31] = 5;
    cases.push_back({"q8_1", b, {{0, -254.0f}, {31, 10.0f}}});
  }
  {  // Q2_K, d = 0.5, dmin = 0.25; scales[0] = sc 1 | m 2, scales[5] = sc 3 | m 15, scales[15] = sc 15 | m 0.
    Bytes b(84, 0);
    b[0] = 0x21;
    b[5] = 0xF3;
    b[15] = 0x0F;
    b[16 + 0] = 0x03;   // e0: q 3 → 0.5*1*3 - 0.25*2 = 1
    b[16 + 16] = 0x30;  // e80 (sub-block 5, bits 4-5 of qs[16]): q 3 → 1.5*3 - 3.75
    b[16 + 63] = 0x80;  // e255 (bits 6-7 of qs[63]): q 2 → 7.5*2
    put16(b, 80, kHalfHalf);
    put16(b, 82, kHalfQuarter);
    cases.push_back({"q2_K", b, {{0, 1.0f}, {1, -0.5f}, {32, 0.0f}, {80, 0.75f}, {81, -3.75f}, {255, 15.0f}}});
  }
  {  // Q3_K, d = 0.25; biased scales 33 (j=0), 10 (j=9), 63 (j=15), 32 elsewhere, packed by hand:
     // low nibbles in bytes 0..7 (j<8 low, j>=8 high), top 2 bits in bytes 8..11.
    Bytes b(110, 0);
    const uint8_t scales[12] = {0x01, 0xA0, 0, 0, 0, 0, 0, 0xF0, 0xAA, 0x8A, 0xAA, 0xEA};
    std::memcpy(b.data() + 96, scales, 12);
    b[0] = 0x01;         // hmask: e0 high bit set
    b[32 + 0] = 0x03;    // e0: 3 → 0.25*1*3
    b[32 + 54] = 0x02;   // e150 (sub-block 9): 2 - 4 → 0.25*-22*-2
    b[32 + 63] = 0x40;   // e255: low 1
    b[31] = 0x80;        // e255 high bit → 1 → 0.25*31*1
    put16(b, 108, kHalfQuarter);
    cases.push_back({"q3_K", b, {{0, 0.75f}, {1, -1.0f}, {32, -0.0f}, {150, 11.0f}, {255, 7.75f}}});  // e32: 0 * -4
  }
  // Q4_K/Q5_K scales: sc = {1,2,3,4,33,40,63,17}, m = {0,1,2,3,20,50,63,5},
  // packed by hand: bytes 0-3 = sc0-3 | sc4-7 top bits << 6, bytes 4-7 = m0-3 |
  // m4-7 top bits << 6, bytes 8-11 = sc4-7 low nibble | m4-7 low nibble << 4.
  const uint8_t k4[12] = {0x81, 0x82, 0xC3, 0x44, 0x40, 0xC1, 0xC2, 0x03, 0x41, 0x28, 0xFF, 0x51};
  {  // Q4_K, d = 1, dmin = 0.5.
    Bytes b(144, 0);
    put16(b, 0, kHalfOne);
    put16(b, 2, kHalfHalf);
    std::memcpy(b.data() + 4, k4, 12);
    b[16 + 0] = 0xA3;   // e0: 3 → 1*3;  e32: 10 → 2*10 - 0.5*1
    b[16 + 69] = 0x7F;  // e133: 15 → 33*15 - 0.5*20;  e165: 7 → 40*7 - 0.5*50
    b[16 + 127] = 0xF1; // e223: 1 → 63 - 31.5;  e255: 15 → 17*15 - 2.5
    cases.push_back({"q4_K", b, {{0, 3.0f}, {1, 0.0f}, {32, 19.5f}, {129, -10.0f}, {133, 485.0f}, {165, 255.0f},
                                 {223, 31.5f}, {255, 252.5f}}});
  }
  {  // Q5_K, d = 1, dmin = 0.5; qh[0] bit 1 → e32 + 16, qh[31] bit 7 → e255 + 16.
    Bytes b(176, 0);
    put16(b, 0, kHalfOne);
    put16(b, 2, kHalfHalf);
    std::memcpy(b.data() + 4, k4, 12);
    b[16 + 0] = 0x02;
    b[16 + 31] = 0x80;
    b[48 + 0] = 0xA3;    // e0: 3 → 3;  e32: 10 + 16 → 2*26 - 0.5
    b[48 + 127] = 0xF0;  // e223: 0 → -31.5;  e255: 15 + 16 → 17*31 - 2.5
    cases.push_back({"q5_K", b, {{0, 3.0f}, {32, 51.5f}, {223, -31.5f}, {255, 524.5f}}});
  }
  {  // Q6_K, d = 0.5; scales[0] = 2, scales[7] = -3, scales[15] = 127, others 1.
    Bytes b(210, 0);
    for (int j = 0; j < 16; ++j) b[192 + j] = 1;
    b[192 + 0] = 2;
    b[192 + 7] = 0xFD;
    b[192 + 15] = 127;
    b[0] = 0x0F;          // e0 low 15, e64 low 0
    b[128 + 0] = 0x03;    // e0 high 3 → 63 - 32 → 0.5*2*31
    b[63] = 0x50;         // e127 low 5 (high nibble of ql[63])
    b[128 + 31] = 0x40;   // e127 high 1 → 21 - 32 → 0.5*-3*-11
    b[127] = 0xF0;        // e255 low 15
    b[128 + 63] = 0xC0;   // e255 high 3 → 31 → 0.5*127*31
    put16(b, 208, kHalfHalf);
    cases.push_back({"q6_K", b, {{0, 31.0f}, {32, -16.0f}, {64, -16.0f}, {127, 16.5f}, {255, 1968.5f}}});
  }
  {  // Q8_K, f32 d = 0.25.
    Bytes b(292, 0);
    const float d = 0.25f;
    std::memcpy(b.data(), &d, 4);
    b[4 + 0] = 0x80;
    b[4 + 255] = 127;
    cases.push_back({"q8_K", b, {{0, -32.0f}, {1, 0.0f}, {255, 31.75f}}});
  }
  return cases;
}

// Random block bytes with every scale field set to a finite value in ±[2^-8, 4).
Bytes random_blocks(const TypeTraits& t, const Layout& layout, int64_t nblocks, Rng& rng) {
  Bytes b(static_cast<size_t>(nblocks * t.block_bytes));
  for (uint8_t& v : b) v = static_cast<uint8_t>(rng.next());
  if (is_float_type(t)) {
    if (t.block_bytes == 4) {  // keep f32 finite
      for (int64_t i = 0; i < nblocks; ++i) {
        const float f = rng.gauss() * 100.0f;
        std::memcpy(b.data() + 4 * i, &f, 4);
      }
    } else {  // clear the top exponent bit pattern of f16/bf16 that means inf/NaN
      for (int64_t i = 0; i < nblocks; ++i) b[static_cast<size_t>(2 * i + 1)] &= 0xBF;
    }
    return b;
  }
  for (int64_t ib = 0; ib < nblocks; ++ib) {
    uint8_t* blk = b.data() + ib * t.block_bytes;
    for (int off : layout.f16_fields) {
      const uint16_t exp = static_cast<uint16_t>(7 + rng.next() % 10);  // 2^-8 .. 2^1
      const uint16_t h = static_cast<uint16_t>((rng.next() & 0x8000) | (exp << 10) | (rng.next() & 0x3ff));
      blk[off] = static_cast<uint8_t>(h & 0xff);
      blk[off + 1] = static_cast<uint8_t>(h >> 8);
    }
    if (layout.f32_field >= 0) {
      const float d = static_cast<float>(rng.uniform() * 0.1 + 1e-3);
      std::memcpy(blk + layout.f32_field, &d, 4);
    }
  }
  return b;
}

// acc[i % 8] += w_i * x_i reduced by sum_lanes8, written out here.
float lane_dot(const std::vector<float>& w, const std::vector<float>& x) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (size_t i = 0; i < w.size(); ++i) acc[i % 8] = acc[i % 8] + w[i] * x[i];
  return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
}

// ---- the table itself ------------------------------------------------------------

TEST(QuantTraits, TableMatchesGgml) {
  struct Row {
    const char* name;
    uint32_t ggml_type;
    int64_t block, bytes;
    bool weight;
    const char* act;
  };
  const Row expected[] = {
      {"f32", 0, 1, 4, true, "f32"},          {"f16", 1, 1, 2, true, "f32"},
      {"q4_0", 2, 32, 18, true, "q8_0"},      {"q4_1", 3, 32, 20, true, "q8_1"},
      {"q5_0", 6, 32, 22, true, "q8_0"},      {"q5_1", 7, 32, 24, true, "q8_1"},
      {"q8_0", 8, 32, 34, true, "q8_0"},      {"q8_1", 9, 32, 36, false, "q8_1"},
      {"q2_K", 10, 256, 84, true, "q8_K"},    {"q3_K", 11, 256, 110, true, "q8_K"},
      {"q4_K", 12, 256, 144, true, "q8_K"},   {"q5_K", 13, 256, 176, true, "q8_K"},
      {"q6_K", 14, 256, 210, true, "q8_K"},   {"q8_K", 15, 256, 292, false, "q8_K"},
      {"bf16", 30, 1, 2, true, "f32"},
  };
  EXPECT_EQ(all_types().size(), std::size(expected));
  for (const Row& r : expected) {
    SCOPED_TRACE(r.name);
    const TypeTraits* t = find_type_traits(r.ggml_type);
    ASSERT_NE(t, nullptr);
    EXPECT_STREQ(t->name, r.name);
    EXPECT_EQ(t->block_size, r.block);
    EXPECT_EQ(t->block_bytes, r.bytes);
    EXPECT_EQ(t->weight_type, r.weight);
    EXPECT_STREQ(type_traits(t->act_type).name, r.act);
    EXPECT_EQ(find_type_traits_by_name(r.name), t);
  }
  EXPECT_EQ(find_type_traits_by_name("Q4_K"), find_type_traits(12));
  EXPECT_EQ(find_type_traits(4), nullptr);  // retired Q4_2
}

TEST(QuantTraits, KernelsPresent) {
  for (const TypeTraits* t : all_types()) {
    SCOPED_TRACE(t->name);
    EXPECT_NE(t->to_float, nullptr);
    EXPECT_NE(t->from_float, nullptr);
    EXPECT_EQ(t->dot != nullptr, t->weight_type);
    // The act type must itself be quantizable and be its own act type.
    const TypeTraits& a = type_traits(t->act_type);
    EXPECT_NE(a.from_float, nullptr);
    EXPECT_EQ(a.act_type, a.type);
    EXPECT_EQ(t->block_size % a.block_size, 0);
  }
}

TEST(QuantTraits, EveryTypeHasTestTables) {
  const std::vector<HandCase> cases = hand_cases();
  for (const TypeTraits* t : all_types()) {
    SCOPED_TRACE(t->name);
    EXPECT_NE(find_layout(*t), nullptr) << "add an independent decoder to layouts()";
    EXPECT_NE(find_bounds(*t), nullptr) << "add error bounds to bounds()";
    bool has_case = false;
    for (const HandCase& c : cases) has_case = has_case || std::string(c.name) == t->name;
    EXPECT_TRUE(has_case) << "add a hand-built block to hand_cases()";
    if (!is_float_type(*t)) {
      if (t->weight_type) {
        EXPECT_NE(find_term(*t), nullptr) << "add the dot's block term to block_terms()";
      }
      EXPECT_NE(find_golden(*t), nullptr) << "add a golden quantizer hash to goldens()";
    }
  }
}

// ---- to_float ------------------------------------------------------------------

TEST(QuantToFloat, HandBuiltBlocks) {
  for (const HandCase& c : hand_cases()) {
    SCOPED_TRACE(c.name);
    const TypeTraits* t = find_type_traits_by_name(c.name);
    ASSERT_NE(t, nullptr);
    const Layout* layout = find_layout(*t);
    ASSERT_NE(layout, nullptr);
    const int64_t n = static_cast<int64_t>(c.bytes.size()) / t->block_bytes * t->block_size;
    ASSERT_EQ(row_bytes(*t, n), static_cast<int64_t>(c.bytes.size()));
    const std::vector<float> y = dequantize(*t, c.bytes, n);
    for (const auto& [i, v] : c.expect) {
      EXPECT_EQ(bits_of(y[i]), bits_of(v)) << "element " << i << ": " << y[i] << " != " << v;
      // The test's own decoder must agree with the hand-worked value too.
      EXPECT_EQ(bits_of(layout->element(c.bytes.data(), i)), bits_of(v)) << "test decoder, element " << i;
    }
    for (int64_t i = 0; i < n; ++i) {
      const uint8_t* blk = c.bytes.data() + (i / t->block_size) * t->block_bytes;
      const int e = static_cast<int>(is_float_type(*t) ? i : i % t->block_size);
      const uint8_t* base = is_float_type(*t) ? c.bytes.data() : blk;
      EXPECT_EQ(bits_of(y[i]), bits_of(layout->element(base, e))) << "element " << i;
    }
  }
}

TEST(QuantToFloat, MatchesIndependentDecoderOnRandomBytes) {
  Rng rng(7);
  for (const TypeTraits* t : all_types()) {
    SCOPED_TRACE(t->name);
    const Layout* layout = find_layout(*t);
    ASSERT_NE(layout, nullptr);
    const int64_t nblocks = is_float_type(*t) ? 1000 : 11;
    const Bytes b = random_blocks(*t, *layout, nblocks, rng);
    const int64_t n = nblocks * t->block_size;
    const std::vector<float> y = dequantize(*t, b, n);
    int mismatches = 0;
    for (int64_t i = 0; i < n && mismatches < 5; ++i) {
      const float want = is_float_type(*t) ? layout->element(b.data(), static_cast<int>(i))
                                            : layout->element(b.data() + (i / t->block_size) * t->block_bytes,
                                                              static_cast<int>(i % t->block_size));
      if (bits_of(y[i]) != bits_of(want)) {
        ++mismatches;
        ADD_FAILURE() << "element " << i << ": " << y[i] << " != " << want;
      }
    }
  }
}

// ---- quantizers ------------------------------------------------------------------

TEST(QuantRoundTrip, RmseWithinBound) {
  for (const TypeTraits* t : all_types()) {
    SCOPED_TRACE(t->name);
    const Bounds* bound = find_bounds(*t);
    ASSERT_NE(bound, nullptr);
    // Unit Gaussian, large, small, and with an offset (favours the Q*_1 / K mins).
    const float scales[] = {1.0f, 300.0f, 0.05f, 1.0f};
    const float offsets[] = {0.0f, 0.0f, 0.0f, 0.7f};
    for (int k = 0; k < 4; ++k) {
      Rng rng(100 + k);
      const std::vector<float> x = rng.gauss_vec(4096, scales[k], offsets[k]);
      const std::vector<float> y = dequantize(*t, quantize(*t, x), 4096);
      const double e = relative_rmse(x, y);
      EXPECT_LE(e, bound->rmse) << "data scale " << scales[k] << " offset " << offsets[k];
    }
  }
}

TEST(QuantRoundTrip, FloatTypesExactWhereRepresentable) {
  const std::vector<float> x = {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, -65504.0f, 0.099975586f, 6.1035156e-05f};
  for (const char* name : {"f32", "f16", "bf16"}) {
    SCOPED_TRACE(name);
    const TypeTraits& t = *find_type_traits_by_name(name);
    const std::vector<float> y = dequantize(t, quantize(t, x), static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      if (std::string(name) == "bf16" && (i == 4 || i == 5 || i == 6)) continue;  // not bf16-representable
      EXPECT_EQ(bits_of(y[i]), bits_of(x[i])) << "element " << i;
    }
  }
  // ±max of each format survives.
  const TypeTraits& f32 = type_traits(TensorType::kF32);
  const TypeTraits& bf16 = type_traits(TensorType::kBF16);
  const std::vector<float> big = {FLT_MAX, -FLT_MAX, 3.38953139e38f, -3.38953139e38f};
  EXPECT_EQ(dequantize(f32, quantize(f32, big), 4), big);
  const std::vector<float> yb = dequantize(bf16, quantize(bf16, big), 4);
  EXPECT_EQ(yb[2], 3.38953139e38f);
  EXPECT_EQ(yb[3], -3.38953139e38f);
}

TEST(QuantRoundTrip, ZerosStayZero) {
  for (const TypeTraits* t : all_types()) {
    SCOPED_TRACE(t->name);
    const int64_t n = 3 * 256;
    const std::vector<float> x(static_cast<size_t>(n), 0.0f);
    const std::vector<float> y = dequantize(*t, quantize(*t, x), n);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], 0.0f) << "element " << i;
  }
}

TEST(QuantRoundTrip, PlusMinusMaxValues) {
  // Every element ±M: the scale is set by M. For float types M is the format's
  // max; for quantized types a large value whose f16 scale stays finite.
  for (const TypeTraits* t : all_types()) {
    SCOPED_TRACE(t->name);
    const std::string name = t->name;
    const float m = name == "f32" ? FLT_MAX : name == "f16" ? 65504.0f : name == "bf16" ? 3.38953139e38f : 4096.0f;
    Rng rng(3);
    std::vector<float> x(1024);
    for (float& v : x) v = (rng.next() & 1) ? m : -m;
    const std::vector<float> y = dequantize(*t, quantize(*t, x), 1024);
    double se = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      ASSERT_TRUE(std::isfinite(y[i])) << "element " << i;
      const double e = (static_cast<double>(x[i]) - y[i]) / m;
      se += e * e;
    }
    EXPECT_LE(std::sqrt(se / x.size()), find_bounds(*t)->rmse);
  }
}

TEST(QuantRoundTrip, NonFiniteInputStaysInItsBlock) {
  // NaN, ±inf and huge values in the middle block must not disturb the blocks
  // around it (and must not be UB; run under WLLM_SANITIZE to check that).
  const float kNaN = std::numeric_limits<float>::quiet_NaN();
  const float kInf = std::numeric_limits<float>::infinity();
  for (const TypeTraits* t : all_types()) {
    SCOPED_TRACE(t->name);
    const int64_t bs = std::max<int64_t>(t->block_size, 64);
    Rng rng(11);
    std::vector<float> x = rng.gauss_vec(3 * bs);
    const std::vector<float> clean = x;
    const float poison[] = {kNaN, kInf, -kInf, 3e38f, -3e38f, 1e-45f};
    for (int64_t i = bs; i < 2 * bs; ++i) x[i] = poison[i % 6];
    const std::vector<float> y = dequantize(*t, quantize(*t, x), 3 * bs);
    const std::vector<float> want = dequantize(*t, quantize(*t, clean), 3 * bs);
    for (int64_t i = 0; i < 3 * bs; ++i) {
      if (i >= bs && i < 2 * bs) continue;
      ASSERT_EQ(bits_of(y[i]), bits_of(want[i])) << "element " << i;
    }
    // All-NaN and all-inf rows quantize without trouble.
    for (float v : {kNaN, kInf, -kInf}) {
      const std::vector<float> all(static_cast<size_t>(bs), v);
      (void)dequantize(*t, quantize(*t, all), bs);
    }
  }
}

TEST(QuantRoundTrip, QuantizeIsDeterministic) {
  for (const TypeTraits* t : all_types()) {
    SCOPED_TRACE(t->name);
    Rng rng(5);
    const std::vector<float> x = rng.gauss_vec(1024);
    EXPECT_EQ(quantize(*t, x), quantize(*t, x));
  }
}

TEST(QuantRoundTrip, MatchesGgmlReferenceBytes) {
  const std::vector<float> x = golden_input();
  for (const TypeTraits* t : all_types()) {
    const Golden* g = find_golden(*t);
    if (g == nullptr) continue;  // float types; EveryTypeHasTestTables covers the rest
    SCOPED_TRACE(t->name);
    EXPECT_EQ(fnv1a(quantize(*t, x)), g->hash);
  }
}

// Q4_0 from ggml's algorithm, worked by hand: x_j = j - 16 gives max = -16,
// d = -16 / -8 = 2, q_j = min(15, (int)(x_j/2 + 8.5)) = min(15, ceil(j/2)).
TEST(QuantRoundTrip, Q4_0QuantizerByHand) {
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(j - 16);
  const Bytes q = quantize(type_traits(TensorType::kQ4_0), x);
  EXPECT_EQ(rd16(q.data(), 0), kHalfTwo);
  for (int j = 0; j < 16; ++j) {
    const int lo = (j + 1) / 2, hi = std::min(15, (j + 17) / 2);
    EXPECT_EQ(q[2 + j], lo | (hi << 4)) << "byte " << j;
  }
}

// ---- activation quantizers --------------------------------------------------------

// round-half-even, independent of ref::round_clamp.
int rint_even(double v) { return static_cast<int>(std::nearbyint(v)); }

TEST(QuantActivation, Q8_0AndQ8_1FollowTheSpec) {
  Rng rng(21);
  std::vector<float> x = rng.gauss_vec(8 * 32);
  for (int j = 32; j < 64; ++j) x[j] = 0.0f;  // a zero block
  const TypeTraits& q80 = type_traits(TensorType::kQ8_0);
  const TypeTraits& q81 = type_traits(TensorType::kQ8_1);
  const Bytes a = quantize(q80, x), b = quantize(q81, x);
  for (int ib = 0; ib < 8; ++ib) {
    SCOPED_TRACE(ib);
    float amax = 0;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[32 * ib + j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const uint8_t* pa = a.data() + 34 * ib;
    const uint8_t* pb = b.data() + 36 * ib;
    EXPECT_EQ(rd16(pa, 0), f32_to_f16(d));
    EXPECT_EQ(rd16(pb, 0), f32_to_f16(d));
    int sum = 0;
    for (int j = 0; j < 32; ++j) {
      const int q = rint_even(static_cast<double>(x[32 * ib + j] * id));
      EXPECT_EQ(i8(pa, 2 + j), q) << "q8_0 element " << j;
      EXPECT_EQ(i8(pb, 4 + j), q) << "q8_1 element " << j;
      sum += q;
    }
    // s = f16(d * Σq) with the f32 d, not the stored f16 one.
    EXPECT_EQ(rd16(pb, 2), f32_to_f16(d * static_cast<float>(sum)));
  }
}

TEST(QuantActivation, Q8_KFollowsTheSpec) {
  Rng rng(22);
  std::vector<float> x = rng.gauss_vec(3 * 256);
  for (int j = 256; j < 512; ++j) x[j] = 0.0f;  // a zero block: d, qs and bsums all 0
  x[700] = -9.0f;                               // negative signed max in block 2
  const TypeTraits& t = type_traits(TensorType::kQ8_K);
  Bytes q(3 * 292, 0xAB);  // garbage first, so unwritten fields show
  t.from_float(x.data(), q.data(), 3 * 256);
  for (int ib = 0; ib < 3; ++ib) {
    SCOPED_TRACE(ib);
    const uint8_t* p = q.data() + 292 * ib;
    float max = 0, amax = 0;
    for (int j = 0; j < 256; ++j) {
      if (std::fabs(x[256 * ib + j]) > amax) {
        amax = std::fabs(x[256 * ib + j]);
        max = x[256 * ib + j];
      }
    }
    const float iscale = amax != 0.0f ? -127.0f / max : 0.0f;
    EXPECT_EQ(bits_of(el_f32(p, 0)), bits_of(amax != 0.0f ? 1.0f / iscale : 0.0f));
    for (int j = 0; j < 256; ++j) {
      EXPECT_EQ(i8(p, 4 + j), std::min(127, rint_even(static_cast<double>(iscale * x[256 * ib + j])))) << j;
    }
    for (int g = 0; g < 16; ++g) {
      int sum = 0;
      for (int k = 0; k < 16; ++k) sum += i8(p, 4 + 16 * g + k);
      EXPECT_EQ(static_cast<int16_t>(rd16(p, 260 + 2 * g)), sum) << "bsum " << g;
    }
  }
  EXPECT_EQ(i8(q.data() + 2 * 292, 4 + 700 - 512), -127);  // the signed max maps to -127
}

TEST(QuantActivation, TiesRoundToEven) {
  // amax 127 gives d = 1 exactly, so x*id = x and halves are exact ties.
  std::vector<float> x(32, 0.0f);
  x[0] = 127.0f;
  const float ties[] = {0.5f, 1.5f, 2.5f, -2.5f, -3.5f, 126.5f, -0.5f};
  const int want[] = {0, 2, 2, -2, -4, 126, 0};
  for (int k = 0; k < 7; ++k) x[1 + k] = ties[k];
  const Bytes a = quantize(type_traits(TensorType::kQ8_0), x);
  const Bytes b = quantize(type_traits(TensorType::kQ8_1), x);
  EXPECT_EQ(rd16(a.data(), 0), kHalfOne);
  for (int k = 0; k < 7; ++k) {
    EXPECT_EQ(i8(a.data(), 2 + 1 + k), want[k]) << "q8_0 " << ties[k];
    EXPECT_EQ(i8(b.data(), 4 + 1 + k), want[k]) << "q8_1 " << ties[k];
  }
  // Q8_K: max = -127 gives iscale = 1.
  std::vector<float> y(256, 0.0f);
  y[0] = -127.0f;
  for (int k = 0; k < 7; ++k) y[1 + k] = ties[k];
  const Bytes c = quantize(type_traits(TensorType::kQ8_K), y);
  EXPECT_EQ(el_f32(c.data(), 0), 1.0f);
  for (int k = 0; k < 7; ++k) EXPECT_EQ(i8(c.data(), 4 + 1 + k), want[k]) << "q8_K " << ties[k];
}

// ---- dot products -----------------------------------------------------------------

// Row of n elements of t quantized from Gaussian data, the activation x, its
// quantized form, and dequantized copies of both.
struct DotCase {
  Bytes row, act;
  std::vector<float> w, x, xq;
};

DotCase make_dot_case(const TypeTraits& t, int64_t n, uint64_t seed, float wscale = 1.0f, float xscale = 1.0f) {
  Rng rng(seed);
  const TypeTraits& a = type_traits(t.act_type);
  DotCase c;
  c.row = quantize(t, rng.gauss_vec(n, wscale, 0.1f * wscale));
  c.w = dequantize(t, c.row, n);
  c.x = rng.gauss_vec(n, xscale);
  c.act = quantize(a, c.x);
  c.xq = dequantize(a, c.act, n);
  return c;
}

std::vector<const TypeTraits*> weight_types() {
  std::vector<const TypeTraits*> out;
  for (const TypeTraits* t : all_types()) {
    if (t->weight_type) out.push_back(t);
  }
  return out;
}

TEST(QuantDot, MatchesDequantizedDot) {
  for (const TypeTraits* t : weight_types()) {
    SCOPED_TRACE(t->name);
    for (int64_t nblocks : {1, 3, 9, 17}) {
      const int64_t n = nblocks * std::max<int64_t>(t->block_size, 32);
      for (uint64_t seed = 1; seed <= 4; ++seed) {
        const DotCase c = make_dot_case(*t, n, seed);
        const float got = t->dot(n, c.row.data(), c.act.data());
        double exact = 0, to_float = 0, mag = 0;
        for (int64_t i = 0; i < n; ++i) {
          exact += static_cast<double>(c.w[i]) * c.xq[i];
          to_float += static_cast<double>(c.w[i]) * c.x[i];
          mag += std::fabs(static_cast<double>(c.w[i]) * c.x[i]);
        }
        EXPECT_LE(std::fabs(got - exact) / mag, find_bounds(*t)->dot_exact) << "n " << n << " seed " << seed;
        EXPECT_LE(std::fabs(got - to_float) / mag, find_bounds(*t)->dot_float) << "n " << n << " seed " << seed;
      }
    }
  }
}

// Activations far from 1. Not much larger: Q8_1 keeps s = d·Σq in an f16 (as
// ggml does), which overflows once |x| reaches about 1e4 in a block.
TEST(QuantDot, LargeAndSmallMagnitudes) {
  for (const TypeTraits* t : weight_types()) {
    SCOPED_TRACE(t->name);
    const int64_t n = 4 * std::max<int64_t>(t->block_size, 64);
    for (float xscale : {1e3f, 1e-4f}) {
      const DotCase c = make_dot_case(*t, n, 9, 10.0f, xscale);
      const float got = t->dot(n, c.row.data(), c.act.data());
      double ref = 0, mag = 0;
      for (int64_t i = 0; i < n; ++i) {
        ref += static_cast<double>(c.w[i]) * c.x[i];
        mag += std::fabs(static_cast<double>(c.w[i]) * c.x[i]);
      }
      ASSERT_TRUE(std::isfinite(got));
      EXPECT_LE(std::fabs(got - ref) / mag, find_bounds(*t)->dot_float) << "x scale " << xscale;
    }
  }
}

// The accumulation structure is part of the contract (design-notes §2): block
// b's term goes to lane b % 8, then sum_lanes8. A one-block dot returns that
// block's term exactly, so the full dot must equal the fold of one-block dots.
TEST(QuantDot, BlockTermsFoldIntoEightLanes) {
  for (const TypeTraits* t : weight_types()) {
    if (is_float_type(*t)) continue;
    SCOPED_TRACE(t->name);
    const TypeTraits& a = type_traits(t->act_type);
    for (int64_t nblocks : {1, 5, 8, 13, 19}) {
      const int64_t n = nblocks * t->block_size;
      const DotCase c = make_dot_case(*t, n, 31 + nblocks);
      float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      for (int64_t b = 0; b < nblocks; ++b) {
        const float term = t->dot(t->block_size, c.row.data() + b * t->block_bytes,
                                  c.act.data() + b * t->block_size / a.block_size * a.block_bytes);
        acc[b % 8] += term;
      }
      EXPECT_EQ(bits_of(t->dot(n, c.row.data(), c.act.data())), bits_of(sum_lanes8(acc))) << "blocks " << nblocks;
    }
  }
}

// Each block's term is the documented formula (ref.h), bit for bit: a
// one-block dot returns exactly that block's term. Weights come both from the
// quantizer and from random bytes (any codes and scales).
TEST(QuantDot, BlockTermsFollowTheDocumentedFormula) {
  for (const TypeTraits* t : weight_types()) {
    if (is_float_type(*t)) continue;
    SCOPED_TRACE(t->name);
    const TermRow* row = find_term(*t);
    ASSERT_NE(row, nullptr);
    const TypeTraits& a = type_traits(t->act_type);
    const int64_t nblocks = 9, n = nblocks * t->block_size;
    const int64_t act_stride = t->block_size / a.block_size * a.block_bytes;
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      const DotCase c = make_dot_case(*t, n, 200 + seed);
      Rng rng(300 + seed);
      const Bytes random_row = random_blocks(*t, *find_layout(*t), nblocks, rng);
      // Same-sign activations make |sumi| large enough that float(sumi) times
      // a scale is inexact, so a regrouped formula would round differently.
      std::vector<float> positive = rng.gauss_vec(n);
      for (float& v : positive) v = std::fabs(v) + 3.0f;
      const Bytes positive_act = quantize(a, positive);
      // Saturated codes (all bytes 0x00 or 0xFF, scales kept) for the same reason.
      Bytes saturated = random_row;
      for (int64_t b = 0; b < nblocks; ++b) {
        Bytes keep(saturated.begin() + b * t->block_bytes, saturated.begin() + (b + 1) * t->block_bytes);
        std::fill(saturated.begin() + b * t->block_bytes, saturated.begin() + (b + 1) * t->block_bytes,
                  static_cast<uint8_t>(b % 2 ? 0xFF : 0x00));
        for (int off : find_layout(*t)->f16_fields) {
          saturated[b * t->block_bytes + off] = keep[off];
          saturated[b * t->block_bytes + off + 1] = keep[off + 1];
        }
      }
      const Bytes* acts[] = {&c.act, &positive_act};
      for (const Bytes* act : acts) {
      const Bytes* rows[] = {&c.row, &random_row, &saturated};
      for (const Bytes* w : rows) {
        for (int64_t b = 0; b < nblocks; ++b) {
          const uint8_t* wb = w->data() + b * t->block_bytes;
          const uint8_t* ab = act->data() + b * act_stride;
          // + 0.0f: the accumulator starts at +0, which turns a -0 term into +0.
          EXPECT_EQ(bits_of(t->dot(t->block_size, wb, ab)), bits_of(0.0f + row->term(wb, ab)))
              << "seed " << seed << " block " << b;
        }
      }
      }
    }
  }
}

TEST(QuantDot, FloatTypesEqualLaneReference) {
  for (const TypeTraits* t : weight_types()) {
    if (!is_float_type(*t)) continue;
    SCOPED_TRACE(t->name);
    for (int64_t n : {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 67, 1000, 1001}) {
      Rng rng(static_cast<uint64_t>(n) + 1);
      const std::vector<float> src = rng.gauss_vec(n);
      const std::vector<float> x = rng.gauss_vec(n);
      const Bytes row = quantize(*t, src);
      const std::vector<float> w = dequantize(*t, row, n);
      EXPECT_EQ(bits_of(t->dot(n, row.data(), x.data())), bits_of(lane_dot(w, x))) << "n " << n;
    }
  }
}

TEST(QuantDot, ZerosGiveZero) {
  for (const TypeTraits* t : weight_types()) {
    SCOPED_TRACE(t->name);
    const int64_t n = 3 * std::max<int64_t>(t->block_size, 32);
    const TypeTraits& a = type_traits(t->act_type);
    const std::vector<float> zeros(static_cast<size_t>(n), 0.0f);
    Rng rng(4);
    const std::vector<float> x = rng.gauss_vec(n);
    EXPECT_EQ(t->dot(n, quantize(*t, zeros).data(), quantize(a, x).data()), 0.0f);
    EXPECT_EQ(t->dot(n, quantize(*t, x).data(), quantize(a, zeros).data()), 0.0f);
  }
}

TEST(QuantDot, SameBitsWhenCalledTwice) {
  for (const TypeTraits* t : weight_types()) {
    SCOPED_TRACE(t->name);
    const int64_t n = 11 * std::max<int64_t>(t->block_size, 32);
    const DotCase c = make_dot_case(*t, n, 77);
    const float first = t->dot(n, c.row.data(), c.act.data());
    const float second = t->dot(n, c.row.data(), c.act.data());
    EXPECT_EQ(bits_of(first), bits_of(second));
    // Requantizing the activation gives the same bytes, hence the same dot.
    const Bytes act2 = quantize(type_traits(t->act_type), c.x);
    EXPECT_EQ(act2, c.act);
  }
}

// Extreme codes: every weight and activation code at its most negative or
// positive value, on many blocks; the int32 sums must not overflow.
TEST(QuantDot, ExtremeCodesMatchDequantizedDot) {
  for (const TypeTraits* t : weight_types()) {
    if (is_float_type(*t)) continue;
    SCOPED_TRACE(t->name);
    const Layout* layout = find_layout(*t);
    const TypeTraits& a = type_traits(t->act_type);
    const int64_t nblocks = 9, n = nblocks * t->block_size;
    for (uint8_t fill : {uint8_t{0x00}, uint8_t{0xFF}, uint8_t{0x80}}) {
      Rng rng(fill);
      Bytes row = random_blocks(*t, *layout, nblocks, rng);
      // All code bytes = fill, scales kept finite by random_blocks' f16 fields.
      Bytes filled(row.size(), fill);
      for (int64_t b = 0; b < nblocks; ++b) {
        for (int off : layout->f16_fields) {
          filled[b * t->block_bytes + off] = row[b * t->block_bytes + off];
          filled[b * t->block_bytes + off + 1] = row[b * t->block_bytes + off + 1];
        }
      }
      std::vector<float> xs(static_cast<size_t>(n), fill == 0x80 ? -1.0f : 1.0f);
      const Bytes act = quantize(a, xs);
      const std::vector<float> w = dequantize(*t, filled, n);
      const std::vector<float> xq = dequantize(a, act, n);
      double exact = 0, mag = 0;
      for (int64_t i = 0; i < n; ++i) {
        exact += static_cast<double>(w[i]) * xq[i];
        mag += std::fabs(static_cast<double>(w[i]) * xq[i]);
      }
      const float got = t->dot(n, filled.data(), act.data());
      EXPECT_LE(std::fabs(got - exact), std::max(1e-5, find_bounds(*t)->dot_exact) * mag) << "fill " << int(fill);
    }
  }
}

}  // namespace
}  // namespace wllm
