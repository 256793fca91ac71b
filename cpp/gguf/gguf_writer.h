// GGUF v3 writer: the inverse of gguf.h's reader, for `quantize`, `synth`
// and tests.
//
// Metadata keeps insertion order; setting a key again replaces its value in
// place (as ggml's gguf_set_* does), so "copy everything, then override
// general.file_type" works. Tensors are written in the order added, each at
// an offset aligned to `general.alignment` (32 unless that key is set; it must
// be a power-of-two u32) and padded to it, as ggml does.
//
// Tensor bytes come either from a buffer (copied) or from a producer called
// at write time, which streams exactly the tensor's byte size into a sink:
// quantize/synth thus hold one block of rows at a time, never the model.
//
// Inputs are validated when added (unknown or activation-only type, row
// length not a multiple of the block size, bad shapes, duplicate names or
// byte counts that overflow) and each problem is returned as a Status naming
// it. Nothing throws; write_file() removes its partial output on failure.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "gguf/gguf.h"

namespace wllm {

// Where tensor bytes go at write time.
class GgufSink {
 public:
  virtual ~GgufSink() = default;
  virtual Status write(const void* data, size_t n) = 0;
};

// Streams a tensor's bytes: must write exactly the tensor's byte size.
using GgufTensorProducer = std::function<Status(GgufSink& out)>;

class GgufWriter {
 public:
  GgufWriter() = default;

  // Scalars. A key set twice keeps its first position and the last value.
  Status set_u8(std::string_view key, uint8_t v);
  Status set_i8(std::string_view key, int8_t v);
  Status set_u16(std::string_view key, uint16_t v);
  Status set_i16(std::string_view key, int16_t v);
  Status set_u32(std::string_view key, uint32_t v);
  Status set_i32(std::string_view key, int32_t v);
  Status set_u64(std::string_view key, uint64_t v);
  Status set_i64(std::string_view key, int64_t v);
  Status set_f32(std::string_view key, float v);
  Status set_f64(std::string_view key, double v);
  Status set_bool(std::string_view key, bool v);
  Status set_string(std::string_view key, std::string_view v);

  // Arrays of a numeric (or bool) element type: `count` elements of
  // `elem_type`'s size, little-endian, read from `data`.
  Status set_array(std::string_view key, GgufType elem_type, const void* data, uint64_t count);
  Status set_array_i32(std::string_view key, std::span<const int32_t> v) {
    return set_array(key, GgufType::kI32, v.data(), v.size());
  }
  Status set_array_f32(std::string_view key, std::span<const float> v) {
    return set_array(key, GgufType::kF32, v.data(), v.size());
  }
  Status set_array_strings(std::string_view key, std::span<const std::string_view> v);
  Status set_array_strings(std::string_view key, std::initializer_list<std::string_view> v) {
    return set_array_strings(key, std::span<const std::string_view>(v.begin(), v.size()));
  }

  // Copies a parsed key-value pair unchanged (same type, same bytes).
  Status copy_kv(const GgufKV& kv);
  // Copies `key` from `file`; an error if it is absent.
  Status copy_kv(const GgufFile& file, std::string_view key);

  bool has_key(std::string_view key) const;
  Status remove_key(std::string_view key);  // an error if absent

  // Tensors: shape is ne[0] (row length) first, 1 to 4 dimensions, each > 0.
  Status add_tensor(std::string_view name, TensorType type, std::span<const int64_t> shape,
                    std::span<const uint8_t> data);
  Status add_tensor(std::string_view name, TensorType type, std::span<const int64_t> shape,
                    GgufTensorProducer producer);
  // A tensor in the header only: header_to_memory() describes it, writing
  // the file fails (for describing data that lies elsewhere).
  Status add_tensor_info(std::string_view name, TensorType type, std::span<const int64_t> shape);
  // Byte size of a tensor that add_tensor would accept (or the error it gives).
  static Result<uint64_t> tensor_bytes(std::string_view name, TensorType type, std::span<const int64_t> shape);

  size_t n_kv() const { return kvs_.size(); }
  size_t n_tensors() const { return tensors_.size(); }
  uint64_t alignment() const;
  // Total size of the file write_file() would produce.
  uint64_t file_size() const;

  // Writes the file. kIo names the path and the OS error (e.g. "No space
  // left on device"); a producer's error is returned with the tensor's name.
  Status write_file(const std::string& path) const;
  // Same, into memory (tests).
  Status write_to(GgufSink& out) const;
  Result<std::vector<uint8_t>> write_to_memory() const;
  // The header alone, padded to the alignment: what GgufFile::parse_header
  // reads, with file_size() as the file's size (the tensor data not written).
  std::vector<uint8_t> header_to_memory() const;

 private:
  struct Kv {
    std::string key;
    GgufType type;
    std::vector<uint8_t> value;  // serialized value (after the type tag)
  };
  struct TensorEntry {
    std::string name;
    TensorType type;
    int n_dims;
    int64_t ne[4];
    uint64_t n_bytes;
    std::vector<uint8_t> data;     // used when producer is empty
    GgufTensorProducer producer;
  };

  Status set_raw(std::string_view key, GgufType type, std::vector<uint8_t> value);
  Status check_new_tensor(std::string_view name, TensorType type, std::span<const int64_t> shape,
                          TensorEntry* out) const;
  uint64_t header_size() const;

  std::vector<Kv> kvs_;
  std::vector<TensorEntry> tensors_;
};

}  // namespace wllm
