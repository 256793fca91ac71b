// GGUF reader: parses and validates the header of a GGUF v2/v3 file held in
// memory, before any tensor data is touched.
//
// File layout (all little-endian; see ggml's gguf.h):
//   u32 magic "GGUF" | u32 version (2 or 3) | u64 n_tensors | u64 n_kv
//   n_kv x  { string key | u32 value_type | value }
//   n_tensors x { string name | u32 n_dims | u64 ne[n_dims] | u32 type | u64 offset }
//   padding to `general.alignment` (default 32)
//   tensor data: each tensor at data_offset + offset, offsets aligned
// where string = u64 length + bytes (no terminator) and an array value is
// u32 element_type + u64 count + elements.
//
// The whole file need not be in memory: parse_header() takes a prefix of the
// file plus the file's total size. If the prefix ends inside the header it
// fails with ErrorCode::kNeedMoreData and `needed_prefix_bytes` says how many
// bytes to try next (the caller reads more and calls again). This is how the
// wasm build streams a model: header first, then tensor data into an arena.
//
// Every count, length and offset is treated as hostile: bounded by the file
// size, checked for overflow, and checked for alignment before use. The parsed
// GgufFile owns a copy of the header bytes; views it hands out stay valid for
// its lifetime.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "quant/traits.h"

namespace wllm {

enum class GgufType : uint32_t {
  kU8 = 0, kI8 = 1, kU16 = 2, kI16 = 3, kU32 = 4, kI32 = 5, kF32 = 6,
  kBool = 7, kString = 8, kArray = 9, kU64 = 10, kI64 = 11, kF64 = 12,
};

const char* gguf_type_name(GgufType type);

// A validated array value. Element accessors never read out of bounds; the
// typed accessors convert any numeric element type (e.g. i32 tokens types
// stored as u32) and return 0 for non-numeric ones.
class GgufArray {
 public:
  GgufType elem_type() const { return elem_type_; }
  uint64_t size() const { return count_; }
  std::string_view string_at(uint64_t i) const;  // "" unless elem_type is string
  double number_at(uint64_t i) const;            // 0 unless numeric or bool
  float f32_at(uint64_t i) const { return static_cast<float>(number_at(i)); }
  int64_t int_at(uint64_t i) const;              // exact for all integer types up to 2^63

 private:
  friend class GgufParser;
  GgufType elem_type_ = GgufType::kU8;
  uint64_t count_ = 0;
  const uint8_t* data_ = nullptr;           // first element (numeric arrays)
  std::vector<std::string_view> strings_;   // string arrays, pre-split
};

struct GgufValue {
  GgufType type = GgufType::kU8;
  // Scalars: exactly one of these is meaningful, by `type`.
  uint64_t u = 0;       // unsigned ints and bool
  int64_t i = 0;        // signed ints
  double f = 0;         // f32 / f64
  std::string_view s;   // string
  GgufArray array;      // array
};

struct GgufKV {
  std::string_view key;
  GgufValue value;
};

struct GgufTensorInfo {
  std::string_view name;
  TensorType type = TensorType::kF32;
  int n_dims = 0;
  int64_t ne[4] = {1, 1, 1, 1};  // ne[0] is the row length (contiguous)
  uint64_t offset = 0;            // from the start of the data section
  uint64_t n_bytes = 0;
  int64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
};

class GgufFile {
 public:
  // Parses the header from `prefix` (the first bytes of a file of
  // `file_size` bytes). See the file comment for kNeedMoreData.
  static Result<GgufFile> parse_header(std::span<const uint8_t> prefix, uint64_t file_size,
                                       uint64_t* needed_prefix_bytes = nullptr);
  // Convenience for a file that is entirely in memory.
  static Result<GgufFile> parse(std::span<const uint8_t> file) {
    return parse_header(file, file.size());
  }

  // The files of a split model (gguf/gguf_split.h checks that they belong
  // together) seen as one: the metadata of files[0], and the tensors of every
  // file in order, file i's offsets moved by data_starts[i] into one data
  // section of data_size bytes. file_size() is then the files' total.
  static GgufFile join(std::span<const GgufFile> files, std::span<const uint64_t> data_starts, uint64_t data_size);

  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t file_size() const { return file_size_; }
  // Absolute file offset where tensor data begins (aligned).
  uint64_t data_offset() const { return data_offset_; }
  // Bytes from data_offset() to the end of the last tensor's data.
  uint64_t data_size() const { return data_size_; }

  // The header's bytes: from the file's start to the end of the tensor infos.
  std::span<const uint8_t> header_bytes() const { return *header_bytes_; }

  const std::vector<GgufKV>& kvs() const { return *kvs_; }
  const std::vector<GgufTensorInfo>& tensors() const { return *tensors_; }
  const GgufKV* find(std::string_view key) const;
  const GgufTensorInfo* find_tensor(std::string_view name) const;

  // Typed getters. A missing key or a value of an incompatible type is an
  // error naming the key. Integers of any width are accepted when the value
  // fits; floats accept f32 and f64.
  Result<std::string_view> get_string(std::string_view key) const;
  Result<uint64_t> get_uint(std::string_view key) const;
  Result<int64_t> get_int(std::string_view key) const;
  Result<float> get_float(std::string_view key) const;
  Result<bool> get_bool(std::string_view key) const;
  Result<const GgufArray*> get_array(std::string_view key) const;
  // Same, with a default when the key is absent (a wrong type is still an error).
  Result<std::string_view> get_string_or(std::string_view key, std::string_view fallback) const;
  Result<uint64_t> get_uint_or(std::string_view key, uint64_t fallback) const;
  Result<float> get_float_or(std::string_view key, float fallback) const;
  Result<bool> get_bool_or(std::string_view key, bool fallback) const;

 private:
  friend class GgufParser;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t file_size_ = 0;
  uint64_t data_offset_ = 0;
  uint64_t data_size_ = 0;
  // Held by pointer so views into them survive moves of GgufFile.
  std::shared_ptr<std::vector<uint8_t>> header_bytes_;
  std::shared_ptr<std::vector<GgufKV>> kvs_;
  std::shared_ptr<std::vector<GgufTensorInfo>> tensors_;
  // A joined file's other header bytes, which its tensor names point into.
  std::vector<std::shared_ptr<std::vector<uint8_t>>> joined_header_bytes_;
};

}  // namespace wllm
