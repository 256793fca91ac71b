// Allocation of large buffers that are streamed through (the weights arena,
// the benchmark's bandwidth probe).
#pragma once

#include <cstddef>
#include <cstdint>

namespace wllm {

// `bytes` (at least 1) aligned to 64, or null; free with std::free.
// Natively on Linux, 2 MiB or more are aligned to 2 MiB and the kernel is
// asked to back them with huge pages (transparent huge pages in "madvise"
// mode, the usual default): a decode step streams every weight once, and
// with 4 KiB pages each row of an f16 model of width 2048 is a page of its
// own, where the hardware prefetcher stops. Not in wasm: its memory is the
// engine's, and 2 MiB of alignment could cost a model near the heap's limit
// its place.
uint8_t* allocate_large(size_t bytes);

}  // namespace wllm
