// Whole reads and writes on a FILE, the same on every build.
//
// Emscripten 3.1.6's Node file system (NODERAWFS: the wasm CLI, `npx
// wasm-llm`) hands a buffer's heap address to Node as a signed 32-bit number,
// so reading into or writing from memory at or above 2 GiB fails, and its
// glue reports success: a model file of more than about 2 GB loaded as
// garbage. There the bytes go through a staging buffer in static memory,
// which lies below the heap.
#pragma once

#include <cstddef>
#include <cstdio>

namespace wllm {

// Whether all n bytes were read into dst (false: end of file or an error).
bool read_fully(std::FILE* f, void* dst, size_t n);

// Whether all n bytes of src were written.
bool write_fully(std::FILE* f, const void* src, size_t n);

}  // namespace wllm
