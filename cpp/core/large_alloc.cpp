#include "core/large_alloc.h"

#include <cstdlib>

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <sys/mman.h>
#endif

namespace wllm {

uint8_t* allocate_large(size_t bytes) {
  constexpr size_t kAlignment = 64;  // a cache line; every SIMD width we use
#if defined(__linux__) && !defined(__EMSCRIPTEN__) && defined(MADV_HUGEPAGE)
  constexpr size_t kHugePage = size_t{2} << 20;
  if (bytes >= kHugePage) {
    bytes = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    auto* p = static_cast<uint8_t*>(std::aligned_alloc(kHugePage, bytes));
    if (p) madvise(p, bytes, MADV_HUGEPAGE);  // advice: nothing to do if refused
    return p;
  }
#endif
  return static_cast<uint8_t*>(std::aligned_alloc(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment));
}

}  // namespace wllm
