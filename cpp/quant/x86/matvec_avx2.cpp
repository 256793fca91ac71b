// AVX2 single-activation kernels (matvec, the decode step) for the Q8_0-
// activation types, through the shared driver (matvec_driver.inc). Q4_0's
// nibbles and Q5_0's 5-bit codes go into maddubs unsigned, as stored:
// Σ (u − 8)·x = Σ u·x − 8·Σ x (16 for Q5_0), which saves the sign trick and
// the offset per block.
#include "quant/kernels.h"

#if defined(__x86_64__) || defined(__i386__)

#include "core/half.h"
#include "quant/x86/avx2.h"

// The ISA for everything up to the matching pop (clang spells it differently).
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,f16c"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,f16c")
#endif

namespace wllm::avx2 {
namespace {

// Per format: a block's integer sum against the activation's bytes as 8
// partial sums, and kOffset, what that sum exceeds Σ code·x by per unit of Σ x.
struct Q4_0Sum {
  static constexpr int32_t kOffset = 8;
  static __m256i sum(const BlockQ4_0& w, const int8_t* x) {
    const __m256i nibbles = q4_0_nibbles(w.qs);
    const __m256i pairs = _mm256_maddubs_epi16(nibbles, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)));
    return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));  // pairs are at most 2·15·127: exact
  }
};

struct Q5_0Sum {
  static constexpr int32_t kOffset = 16;
  static __m256i sum(const BlockQ5_0& w, const int8_t* x) {
    return dot_u8x32(q5_codes(w), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)));
  }
};

template <typename Block>
struct SignedCodesSum {
  static constexpr int32_t kOffset = 0;
  static __m256i sum(const Block& w, const int8_t* x) {
    return dot_i8x32(block_bytes(w), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)));
  }
};

#include "quant/x86/matvec_driver.inc"

}  // namespace

void matvec_q4_0_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out) {
  matvec_blocks<BlockQ4_0, Q4_0Sum>(n, rows, row_stride, n_rows, act, out);
}
void matvec_q5_0_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out) {
  matvec_blocks<BlockQ5_0, Q5_0Sum>(n, rows, row_stride, n_rows, act, out);
}
void matvec_q8_0_avx2(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out) {
  matvec_blocks<BlockQ8_0, SignedCodesSum<BlockQ8_0>>(n, rows, row_stride, n_rows, act, out);
}

}  // namespace wllm::avx2

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#endif
