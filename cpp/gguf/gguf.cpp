#include "gguf/gguf.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <unordered_set>

namespace wllm {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as little-endian u32
constexpr uint64_t kDefaultAlignment = 32;
constexpr uint64_t kMaxNameLength = 256;  // ggml allows 63; be lenient but bounded

// Size in bytes of one scalar of `type`, or 0 for string/array/unknown.
uint64_t scalar_size(GgufType type) {
  switch (type) {
    case GgufType::kU8: case GgufType::kI8: case GgufType::kBool: return 1;
    case GgufType::kU16: case GgufType::kI16: return 2;
    case GgufType::kU32: case GgufType::kI32: case GgufType::kF32: return 4;
    case GgufType::kU64: case GgufType::kI64: case GgufType::kF64: return 8;
    default: return 0;
  }
}

bool is_known_type(uint32_t t) { return t <= static_cast<uint32_t>(GgufType::kF64); }

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

}  // namespace

const char* gguf_type_name(GgufType type) {
  static const char* const kNames[] = {"u8",   "i8",     "u16",   "i16", "u32", "i32", "f32",
                                       "bool", "string", "array", "u64", "i64", "f64"};
  const uint32_t t = static_cast<uint32_t>(type);
  return t < sizeof(kNames) / sizeof(kNames[0]) ? kNames[t] : "unknown";
}

std::string_view GgufArray::string_at(uint64_t i) const {
  return (elem_type_ == GgufType::kString && i < strings_.size()) ? strings_[i] : std::string_view();
}

double GgufArray::number_at(uint64_t i) const {
  if (i >= count_ || data_ == nullptr) return 0;
  const uint8_t* p = data_ + i * scalar_size(elem_type_);
  switch (elem_type_) {
    case GgufType::kU8: return p[0];
    case GgufType::kI8: return static_cast<int8_t>(p[0]);
    case GgufType::kBool: return p[0] != 0;
    case GgufType::kU16: return load<uint16_t>(p);
    case GgufType::kI16: return load<int16_t>(p);
    case GgufType::kU32: return load<uint32_t>(p);
    case GgufType::kI32: return load<int32_t>(p);
    case GgufType::kF32: return load<float>(p);
    case GgufType::kU64: return static_cast<double>(load<uint64_t>(p));
    case GgufType::kI64: return static_cast<double>(load<int64_t>(p));
    case GgufType::kF64: return load<double>(p);
    default: return 0;
  }
}

int64_t GgufArray::int_at(uint64_t i) const {
  if (i >= count_ || data_ == nullptr) return 0;
  const uint8_t* p = data_ + i * scalar_size(elem_type_);
  switch (elem_type_) {
    case GgufType::kU64: return static_cast<int64_t>(load<uint64_t>(p));
    case GgufType::kI64: return load<int64_t>(p);
    case GgufType::kF32: case GgufType::kF64: return static_cast<int64_t>(number_at(i));
    default: return static_cast<int64_t>(number_at(i));
  }
}

// Reads the header front to back. Positions are absolute file offsets; bytes
// past the prefix but inside the file mean "need more data", bytes past the
// end of the file mean "truncated".
class GgufParser {
 public:
  GgufParser(std::span<const uint8_t> prefix, uint64_t file_size) : prefix_(prefix), file_size_(file_size) {}

  Result<GgufFile> parse(uint64_t* needed) {
    Status s = parse_all();
    if (!s.ok()) {
      if (s.code() == ErrorCode::kNeedMoreData && needed) *needed = needed_;
      return s;
    }
    return std::move(file_);
  }

 private:
  // Makes sure [pos_, pos_ + n) is readable. `what` names the field.
  Status need(uint64_t n, const char* what) {
    if (n > file_size_ || pos_ > file_size_ - n) {
      return Status::error(ErrorCode::kBadFile, "file truncated: %s at byte %llu needs %llu bytes but the file has %llu",
                           what, ull(pos_), ull(n), ull(file_size_));
    }
    if (pos_ + n > prefix_.size()) {
      // Ask for at least double what we have, so a big header costs few retries.
      needed_ = std::min<uint64_t>(file_size_, std::max<uint64_t>(pos_ + n, uint64_t(prefix_.size()) * 2));
      return Status::error(ErrorCode::kNeedMoreData, "header continues past byte %llu", ull(prefix_.size()));
    }
    return {};
  }
  static unsigned long long ull(uint64_t v) { return static_cast<unsigned long long>(v); }

  template <typename T>
  Status read(T* out, const char* what) {
    WLLM_RETURN_IF_ERROR(need(sizeof(T), what));
    *out = load<T>(prefix_.data() + pos_);
    pos_ += sizeof(T);
    return {};
  }

  Status read_string(std::string_view* out, const char* what) {
    uint64_t len = 0;
    WLLM_RETURN_IF_ERROR(read(&len, what));
    WLLM_RETURN_IF_ERROR(need(len, what));
    *out = std::string_view(reinterpret_cast<const char*>(prefix_.data() + pos_), len);
    pos_ += len;
    return {};
  }

  Status read_value(GgufType type, GgufValue* v, std::string_view key) {
    v->type = type;
    const uint8_t* p = nullptr;
    const uint64_t size = scalar_size(type);
    if (size > 0) {
      WLLM_RETURN_IF_ERROR(need(size, "metadata value"));
      p = prefix_.data() + pos_;
      pos_ += size;
    }
    switch (type) {
      case GgufType::kU8: v->u = p[0]; break;
      case GgufType::kI8: v->i = static_cast<int8_t>(p[0]); break;
      case GgufType::kBool:
        if (p[0] > 1) return bad_key(key, "bool value %u is neither 0 nor 1", p[0]);
        v->u = p[0];
        break;
      case GgufType::kU16: v->u = load<uint16_t>(p); break;
      case GgufType::kI16: v->i = load<int16_t>(p); break;
      case GgufType::kU32: v->u = load<uint32_t>(p); break;
      case GgufType::kI32: v->i = load<int32_t>(p); break;
      case GgufType::kU64: v->u = load<uint64_t>(p); break;
      case GgufType::kI64: v->i = load<int64_t>(p); break;
      case GgufType::kF32: v->f = load<float>(p); break;
      case GgufType::kF64: v->f = load<double>(p); break;
      case GgufType::kString: return read_string(&v->s, "metadata string");
      case GgufType::kArray: return read_array(&v->array, key);
    }
    return {};
  }

  Status read_array(GgufArray* a, std::string_view key) {
    uint32_t elem = 0;
    uint64_t count = 0;
    WLLM_RETURN_IF_ERROR(read(&elem, "array type"));
    WLLM_RETURN_IF_ERROR(read(&count, "array length"));
    if (!is_known_type(elem)) return bad_key(key, "unknown array element type %u", elem);
    a->elem_type_ = static_cast<GgufType>(elem);
    a->count_ = count;
    if (a->elem_type_ == GgufType::kArray) return bad_key(key, "nested arrays are not supported");
    const uint64_t remaining = file_size_ - pos_;
    if (a->elem_type_ == GgufType::kString) {
      // Each string costs at least its 8-byte length: bound count before reserving.
      if (count > remaining / 8) return bad_key(key, "array of %llu strings cannot fit in the file", ull(count));
      a->strings_.reserve(count);
      for (uint64_t i = 0; i < count; ++i) {
        std::string_view s;
        WLLM_RETURN_IF_ERROR(read_string(&s, "array string"));
        a->strings_.push_back(s);
      }
      return {};
    }
    const uint64_t size = scalar_size(a->elem_type_);
    if (count > remaining / size) {
      return bad_key(key, "array of %llu %s values needs more bytes than the file has", ull(count),
                     gguf_type_name(a->elem_type_));
    }
    WLLM_RETURN_IF_ERROR(need(count * size, "array data"));
    a->data_ = prefix_.data() + pos_;
    pos_ += count * size;
    return {};
  }

  Status bad_key(std::string_view key, const char* fmt, ...) __attribute__((format(printf, 3, 4))) {
    va_list args;
    va_start(args, fmt);
    std::string msg = str_vprintf(fmt, args);
    va_end(args);
    return Status(ErrorCode::kBadFile, "metadata '" + std::string(key) + "': " + msg);
  }

  Status parse_all() {
    uint32_t magic = 0, version = 0;
    uint64_t n_tensors = 0, n_kv = 0;
    WLLM_RETURN_IF_ERROR(read(&magic, "magic"));
    if (magic != kMagic) {
      return Status::error(ErrorCode::kBadFile, "not a GGUF file (the first 4 bytes are not 'GGUF')");
    }
    WLLM_RETURN_IF_ERROR(read(&version, "version"));
    if (version == 1) return Status::error(ErrorCode::kUnsupported, "GGUF version 1 is obsolete; re-convert the model");
    if (version != 2 && version != 3) {
      if (version != 0 && (version & 0xffff) == 0) {
        return Status::error(ErrorCode::kUnsupported, "big-endian GGUF files are not supported");
      }
      return Status::error(ErrorCode::kUnsupported, "GGUF version %u is not supported (expected 2 or 3)", version);
    }
    WLLM_RETURN_IF_ERROR(read(&n_tensors, "tensor count"));
    WLLM_RETURN_IF_ERROR(read(&n_kv, "metadata count"));
    // A key-value pair takes at least 12 bytes, a tensor record at least 24.
    if (n_kv > file_size_ / 12) {
      return Status::error(ErrorCode::kBadFile, "metadata count %llu cannot fit in a %llu-byte file", ull(n_kv),
                           ull(file_size_));
    }
    if (n_tensors > file_size_ / 24) {
      return Status::error(ErrorCode::kBadFile, "tensor count %llu cannot fit in a %llu-byte file", ull(n_tensors),
                           ull(file_size_));
    }

    file_.version_ = version;
    file_.file_size_ = file_size_;
    auto kvs = std::make_shared<std::vector<GgufKV>>();
    kvs->reserve(n_kv);
    std::unordered_set<std::string_view> keys;
    for (uint64_t i = 0; i < n_kv; ++i) {
      GgufKV kv;
      uint32_t type = 0;
      WLLM_RETURN_IF_ERROR(read_string(&kv.key, "metadata key"));
      WLLM_RETURN_IF_ERROR(read(&type, "metadata type"));
      if (!is_known_type(type)) return bad_key(kv.key, "unknown value type %u", type);
      WLLM_RETURN_IF_ERROR(read_value(static_cast<GgufType>(type), &kv.value, kv.key));
      if (!keys.insert(kv.key).second) return bad_key(kv.key, "duplicate key");
      kvs->push_back(std::move(kv));
    }
    file_.kvs_ = kvs;

    file_.alignment_ = kDefaultAlignment;
    if (const GgufKV* kv = file_.find("general.alignment")) {
      if (kv->value.type != GgufType::kU32) return bad_key(kv->key, "expected u32, got %s", gguf_type_name(kv->value.type));
      const uint64_t a = kv->value.u;
      if (a == 0 || (a & (a - 1)) != 0) return bad_key(kv->key, "alignment %llu is not a power of two", ull(a));
      file_.alignment_ = a;
    }

    auto tensors = std::make_shared<std::vector<GgufTensorInfo>>();
    tensors->reserve(n_tensors);
    std::unordered_set<std::string_view> names;
    for (uint64_t i = 0; i < n_tensors; ++i) {
      GgufTensorInfo t;
      WLLM_RETURN_IF_ERROR(read_tensor_info(&t));
      if (!names.insert(t.name).second) {
        return Status::error(ErrorCode::kBadFile, "tensor '%.*s' appears twice", int(t.name.size()), t.name.data());
      }
      tensors->push_back(t);
    }
    file_.tensors_ = tensors;

    // Tensor data starts at the next multiple of the alignment.
    const uint64_t align = file_.alignment_;
    const uint64_t data_offset = (pos_ + align - 1) / align * align;
    if (n_tensors > 0 && data_offset > file_size_) {
      return Status::error(ErrorCode::kBadFile, "file truncated: tensor data should start at byte %llu but the file has %llu bytes",
                           ull(data_offset), ull(file_size_));
    }
    file_.data_offset_ = std::min(data_offset, file_size_);
    const uint64_t data_room = file_size_ - file_.data_offset_;
    uint64_t data_end = 0;
    for (const GgufTensorInfo& t : *tensors) {
      const std::string name(t.name);
      if (t.offset % align != 0) {
        return Status::error(ErrorCode::kBadFile, "tensor '%s': data offset %llu is not a multiple of the alignment %llu",
                             name.c_str(), ull(t.offset), ull(align));
      }
      if (t.offset > data_room || t.n_bytes > data_room - t.offset) {
        return Status::error(ErrorCode::kBadFile, "tensor '%s': data ends at byte %llu but the file has %llu bytes",
                             name.c_str(), ull(file_.data_offset_ + t.offset + t.n_bytes), ull(file_size_));
      }
      data_end = std::max(data_end, t.offset + t.n_bytes);
    }
    file_.data_size_ = data_end;
    // Keep our own copy of the header so views outlive the caller's buffer.
    auto bytes = std::make_shared<std::vector<uint8_t>>(prefix_.begin(), prefix_.begin() + pos_);
    rebase_views(bytes->data());
    file_.header_bytes_ = bytes;
    return {};
  }

  Status read_tensor_info(GgufTensorInfo* t) {
    WLLM_RETURN_IF_ERROR(read_string(&t->name, "tensor name"));
    const std::string name(t->name);
    if (t->name.size() > kMaxNameLength) {
      return Status::error(ErrorCode::kBadFile, "tensor name of %zu bytes is too long", t->name.size());
    }
    uint32_t n_dims = 0;
    WLLM_RETURN_IF_ERROR(read(&n_dims, "tensor dimension count"));
    if (n_dims == 0 || n_dims > 4) {
      return Status::error(ErrorCode::kBadFile, "tensor '%s': %u dimensions (expected 1 to 4)", name.c_str(), n_dims);
    }
    t->n_dims = static_cast<int>(n_dims);
    int64_t elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      uint64_t ne = 0;
      WLLM_RETURN_IF_ERROR(read(&ne, "tensor shape"));
      if (ne > uint64_t(std::numeric_limits<int64_t>::max())) {
        return Status::error(ErrorCode::kBadFile, "tensor '%s': dimension %u is negative", name.c_str(), d);
      }
      t->ne[d] = static_cast<int64_t>(ne);
      if (t->ne[d] != 0 && elements > std::numeric_limits<int64_t>::max() / t->ne[d]) {
        return Status::error(ErrorCode::kBadFile, "tensor '%s': element count overflows", name.c_str());
      }
      elements *= t->ne[d];
    }
    uint32_t type = 0;
    WLLM_RETURN_IF_ERROR(read(&type, "tensor type"));
    const TypeTraits* traits = find_type_traits(type);
    if (traits == nullptr || !traits->weight_type) {
      return Status::error(ErrorCode::kUnsupported, "tensor '%s': tensor type %u is not supported", name.c_str(), type);
    }
    t->type = traits->type;
    if (t->ne[0] % traits->block_size != 0) {
      return Status::error(ErrorCode::kBadFile, "tensor '%s': row length %lld is not a multiple of the %s block size %lld",
                           name.c_str(), static_cast<long long>(t->ne[0]), traits->name,
                           static_cast<long long>(traits->block_size));
    }
    // Bytes = blocks * block_bytes; blocks <= elements, so check that product.
    const uint64_t blocks = static_cast<uint64_t>(elements / traits->block_size);
    if (blocks > std::numeric_limits<uint64_t>::max() / uint64_t(traits->block_bytes)) {
      return Status::error(ErrorCode::kBadFile, "tensor '%s': byte size overflows", name.c_str());
    }
    t->n_bytes = blocks * static_cast<uint64_t>(traits->block_bytes);
    WLLM_RETURN_IF_ERROR(read(&t->offset, "tensor offset"));
    return {};
  }

  // Views were taken into the caller's prefix; move them into our copy.
  void rebase_views(const uint8_t* base) {
    const auto rebase = [&](std::string_view s) {
      if (s.empty()) return std::string_view();
      const auto off = reinterpret_cast<const uint8_t*>(s.data()) - prefix_.data();
      return std::string_view(reinterpret_cast<const char*>(base + off), s.size());
    };
    for (GgufKV& kv : *file_.kvs_) {
      kv.key = rebase(kv.key);
      kv.value.s = rebase(kv.value.s);
      GgufArray& a = kv.value.array;
      for (std::string_view& s : a.strings_) s = rebase(s);
      if (a.data_) a.data_ = base + (a.data_ - prefix_.data());
    }
    for (GgufTensorInfo& t : *file_.tensors_) t.name = rebase(t.name);
  }

  std::span<const uint8_t> prefix_;
  uint64_t file_size_;
  uint64_t pos_ = 0;
  uint64_t needed_ = 0;
  GgufFile file_;
};

Result<GgufFile> GgufFile::parse_header(std::span<const uint8_t> prefix, uint64_t file_size, uint64_t* needed) {
  if (prefix.size() > file_size) {
    return Status::error(ErrorCode::kInvalidArgument, "prefix of %zu bytes is longer than the file size %llu",
                         prefix.size(), static_cast<unsigned long long>(file_size));
  }
  GgufParser parser(prefix, file_size);
  return parser.parse(needed);
}

GgufFile GgufFile::join(std::span<const GgufFile> files, std::span<const uint64_t> data_starts, uint64_t data_size) {
  GgufFile out = files[0];
  out.data_size_ = data_size;
  out.file_size_ = 0;
  auto tensors = std::make_shared<std::vector<GgufTensorInfo>>();
  for (size_t i = 0; i < files.size(); ++i) {
    out.file_size_ += files[i].file_size_;
    if (i > 0) out.joined_header_bytes_.push_back(files[i].header_bytes_);
    for (GgufTensorInfo t : *files[i].tensors_) {
      t.offset += data_starts[i];
      tensors->push_back(t);
    }
  }
  out.tensors_ = tensors;
  return out;
}

const GgufKV* GgufFile::find(std::string_view key) const {
  if (!kvs_) return nullptr;
  for (const GgufKV& kv : *kvs_) {
    if (kv.key == key) return &kv;
  }
  return nullptr;
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
  if (!tensors_) return nullptr;
  for (const GgufTensorInfo& t : *tensors_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

namespace {

Status missing(std::string_view key) {
  return Status(ErrorCode::kBadFile, "metadata key '" + std::string(key) + "' is missing");
}
Status wrong_type(const GgufKV& kv, const char* expected) {
  return Status(ErrorCode::kBadFile, "metadata '" + std::string(kv.key) + "': expected " + expected + ", got " +
                                         gguf_type_name(kv.value.type));
}
bool is_unsigned(GgufType t) {
  return t == GgufType::kU8 || t == GgufType::kU16 || t == GgufType::kU32 || t == GgufType::kU64;
}
bool is_signed(GgufType t) {
  return t == GgufType::kI8 || t == GgufType::kI16 || t == GgufType::kI32 || t == GgufType::kI64;
}

}  // namespace

Result<std::string_view> GgufFile::get_string(std::string_view key) const {
  const GgufKV* kv = find(key);
  if (!kv) return missing(key);
  if (kv->value.type != GgufType::kString) return wrong_type(*kv, "string");
  return kv->value.s;
}

Result<uint64_t> GgufFile::get_uint(std::string_view key) const {
  const GgufKV* kv = find(key);
  if (!kv) return missing(key);
  if (is_unsigned(kv->value.type)) return kv->value.u;
  if (is_signed(kv->value.type)) {
    if (kv->value.i < 0) {
      return Status(ErrorCode::kBadFile, "metadata '" + std::string(key) + "': " + std::to_string(kv->value.i) +
                                             " is negative");
    }
    return static_cast<uint64_t>(kv->value.i);
  }
  return wrong_type(*kv, "an integer");
}

Result<int64_t> GgufFile::get_int(std::string_view key) const {
  const GgufKV* kv = find(key);
  if (!kv) return missing(key);
  if (is_signed(kv->value.type)) return kv->value.i;
  if (is_unsigned(kv->value.type)) {
    if (kv->value.u > uint64_t(std::numeric_limits<int64_t>::max())) {
      return Status(ErrorCode::kBadFile, "metadata '" + std::string(key) + "': value too large");
    }
    return static_cast<int64_t>(kv->value.u);
  }
  return wrong_type(*kv, "an integer");
}

Result<float> GgufFile::get_float(std::string_view key) const {
  const GgufKV* kv = find(key);
  if (!kv) return missing(key);
  if (kv->value.type == GgufType::kF32 || kv->value.type == GgufType::kF64) return static_cast<float>(kv->value.f);
  return wrong_type(*kv, "a float");
}

Result<bool> GgufFile::get_bool(std::string_view key) const {
  const GgufKV* kv = find(key);
  if (!kv) return missing(key);
  if (kv->value.type != GgufType::kBool) return wrong_type(*kv, "a bool");
  return kv->value.u != 0;
}

Result<const GgufArray*> GgufFile::get_array(std::string_view key) const {
  const GgufKV* kv = find(key);
  if (!kv) return missing(key);
  if (kv->value.type != GgufType::kArray) return wrong_type(*kv, "an array");
  return &kv->value.array;
}

Result<std::string_view> GgufFile::get_string_or(std::string_view key, std::string_view fallback) const {
  return find(key) ? get_string(key) : Result<std::string_view>(fallback);
}
Result<uint64_t> GgufFile::get_uint_or(std::string_view key, uint64_t fallback) const {
  return find(key) ? get_uint(key) : Result<uint64_t>(fallback);
}
Result<float> GgufFile::get_float_or(std::string_view key, float fallback) const {
  return find(key) ? get_float(key) : Result<float>(fallback);
}
Result<bool> GgufFile::get_bool_or(std::string_view key, bool fallback) const {
  return find(key) ? get_bool(key) : Result<bool>(fallback);
}

}  // namespace wllm
