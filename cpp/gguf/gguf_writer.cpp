#include "gguf/gguf_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>

#include "core/file_io.h"

namespace wllm {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" as a little-endian u32
constexpr uint32_t kVersion = 3;
constexpr uint64_t kDefaultAlignment = 32;
// ggml's GGML_MAX_NAME is 64 including the terminator: longer names load
// nowhere, so refuse them here rather than write an unusable file.
constexpr size_t kMaxTensorName = 63;

unsigned long long ull(uint64_t v) { return static_cast<unsigned long long>(v); }

template <typename T>
void put(std::vector<uint8_t>* out, T v) {
  uint8_t b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));  // the engine targets little-endian hosts only
  out->insert(out->end(), b, b + sizeof(T));
}

void put_string(std::vector<uint8_t>* out, std::string_view s) {
  put<uint64_t>(out, s.size());
  out->insert(out->end(), s.begin(), s.end());
}

template <typename T>
std::vector<uint8_t> scalar_bytes(T v) {
  std::vector<uint8_t> out;
  put<T>(&out, v);
  return out;
}

uint64_t numeric_size(GgufType t) {
  switch (t) {
    case GgufType::kU8: case GgufType::kI8: case GgufType::kBool: return 1;
    case GgufType::kU16: case GgufType::kI16: return 2;
    case GgufType::kU32: case GgufType::kI32: case GgufType::kF32: return 4;
    case GgufType::kU64: case GgufType::kI64: case GgufType::kF64: return 8;
    default: return 0;
  }
}

uint64_t pad_to(uint64_t n, uint64_t align) { return (n + align - 1) / align * align; }

class VectorSink : public GgufSink {
 public:
  explicit VectorSink(std::vector<uint8_t>* out) : out_(out) {}
  Status write(const void* data, size_t n) override {
    const uint8_t* p = static_cast<const uint8_t*>(data);
    out_->insert(out_->end(), p, p + n);
    return {};
  }

 private:
  std::vector<uint8_t>* out_;
};

class FileSink : public GgufSink {
 public:
  FileSink(std::FILE* f, const std::string& path) : f_(f), path_(path) {}
  Status write(const void* data, size_t n) override {
    if (!write_fully(f_, data, n)) {
      return Status::error(ErrorCode::kIo, "writing '%s': %s", path_.c_str(), std::strerror(errno));
    }
    return {};
  }

 private:
  std::FILE* f_;
  const std::string& path_;
};

// Passes a producer's bytes through and refuses more than the tensor holds.
class CountingSink : public GgufSink {
 public:
  CountingSink(GgufSink* inner, uint64_t limit) : inner_(inner), limit_(limit) {}
  Status write(const void* data, size_t n) override {
    if (n > limit_ - count_) {
      return Status::error(ErrorCode::kInternal, "producer wrote %llu bytes past the tensor's %llu",
                           ull(count_ + n - limit_), ull(limit_));
    }
    count_ += n;
    return inner_->write(data, n);
  }
  uint64_t count() const { return count_; }

 private:
  GgufSink* inner_;
  uint64_t limit_;
  uint64_t count_ = 0;
};

Status write_zeros(GgufSink& out, uint64_t n) {
  static const uint8_t kZeros[64] = {};
  while (n > 0) {
    const size_t k = static_cast<size_t>(std::min<uint64_t>(n, sizeof(kZeros)));
    WLLM_RETURN_IF_ERROR(out.write(kZeros, k));
    n -= k;
  }
  return {};
}

}  // namespace

Status GgufWriter::set_raw(std::string_view key, GgufType type, std::vector<uint8_t> value) {
  if (key.empty()) return Status::error(ErrorCode::kInvalidArgument, "metadata key is empty");
  if (key == "general.alignment") {
    if (type != GgufType::kU32) {
      return Status::error(ErrorCode::kInvalidArgument, "metadata 'general.alignment' must be u32, got %s",
                           gguf_type_name(type));
    }
    uint32_t a = 0;
    std::memcpy(&a, value.data(), 4);
    if (a == 0 || (a & (a - 1)) != 0) {
      return Status::error(ErrorCode::kInvalidArgument, "metadata 'general.alignment': %u is not a power of two", a);
    }
  }
  for (Kv& kv : kvs_) {
    if (kv.key == key) {
      kv.type = type;
      kv.value = std::move(value);
      return {};
    }
  }
  kvs_.push_back({std::string(key), type, std::move(value)});
  return {};
}

Status GgufWriter::set_u8(std::string_view k, uint8_t v) { return set_raw(k, GgufType::kU8, scalar_bytes(v)); }
Status GgufWriter::set_i8(std::string_view k, int8_t v) { return set_raw(k, GgufType::kI8, scalar_bytes(v)); }
Status GgufWriter::set_u16(std::string_view k, uint16_t v) { return set_raw(k, GgufType::kU16, scalar_bytes(v)); }
Status GgufWriter::set_i16(std::string_view k, int16_t v) { return set_raw(k, GgufType::kI16, scalar_bytes(v)); }
Status GgufWriter::set_u32(std::string_view k, uint32_t v) { return set_raw(k, GgufType::kU32, scalar_bytes(v)); }
Status GgufWriter::set_i32(std::string_view k, int32_t v) { return set_raw(k, GgufType::kI32, scalar_bytes(v)); }
Status GgufWriter::set_u64(std::string_view k, uint64_t v) { return set_raw(k, GgufType::kU64, scalar_bytes(v)); }
Status GgufWriter::set_i64(std::string_view k, int64_t v) { return set_raw(k, GgufType::kI64, scalar_bytes(v)); }
Status GgufWriter::set_f32(std::string_view k, float v) { return set_raw(k, GgufType::kF32, scalar_bytes(v)); }
Status GgufWriter::set_f64(std::string_view k, double v) { return set_raw(k, GgufType::kF64, scalar_bytes(v)); }
Status GgufWriter::set_bool(std::string_view k, bool v) {
  return set_raw(k, GgufType::kBool, scalar_bytes<uint8_t>(v ? 1 : 0));
}
Status GgufWriter::set_string(std::string_view k, std::string_view v) {
  std::vector<uint8_t> b;
  put_string(&b, v);
  return set_raw(k, GgufType::kString, std::move(b));
}

Status GgufWriter::set_array(std::string_view key, GgufType elem_type, const void* data, uint64_t count) {
  const uint64_t size = numeric_size(elem_type);
  if (size == 0) {
    return Status::error(ErrorCode::kInvalidArgument, "metadata '%.*s': %s is not a numeric array element type",
                         int(key.size()), key.data(), gguf_type_name(elem_type));
  }
  if (count > (std::numeric_limits<uint64_t>::max() >> 4) / size) {
    return Status::error(ErrorCode::kInvalidArgument, "metadata '%.*s': array of %llu elements is too large",
                         int(key.size()), key.data(), ull(count));
  }
  if (elem_type == GgufType::kBool) {
    const uint8_t* p = static_cast<const uint8_t*>(data);
    for (uint64_t i = 0; i < count; ++i) {
      if (p[i] > 1) {
        return Status::error(ErrorCode::kInvalidArgument, "metadata '%.*s': bool element %llu is %u",
                             int(key.size()), key.data(), ull(i), p[i]);
      }
    }
  }
  std::vector<uint8_t> b;
  b.reserve(12 + count * size);
  put<uint32_t>(&b, static_cast<uint32_t>(elem_type));
  put<uint64_t>(&b, count);
  const uint8_t* p = static_cast<const uint8_t*>(data);
  if (count > 0) b.insert(b.end(), p, p + count * size);
  return set_raw(key, GgufType::kArray, std::move(b));
}

Status GgufWriter::set_array_strings(std::string_view key, std::span<const std::string_view> v) {
  std::vector<uint8_t> b;
  put<uint32_t>(&b, static_cast<uint32_t>(GgufType::kString));
  put<uint64_t>(&b, v.size());
  for (std::string_view s : v) put_string(&b, s);
  return set_raw(key, GgufType::kArray, std::move(b));
}

Status GgufWriter::copy_kv(const GgufKV& kv) {
  const GgufValue& v = kv.value;
  switch (v.type) {
    case GgufType::kU8: return set_u8(kv.key, static_cast<uint8_t>(v.u));
    case GgufType::kI8: return set_i8(kv.key, static_cast<int8_t>(v.i));
    case GgufType::kU16: return set_u16(kv.key, static_cast<uint16_t>(v.u));
    case GgufType::kI16: return set_i16(kv.key, static_cast<int16_t>(v.i));
    case GgufType::kU32: return set_u32(kv.key, static_cast<uint32_t>(v.u));
    case GgufType::kI32: return set_i32(kv.key, static_cast<int32_t>(v.i));
    case GgufType::kU64: return set_u64(kv.key, v.u);
    case GgufType::kI64: return set_i64(kv.key, v.i);
    case GgufType::kF32: return set_f32(kv.key, static_cast<float>(v.f));
    case GgufType::kF64: return set_f64(kv.key, v.f);
    case GgufType::kBool: return set_bool(kv.key, v.u != 0);
    case GgufType::kString: return set_string(kv.key, v.s);
    case GgufType::kArray: break;
  }
  const GgufArray& a = v.array;
  const GgufType et = a.elem_type();
  const uint64_t n = a.size();
  std::vector<uint8_t> b;
  put<uint32_t>(&b, static_cast<uint32_t>(et));
  put<uint64_t>(&b, n);
  // The reader hides the raw bytes; every accessor is exact for its type
  // (int_at for integers up to 64 bits, number_at for floats), so rebuilding
  // element by element reproduces them.
  for (uint64_t i = 0; i < n; ++i) {
    switch (et) {
      case GgufType::kU8: case GgufType::kBool: put<uint8_t>(&b, static_cast<uint8_t>(a.int_at(i))); break;
      case GgufType::kI8: put<int8_t>(&b, static_cast<int8_t>(a.int_at(i))); break;
      case GgufType::kU16: put<uint16_t>(&b, static_cast<uint16_t>(a.int_at(i))); break;
      case GgufType::kI16: put<int16_t>(&b, static_cast<int16_t>(a.int_at(i))); break;
      case GgufType::kU32: put<uint32_t>(&b, static_cast<uint32_t>(a.int_at(i))); break;
      case GgufType::kI32: put<int32_t>(&b, static_cast<int32_t>(a.int_at(i))); break;
      case GgufType::kU64: put<uint64_t>(&b, static_cast<uint64_t>(a.int_at(i))); break;
      case GgufType::kI64: put<int64_t>(&b, a.int_at(i)); break;
      case GgufType::kF32: put<float>(&b, static_cast<float>(a.number_at(i))); break;
      case GgufType::kF64: put<double>(&b, a.number_at(i)); break;
      case GgufType::kString: put_string(&b, a.string_at(i)); break;
      case GgufType::kArray:
        return Status::error(ErrorCode::kUnsupported, "metadata '%.*s': nested arrays are not supported",
                             int(kv.key.size()), kv.key.data());
    }
  }
  return set_raw(kv.key, GgufType::kArray, std::move(b));
}

Status GgufWriter::copy_kv(const GgufFile& file, std::string_view key) {
  const GgufKV* kv = file.find(key);
  if (!kv) {
    return Status::error(ErrorCode::kInvalidArgument, "metadata key '%.*s' is not in the source file",
                         int(key.size()), key.data());
  }
  return copy_kv(*kv);
}

bool GgufWriter::has_key(std::string_view key) const {
  for (const Kv& kv : kvs_) {
    if (kv.key == key) return true;
  }
  return false;
}

Status GgufWriter::remove_key(std::string_view key) {
  for (auto it = kvs_.begin(); it != kvs_.end(); ++it) {
    if (it->key == key) {
      kvs_.erase(it);
      return {};
    }
  }
  return Status::error(ErrorCode::kInvalidArgument, "metadata key '%.*s' is not set", int(key.size()), key.data());
}

Result<uint64_t> GgufWriter::tensor_bytes(std::string_view name, TensorType type, std::span<const int64_t> shape) {
  const std::string n(name);
  if (name.empty()) return Status::error(ErrorCode::kInvalidArgument, "tensor name is empty");
  if (name.size() > kMaxTensorName) {
    return Status::error(ErrorCode::kInvalidArgument, "tensor '%s': name is %zu bytes (at most %zu)", n.c_str(),
                         name.size(), kMaxTensorName);
  }
  const TypeTraits* traits = find_type_traits(static_cast<uint32_t>(type));
  if (traits == nullptr || !traits->weight_type) {
    return Status::error(ErrorCode::kInvalidArgument, "tensor '%s': type %u cannot be stored in a model",
                         n.c_str(), static_cast<unsigned>(type));
  }
  if (shape.empty() || shape.size() > 4) {
    return Status::error(ErrorCode::kInvalidArgument, "tensor '%s': %zu dimensions (expected 1 to 4)", n.c_str(),
                         shape.size());
  }
  int64_t elements = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] <= 0) {
      return Status::error(ErrorCode::kInvalidArgument, "tensor '%s': dimension %zu is %lld (must be positive)",
                           n.c_str(), d, static_cast<long long>(shape[d]));
    }
    if (elements > std::numeric_limits<int64_t>::max() / shape[d]) {
      return Status::error(ErrorCode::kInvalidArgument, "tensor '%s': element count overflows", n.c_str());
    }
    elements *= shape[d];
  }
  if (shape[0] % traits->block_size != 0) {
    return Status::error(ErrorCode::kInvalidArgument,
                         "tensor '%s': row length %lld is not a multiple of the %s block size %lld", n.c_str(),
                         static_cast<long long>(shape[0]), traits->name, static_cast<long long>(traits->block_size));
  }
  const uint64_t blocks = static_cast<uint64_t>(elements / traits->block_size);
  if (blocks > (std::numeric_limits<uint64_t>::max() >> 2) / static_cast<uint64_t>(traits->block_bytes)) {
    return Status::error(ErrorCode::kInvalidArgument, "tensor '%s': byte size overflows", n.c_str());
  }
  return blocks * static_cast<uint64_t>(traits->block_bytes);
}

Status GgufWriter::check_new_tensor(std::string_view name, TensorType type, std::span<const int64_t> shape,
                                    TensorEntry* out) const {
  WLLM_ASSIGN_OR_RETURN(const uint64_t n_bytes, tensor_bytes(name, type, shape));
  for (const TensorEntry& t : tensors_) {
    if (t.name == name) {
      return Status::error(ErrorCode::kInvalidArgument, "tensor '%.*s' is added twice", int(name.size()), name.data());
    }
  }
  out->name = std::string(name);
  out->type = type;
  out->n_dims = static_cast<int>(shape.size());
  for (int d = 0; d < 4; ++d) out->ne[d] = d < out->n_dims ? shape[d] : 1;
  out->n_bytes = n_bytes;
  return {};
}

Status GgufWriter::add_tensor(std::string_view name, TensorType type, std::span<const int64_t> shape,
                              std::span<const uint8_t> data) {
  TensorEntry t;
  WLLM_RETURN_IF_ERROR(check_new_tensor(name, type, shape, &t));
  if (data.size() != t.n_bytes) {
    return Status::error(ErrorCode::kInvalidArgument, "tensor '%s': %zu data bytes given, its shape needs %llu",
                         t.name.c_str(), data.size(), ull(t.n_bytes));
  }
  t.data.assign(data.begin(), data.end());
  tensors_.push_back(std::move(t));
  return {};
}

Status GgufWriter::add_tensor(std::string_view name, TensorType type, std::span<const int64_t> shape,
                              GgufTensorProducer producer) {
  TensorEntry t;
  WLLM_RETURN_IF_ERROR(check_new_tensor(name, type, shape, &t));
  if (!producer) return Status::error(ErrorCode::kInvalidArgument, "tensor '%s': no data producer", t.name.c_str());
  t.producer = std::move(producer);
  tensors_.push_back(std::move(t));
  return {};
}

Status GgufWriter::add_tensor_info(std::string_view name, TensorType type, std::span<const int64_t> shape) {
  TensorEntry t;
  WLLM_RETURN_IF_ERROR(check_new_tensor(name, type, shape, &t));
  tensors_.push_back(std::move(t));
  return {};
}

uint64_t GgufWriter::alignment() const {
  for (const Kv& kv : kvs_) {
    if (kv.key == "general.alignment") {
      uint32_t a = 0;
      std::memcpy(&a, kv.value.data(), 4);  // validated as a power-of-two u32 by set_raw
      return a;
    }
  }
  return kDefaultAlignment;
}

uint64_t GgufWriter::header_size() const {
  uint64_t n = 4 + 4 + 8 + 8;
  for (const Kv& kv : kvs_) n += 8 + kv.key.size() + 4 + kv.value.size();
  for (const TensorEntry& t : tensors_) n += 8 + t.name.size() + 4 + 8 * uint64_t(t.n_dims) + 4 + 8;
  return n;
}

uint64_t GgufWriter::file_size() const {
  const uint64_t align = alignment();
  uint64_t n = pad_to(header_size(), align);
  for (const TensorEntry& t : tensors_) n += pad_to(t.n_bytes, align);
  return n;
}

std::vector<uint8_t> GgufWriter::header_to_memory() const {
  const uint64_t align = alignment();
  std::vector<uint8_t> h;
  h.reserve(header_size());
  put<uint32_t>(&h, kMagic);
  put<uint32_t>(&h, kVersion);
  put<uint64_t>(&h, tensors_.size());
  put<uint64_t>(&h, kvs_.size());
  for (const Kv& kv : kvs_) {
    put_string(&h, kv.key);
    put<uint32_t>(&h, static_cast<uint32_t>(kv.type));
    h.insert(h.end(), kv.value.begin(), kv.value.end());
  }
  uint64_t offset = 0;  // from the start of the data section
  for (const TensorEntry& t : tensors_) {
    put_string(&h, t.name);
    put<uint32_t>(&h, static_cast<uint32_t>(t.n_dims));
    for (int d = 0; d < t.n_dims; ++d) put<uint64_t>(&h, static_cast<uint64_t>(t.ne[d]));
    put<uint32_t>(&h, static_cast<uint32_t>(t.type));
    put<uint64_t>(&h, offset);
    offset += pad_to(t.n_bytes, align);
  }
  h.resize(pad_to(h.size(), align));
  return h;
}

Status GgufWriter::write_to(GgufSink& out) const {
  const uint64_t align = alignment();
  const std::vector<uint8_t> header = header_to_memory();
  WLLM_RETURN_IF_ERROR(out.write(header.data(), header.size()));

  for (const TensorEntry& t : tensors_) {
    if (t.producer) {
      CountingSink counted(&out, t.n_bytes);
      Status s = t.producer(counted);
      if (!s.ok()) return s.with_context("tensor '" + t.name + "'");
      if (counted.count() != t.n_bytes) {
        return Status::error(ErrorCode::kInternal, "tensor '%s': producer wrote %llu of %llu bytes", t.name.c_str(),
                             ull(counted.count()), ull(t.n_bytes));
      }
    } else if (t.data.size() != t.n_bytes) {
      return Status::error(ErrorCode::kInternal, "tensor '%s' has no data (it was added with add_tensor_info)",
                           t.name.c_str());
    } else {
      WLLM_RETURN_IF_ERROR(out.write(t.data.data(), t.data.size()));
    }
    WLLM_RETURN_IF_ERROR(write_zeros(out, pad_to(t.n_bytes, align) - t.n_bytes));
  }
  return {};
}

Result<std::vector<uint8_t>> GgufWriter::write_to_memory() const {
  std::vector<uint8_t> bytes;
  bytes.reserve(file_size());
  VectorSink sink(&bytes);
  WLLM_RETURN_IF_ERROR(write_to(sink));
  return bytes;
}

Status GgufWriter::write_file(const std::string& path) const {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return Status::error(ErrorCode::kIo, "cannot create '%s': %s", path.c_str(), std::strerror(errno));
  std::setvbuf(f, nullptr, _IOFBF, 1 << 20);
  FileSink sink(f, path);
  Status s = write_to(sink);
  // Buffered bytes hit the disk only at fflush/fclose: a full disk shows here.
  if (s.ok() && std::fflush(f) != 0) {
    s = Status::error(ErrorCode::kIo, "writing '%s': %s", path.c_str(), std::strerror(errno));
  }
  if (std::fclose(f) != 0 && s.ok()) {
    s = Status::error(ErrorCode::kIo, "closing '%s': %s", path.c_str(), std::strerror(errno));
  }
  if (!s.ok()) {
    // Leave no half-written model behind, but never unlink a device (/dev/full).
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) std::filesystem::remove(path, ec);
  }
  return s;
}

}  // namespace wllm
