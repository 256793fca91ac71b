#include "core/file_io.h"

#if defined(__EMSCRIPTEN__)

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>

namespace wllm {
namespace {

alignas(64) uint8_t g_staging[1 << 20];  // static memory: below the heap, so below 2 GiB
std::mutex g_staging_mutex;

}  // namespace

bool read_fully(std::FILE* f, void* dst, size_t n) {
  std::lock_guard<std::mutex> lock(g_staging_mutex);
  for (uint8_t* out = static_cast<uint8_t*>(dst); n > 0;) {
    const size_t k = std::min(n, sizeof g_staging);
    if (std::fread(g_staging, 1, k, f) != k) return false;
    std::memcpy(out, g_staging, k);
    out += k;
    n -= k;
  }
  return true;
}

bool write_fully(std::FILE* f, const void* src, size_t n) {
  std::lock_guard<std::mutex> lock(g_staging_mutex);
  for (const uint8_t* in = static_cast<const uint8_t*>(src); n > 0;) {
    const size_t k = std::min(n, sizeof g_staging);
    std::memcpy(g_staging, in, k);
    if (std::fwrite(g_staging, 1, k, f) != k) return false;
    in += k;
    n -= k;
  }
  return true;
}

}  // namespace wllm

#else

namespace wllm {

bool read_fully(std::FILE* f, void* dst, size_t n) { return std::fread(dst, 1, n, f) == n; }

bool write_fully(std::FILE* f, const void* src, size_t n) { return std::fwrite(src, 1, n, f) == n; }

}  // namespace wllm

#endif
