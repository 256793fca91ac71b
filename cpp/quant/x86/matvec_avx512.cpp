// AVX-512 VNNI single-activation kernels (matvec, the decode step) for Q4_0
// and Q8_0, through the shared driver (matvec_driver.inc): vpdpbusd takes
// unsigned × signed bytes and sums each 4 products in int32 in one
// instruction. Q4_0's nibbles are unsigned as stored (Σ (u − 8)·x = Σ u·x −
// 8·Σ x); Q8_0's codes are made unsigned by flipping their sign bit
// (u = q + 128: Σ q·x = Σ u·x − 128·Σ x). All exact.
#include "quant/kernels.h"

#if defined(__x86_64__) || defined(__i386__)

#include "core/half.h"
#include "quant/x86/avx2.h"

#pragma GCC push_options
#pragma GCC target("avx2,f16c,avx512f,avx512bw,avx512vl,avx512vnni")

namespace wllm::avx512 {
namespace {

using namespace avx2;  // the reductions and scale loads the driver uses

struct Q4_0Sum {
  static constexpr int32_t kOffset = 8;
  static __m256i sum(const BlockQ4_0& w, const int8_t* x) {
    const __m256i nibbles = q4_0_nibbles(w.qs);
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), nibbles,
                               _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)));
  }
};

struct Q8_0Sum {
  static constexpr int32_t kOffset = 128;
  static __m256i sum(const BlockQ8_0& w, const int8_t* x) {
    const __m256i codes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.qs));
    const __m256i unsigned_codes = _mm256_xor_si256(codes, _mm256_set1_epi8(static_cast<char>(0x80)));
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), unsigned_codes,
                               _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)));
  }
};

#include "quant/x86/matvec_driver.inc"

}  // namespace

void matvec_q4_0_avx512(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out) {
  matvec_blocks<BlockQ4_0, Q4_0Sum>(n, rows, row_stride, n_rows, act, out);
}
void matvec_q8_0_avx512(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out) {
  matvec_blocks<BlockQ8_0, Q8_0Sum>(n, rows, row_stride, n_rows, act, out);
}

}  // namespace wllm::avx512

#pragma GCC pop_options

#endif
