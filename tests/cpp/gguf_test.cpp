// GGUF reader and writer: round trips through the writer, and hostile files
// built byte by byte, each rejected with its ErrorCode and a message that
// names the problem.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "gguf_compare.h"
#include "gguf/gguf_writer.h"

namespace wllm {
namespace {

using Bytes = std::vector<uint8_t>;

// ---------------------------------------------------------------------------
// Helpers

// Asserts `s` failed with `code` and a message containing `part`.
void expect_error(const Status& s, ErrorCode code, const std::string& part) {
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(error_code_name(s.code()), std::string(error_code_name(code))) << s.message();
  EXPECT_NE(s.message().find(part), std::string::npos) << "message: " << s.message() << "\nexpected: " << part;
}

Result<GgufFile> parse(const Bytes& b) { return GgufFile::parse(std::span<const uint8_t>(b)); }

Bytes must_write(const GgufWriter& w) {
  Result<Bytes> r = w.write_to_memory();
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(r).value() : Bytes();
}

GgufFile must_parse(const Bytes& b) {
  Result<GgufFile> r = parse(b);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(r).value() : GgufFile();
}

// Raw little-endian GGUF bytes, for files the writer would refuse to make.
class Raw {
 public:
  Raw& u8(uint8_t v) { return put(v); }
  Raw& u32(uint32_t v) { return put(v); }
  Raw& u64(uint64_t v) { return put(v); }
  Raw& str(std::string_view s) {
    u64(s.size());
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  Raw& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    return u32(0x46554747).u32(version).u64(n_tensors).u64(n_kv);
  }
  Raw& kv_u32(std::string_view key, uint32_t v) { return str(key).u32(uint32_t(GgufType::kU32)).u32(v); }
  Raw& tensor(std::string_view name, std::vector<uint64_t> ne, uint32_t type, uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(ne.size()));
    for (uint64_t n : ne) u64(n);
    return u32(type).u64(offset);
  }
  Raw& pad(size_t align = 32) {
    while (b.size() % align) b.push_back(0);
    return *this;
  }
  Raw& zeros(size_t n) {
    b.insert(b.end(), n, 0);
    return *this;
  }
  Bytes b;

 private:
  template <typename T>
  Raw& put(T v) {
    uint8_t x[sizeof(T)];
    std::memcpy(x, &v, sizeof(T));
    b.insert(b.end(), x, x + sizeof(T));
    return *this;
  }
};

constexpr uint32_t kF32 = 0, kQ4_0 = 2;

// A valid file with one f32 tensor of shape `ne`, after the given KV bytes.
Bytes one_tensor(std::vector<uint64_t> ne, uint32_t type = kF32, uint64_t offset = 0, size_t data_bytes = 64) {
  Raw r;
  r.header(1, 0).tensor("t", ne, type, offset).pad().zeros(data_bytes);
  return r.b;
}

// Compares two parses of the same file field by field.
void expect_same(const GgufFile& a, const GgufFile& b) {
  EXPECT_EQ(a.version(), b.version());
  EXPECT_EQ(a.alignment(), b.alignment());
  EXPECT_EQ(a.data_offset(), b.data_offset());
  EXPECT_EQ(a.data_size(), b.data_size());
  ASSERT_EQ(a.kvs().size(), b.kvs().size());
  for (size_t i = 0; i < a.kvs().size(); ++i) {
    testing::expect_same_kv(a.kvs()[i], b.kvs()[i]);
  }
  ASSERT_EQ(a.tensors().size(), b.tensors().size());
  for (size_t i = 0; i < a.tensors().size(); ++i) {
    const GgufTensorInfo& x = a.tensors()[i];
    const GgufTensorInfo& y = b.tensors()[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.type, y.type);
    EXPECT_EQ(x.n_dims, y.n_dims);
    for (int d = 0; d < 4; ++d) EXPECT_EQ(x.ne[d], y.ne[d]);
    EXPECT_EQ(x.offset, y.offset);
    EXPECT_EQ(x.n_bytes, y.n_bytes);
  }
}

Bytes pattern(size_t n, uint8_t seed) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(seed + i * 7);
  return b;
}

// A small file with a bit of everything: the base for truncation tests.
GgufWriter small_model_writer() {
  GgufWriter w;
  EXPECT_TRUE(w.set_string("general.architecture", "llama").ok());
  EXPECT_TRUE(w.set_u32("llama.block_count", 2).ok());
  EXPECT_TRUE(w.set_f32("llama.rope.freq_base", 10000.0f).ok());
  EXPECT_TRUE(w.set_array_strings("tokenizer.ggml.tokens", {"<unk>", "a", "bc"}).ok());
  const float scores[] = {0.0f, -1.0f, -2.5f};
  EXPECT_TRUE(w.set_array_f32("tokenizer.ggml.scores", scores).ok());
  const int64_t s1[] = {64, 2};
  const int64_t s2[] = {64};
  EXPECT_TRUE(w.add_tensor("blk.0.attn_q.weight", TensorType::kQ4_0, s1, pattern(2 * 2 * 18, 1)).ok());
  EXPECT_TRUE(w.add_tensor("output_norm.weight", TensorType::kF32, s2, pattern(64 * 4, 2)).ok());
  return w;
}

// ---------------------------------------------------------------------------
// Round trips

TEST(GgufWriter, EveryScalarTypeRoundTrips) {
  GgufWriter w;
  ASSERT_TRUE(w.set_u8("u8", 255).ok());
  ASSERT_TRUE(w.set_i8("i8", -128).ok());
  ASSERT_TRUE(w.set_u16("u16", 65535).ok());
  ASSERT_TRUE(w.set_i16("i16", -32768).ok());
  ASSERT_TRUE(w.set_u32("u32", 0xffffffffu).ok());
  ASSERT_TRUE(w.set_i32("i32", std::numeric_limits<int32_t>::min()).ok());
  ASSERT_TRUE(w.set_u64("u64", std::numeric_limits<uint64_t>::max()).ok());
  ASSERT_TRUE(w.set_i64("i64", std::numeric_limits<int64_t>::min()).ok());
  ASSERT_TRUE(w.set_f32("f32", -1.5f).ok());
  ASSERT_TRUE(w.set_f64("f64", 3.141592653589793).ok());
  ASSERT_TRUE(w.set_bool("yes", true).ok());
  ASSERT_TRUE(w.set_bool("no", false).ok());
  ASSERT_TRUE(w.set_string("str", std::string_view("a\0b\xc3\xa9", 5)).ok());
  ASSERT_TRUE(w.set_string("empty", "").ok());
  const GgufFile f = must_parse(must_write(w));
  ASSERT_EQ(f.kvs().size(), 14u);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.find("u8")->value.type, GgufType::kU8);
  EXPECT_EQ(f.find("u8")->value.u, 255u);
  EXPECT_EQ(f.find("i8")->value.type, GgufType::kI8);
  EXPECT_EQ(f.find("i8")->value.i, -128);
  EXPECT_EQ(f.find("u16")->value.type, GgufType::kU16);
  EXPECT_EQ(f.find("u16")->value.u, 65535u);
  EXPECT_EQ(f.find("i16")->value.i, -32768);
  EXPECT_EQ(f.find("u32")->value.u, 0xffffffffu);
  EXPECT_EQ(f.find("i32")->value.type, GgufType::kI32);
  EXPECT_EQ(f.find("i32")->value.i, std::numeric_limits<int32_t>::min());
  EXPECT_EQ(*f.get_uint("u64"), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(*f.get_int("i64"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(*f.get_float("f32"), -1.5f);
  EXPECT_EQ(f.find("f64")->value.type, GgufType::kF64);
  EXPECT_EQ(f.find("f64")->value.f, 3.141592653589793);
  EXPECT_TRUE(*f.get_bool("yes"));
  EXPECT_FALSE(*f.get_bool("no"));
  EXPECT_EQ(*f.get_string("str"), std::string_view("a\0b\xc3\xa9", 5));
  EXPECT_EQ(*f.get_string("empty"), "");
  // Keys keep insertion order.
  EXPECT_EQ(f.kvs().front().key, "u8");
  EXPECT_EQ(f.kvs().back().key, "empty");
  // No tensors: the file ends with the header, padded.
  EXPECT_TRUE(f.tensors().empty());
  EXPECT_EQ(f.data_size(), 0u);
}

TEST(GgufWriter, EveryArrayTypeRoundTrips) {
  GgufWriter w;
  const uint8_t u8[] = {0, 1, 255};
  const int8_t i8[] = {-128, 0, 127};
  const uint16_t u16[] = {0, 65535};
  const int16_t i16[] = {-32768, 32767};
  const uint32_t u32[] = {0, 0xffffffffu};
  const int32_t i32[] = {std::numeric_limits<int32_t>::min(), -1, 7};
  const uint64_t u64[] = {0, std::numeric_limits<uint64_t>::max(), uint64_t(1) << 63};
  const int64_t i64[] = {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  const float f32[] = {-0.0f, 1e-40f, std::numeric_limits<float>::infinity(), 0.1f};
  const double f64[] = {-2.5, 1e300};
  const uint8_t bools[] = {1, 0, 1};
  ASSERT_TRUE(w.set_array("u8", GgufType::kU8, u8, 3).ok());
  ASSERT_TRUE(w.set_array("i8", GgufType::kI8, i8, 3).ok());
  ASSERT_TRUE(w.set_array("u16", GgufType::kU16, u16, 2).ok());
  ASSERT_TRUE(w.set_array("i16", GgufType::kI16, i16, 2).ok());
  ASSERT_TRUE(w.set_array("u32", GgufType::kU32, u32, 2).ok());
  ASSERT_TRUE(w.set_array_i32("i32", i32).ok());
  ASSERT_TRUE(w.set_array("u64", GgufType::kU64, u64, 3).ok());
  ASSERT_TRUE(w.set_array("i64", GgufType::kI64, i64, 2).ok());
  ASSERT_TRUE(w.set_array_f32("f32", f32).ok());
  ASSERT_TRUE(w.set_array("f64", GgufType::kF64, f64, 2).ok());
  ASSERT_TRUE(w.set_array("bool", GgufType::kBool, bools, 3).ok());
  ASSERT_TRUE(w.set_array_strings("strings", {"", "hello", std::string_view("\0x", 2)}).ok());
  ASSERT_TRUE(w.set_array("empty", GgufType::kI32, nullptr, 0).ok());
  ASSERT_TRUE(w.set_array_strings("empty_strings", std::span<const std::string_view>()).ok());
  const GgufFile f = must_parse(must_write(w));

  const auto arr = [&](const char* key) { return *f.get_array(key); };
  EXPECT_EQ(arr("u8")->elem_type(), GgufType::kU8);
  EXPECT_EQ(arr("u8")->int_at(2), 255);
  EXPECT_EQ(arr("i8")->int_at(0), -128);
  EXPECT_EQ(arr("i8")->int_at(2), 127);
  EXPECT_EQ(arr("u16")->int_at(1), 65535);
  EXPECT_EQ(arr("i16")->int_at(0), -32768);
  EXPECT_EQ(arr("u32")->int_at(1), 0xffffffffll);
  EXPECT_EQ(arr("i32")->elem_type(), GgufType::kI32);
  EXPECT_EQ(arr("i32")->size(), 3u);
  EXPECT_EQ(arr("i32")->int_at(0), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(arr("i32")->int_at(2), 7);
  EXPECT_EQ(static_cast<uint64_t>(arr("u64")->int_at(1)), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(static_cast<uint64_t>(arr("u64")->int_at(2)), uint64_t(1) << 63);
  EXPECT_EQ(arr("i64")->int_at(0), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(arr("i64")->int_at(1), std::numeric_limits<int64_t>::max());
  EXPECT_TRUE(std::signbit(arr("f32")->f32_at(0)));
  EXPECT_EQ(arr("f32")->f32_at(1), 1e-40f);
  EXPECT_TRUE(std::isinf(arr("f32")->f32_at(2)));
  EXPECT_EQ(arr("f32")->f32_at(3), 0.1f);
  EXPECT_EQ(arr("f64")->number_at(1), 1e300);
  EXPECT_EQ(arr("bool")->elem_type(), GgufType::kBool);
  EXPECT_EQ(arr("bool")->number_at(0), 1.0);
  EXPECT_EQ(arr("bool")->number_at(1), 0.0);
  EXPECT_EQ(arr("strings")->elem_type(), GgufType::kString);
  EXPECT_EQ(arr("strings")->size(), 3u);
  EXPECT_EQ(arr("strings")->string_at(0), "");
  EXPECT_EQ(arr("strings")->string_at(1), "hello");
  EXPECT_EQ(arr("strings")->string_at(2), std::string_view("\0x", 2));
  EXPECT_EQ(arr("empty")->size(), 0u);
  EXPECT_EQ(arr("empty_strings")->size(), 0u);
  EXPECT_EQ(arr("empty_strings")->elem_type(), GgufType::kString);
  // Accessors never read out of bounds.
  EXPECT_EQ(arr("i32")->int_at(3), 0);
  EXPECT_EQ(arr("strings")->string_at(99), "");
}

TEST(GgufWriter, CopyKvReproducesTheFileByteForByte) {
  GgufWriter w;
  const uint64_t u64[] = {std::numeric_limits<uint64_t>::max(), 5};
  const float f32[] = {-0.0f, 1.25f};
  const uint8_t bools[] = {0, 1};
  ASSERT_TRUE(w.set_i8("a", -3).ok());
  ASSERT_TRUE(w.set_u16("b", 7).ok());
  ASSERT_TRUE(w.set_f64("c", 0.1).ok());
  ASSERT_TRUE(w.set_bool("d", true).ok());
  ASSERT_TRUE(w.set_string("e", "text").ok());
  ASSERT_TRUE(w.set_array("f", GgufType::kU64, u64, 2).ok());
  ASSERT_TRUE(w.set_array_f32("g", f32).ok());
  ASSERT_TRUE(w.set_array("h", GgufType::kBool, bools, 2).ok());
  ASSERT_TRUE(w.set_array_strings("i", {"x", "", "yz"}).ok());
  ASSERT_TRUE(w.set_u32("general.alignment", 64).ok());
  const Bytes original = must_write(w);
  const GgufFile f = must_parse(original);

  GgufWriter copy;
  for (const GgufKV& kv : f.kvs()) ASSERT_TRUE(copy.copy_kv(kv).ok()) << kv.key;
  EXPECT_EQ(must_write(copy), original);

  GgufWriter one;
  ASSERT_TRUE(one.copy_kv(f, "i").ok());
  expect_error(one.copy_kv(f, "missing"), ErrorCode::kInvalidArgument, "'missing'");
}

TEST(GgufWriter, SettingAKeyAgainReplacesItInPlace) {
  GgufWriter w;
  ASSERT_TRUE(w.set_u32("first", 1).ok());
  ASSERT_TRUE(w.set_u32("second", 2).ok());
  ASSERT_TRUE(w.set_string("first", "now a string").ok());
  EXPECT_EQ(w.n_kv(), 2u);
  const GgufFile f = must_parse(must_write(w));
  EXPECT_EQ(f.kvs()[0].key, "first");
  EXPECT_EQ(*f.get_string("first"), "now a string");
  ASSERT_TRUE(w.remove_key("first").ok());
  EXPECT_FALSE(w.has_key("first"));
  expect_error(w.remove_key("first"), ErrorCode::kInvalidArgument, "'first'");
}

TEST(GgufWriter, TensorsRoundTripWithTheirBytes) {
  GgufWriter w;
  struct T {
    const char* name;
    TensorType type;
    std::vector<int64_t> shape;
  };
  const std::vector<T> ts = {
      {"a", TensorType::kF32, {3}},               // 12 bytes: the next one must be realigned
      {"b", TensorType::kQ4_0, {64, 3}},          // 6 blocks of 18
      {"c", TensorType::kQ6_K, {256, 1, 2}},      // 3-D
      {"d", TensorType::kF16, {2, 3, 4, 5}},      // 4-D
      {"e", TensorType::kBF16, {7}},
  };
  std::vector<Bytes> data;
  for (size_t i = 0; i < ts.size(); ++i) {
    const uint64_t n = *GgufWriter::tensor_bytes(ts[i].name, ts[i].type, ts[i].shape);
    data.push_back(pattern(n, static_cast<uint8_t>(i)));
    ASSERT_TRUE(w.add_tensor(ts[i].name, ts[i].type, ts[i].shape, data.back()).ok());
  }
  const Bytes bytes = must_write(w);
  EXPECT_EQ(bytes.size(), w.file_size());
  const GgufFile f = must_parse(bytes);
  EXPECT_EQ(f.alignment(), 32u);
  EXPECT_EQ(f.data_offset() % 32, 0u);
  ASSERT_EQ(f.tensors().size(), ts.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    const GgufTensorInfo& t = f.tensors()[i];
    EXPECT_EQ(t.name, ts[i].name);
    EXPECT_EQ(t.type, ts[i].type);
    EXPECT_EQ(t.n_dims, static_cast<int>(ts[i].shape.size()));
    for (int d = 0; d < 4; ++d) {
      EXPECT_EQ(t.ne[d], d < t.n_dims ? ts[i].shape[d] : 1) << t.name;
    }
    EXPECT_EQ(t.offset % 32, 0u);
    ASSERT_EQ(t.n_bytes, data[i].size());
    EXPECT_TRUE(std::equal(data[i].begin(), data[i].end(), bytes.begin() + f.data_offset() + t.offset)) << t.name;
  }
}

TEST(GgufWriter, AlignmentKeyIsHonoured) {
  for (uint32_t align : {1u, 8u, 32u, 64u, 256u, 4096u}) {
    GgufWriter w;
    ASSERT_TRUE(w.set_u32("general.alignment", align).ok());
    const int64_t s1[] = {5};
    const int64_t s2[] = {32, 2};
    ASSERT_TRUE(w.add_tensor("x", TensorType::kF32, s1, pattern(20, 1)).ok());
    ASSERT_TRUE(w.add_tensor("y", TensorType::kQ8_0, s2, pattern(68, 2)).ok());
    const Bytes bytes = must_write(w);
    const GgufFile f = must_parse(bytes);
    EXPECT_EQ(f.alignment(), align);
    EXPECT_EQ(f.data_offset() % align, 0u);
    for (const GgufTensorInfo& t : f.tensors()) EXPECT_EQ(t.offset % align, 0u) << align;
    const GgufTensorInfo* y = f.find_tensor("y");
    const Bytes want = pattern(68, 2);
    EXPECT_TRUE(std::equal(want.begin(), want.end(), bytes.begin() + f.data_offset() + y->offset)) << align;
  }
}

TEST(GgufWriter, ProducersStreamTensorBytes) {
  GgufWriter w;
  const int64_t shape[] = {32, 100};
  ASSERT_TRUE(w.add_tensor("p", TensorType::kQ8_0, shape, [](GgufSink& out) -> Status {
                 const Bytes row = pattern(34, 9);
                 for (int r = 0; r < 100; ++r) WLLM_RETURN_IF_ERROR(out.write(row.data(), row.size()));
                 return Status();
               }).ok());
  const Bytes bytes = must_write(w);
  const GgufFile f = must_parse(bytes);
  EXPECT_EQ(f.tensors()[0].n_bytes, 3400u);
  EXPECT_EQ(bytes[f.data_offset() + 34 * 99], pattern(1, 9)[0]);

  // Too few, too many bytes and a producer's own error are all reported with the tensor's name.
  GgufWriter few;
  ASSERT_TRUE(few.add_tensor("p", TensorType::kQ8_0, shape, [](GgufSink& out) { return out.write("x", 1); }).ok());
  expect_error(few.write_to_memory().status(), ErrorCode::kInternal, "tensor 'p': producer wrote 1 of 3400 bytes");
  GgufWriter many;
  ASSERT_TRUE(many.add_tensor("p", TensorType::kQ8_0, shape, [](GgufSink& out) {
                    const Bytes big(3401);
                    return out.write(big.data(), big.size());
                  }).ok());
  expect_error(many.write_to_memory().status(), ErrorCode::kInternal, "tensor 'p'");
  GgufWriter failing;
  ASSERT_TRUE(failing.add_tensor("p", TensorType::kQ8_0, shape, [](GgufSink&) {
                       return Status::error(ErrorCode::kIo, "source gone");
                     }).ok());
  expect_error(failing.write_to_memory().status(), ErrorCode::kIo, "tensor 'p': source gone");
}

TEST(GgufWriter, RejectsBadInputs) {
  GgufWriter w;
  const int64_t ok_shape[] = {32, 2};
  const int64_t odd_row[] = {33, 2};
  const int64_t k_row[] = {128, 2};
  const int64_t five[] = {1, 1, 1, 1, 1};
  const int64_t negative[] = {32, -1};
  const int64_t zero[] = {32, 0};
  const int64_t huge[] = {int64_t(1) << 40, int64_t(1) << 40};
  expect_error(w.add_tensor("t", TensorType::kQ4_0, odd_row, GgufTensorProducer([](GgufSink&) { return Status(); })),
               ErrorCode::kInvalidArgument, "row length 33 is not a multiple of the q4_0 block size 32");
  expect_error(w.add_tensor("t", TensorType::kQ4_K, k_row, Bytes(2 * 72)), ErrorCode::kInvalidArgument,
               "row length 128 is not a multiple of the q4_K block size 256");
  expect_error(w.add_tensor("t", TensorType::kF32, std::span<const int64_t>(), Bytes()),
               ErrorCode::kInvalidArgument, "0 dimensions");
  expect_error(w.add_tensor("t", TensorType::kF32, five, Bytes(4)), ErrorCode::kInvalidArgument, "5 dimensions");
  expect_error(w.add_tensor("t", TensorType::kF32, negative, Bytes()), ErrorCode::kInvalidArgument,
               "dimension 1 is -1");
  expect_error(w.add_tensor("t", TensorType::kF32, zero, Bytes()), ErrorCode::kInvalidArgument, "dimension 1 is 0");
  expect_error(w.add_tensor("t", TensorType::kF32, huge, Bytes()), ErrorCode::kInvalidArgument, "overflows");
  expect_error(w.add_tensor("t", TensorType::kQ8_K, ok_shape, Bytes()), ErrorCode::kInvalidArgument,
               "cannot be stored");
  expect_error(w.add_tensor("t", static_cast<TensorType>(16), ok_shape, Bytes()), ErrorCode::kInvalidArgument,
               "type 16");
  expect_error(w.add_tensor(std::string(64, 'n'), TensorType::kF32, ok_shape, Bytes(256)),
               ErrorCode::kInvalidArgument, "name is 64 bytes");
  expect_error(w.add_tensor("", TensorType::kF32, ok_shape, Bytes(256)), ErrorCode::kInvalidArgument, "empty");
  expect_error(w.add_tensor("t", TensorType::kF32, ok_shape, Bytes(255)), ErrorCode::kInvalidArgument,
               "255 data bytes given, its shape needs 256");
  ASSERT_TRUE(w.add_tensor("t", TensorType::kF32, ok_shape, Bytes(256)).ok());
  expect_error(w.add_tensor("t", TensorType::kF16, ok_shape, Bytes(128)), ErrorCode::kInvalidArgument,
               "tensor 't' is added twice");
  EXPECT_EQ(w.n_tensors(), 1u);

  expect_error(w.set_u32("general.alignment", 48), ErrorCode::kInvalidArgument, "48 is not a power of two");
  expect_error(w.set_u32("general.alignment", 0), ErrorCode::kInvalidArgument, "0 is not a power of two");
  expect_error(w.set_u64("general.alignment", 64), ErrorCode::kInvalidArgument, "must be u32");
  expect_error(w.set_u32("", 1), ErrorCode::kInvalidArgument, "key is empty");
  expect_error(w.set_array("a", GgufType::kString, nullptr, 0), ErrorCode::kInvalidArgument, "not a numeric");
  expect_error(w.set_array("a", GgufType::kArray, nullptr, 0), ErrorCode::kInvalidArgument, "not a numeric");
  const uint8_t two = 2;
  expect_error(w.set_array("a", GgufType::kBool, &two, 1), ErrorCode::kInvalidArgument, "bool element 0 is 2");
  EXPECT_EQ(w.alignment(), 32u);
}

std::string temp_path(const char* name) { return ::testing::TempDir() + "wllm_gguf_test_" + name; }

Bytes read_all(const std::string& path) {
  Bytes out;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return out;
  uint8_t buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.insert(out.end(), buf, buf + n);
  std::fclose(f);
  return out;
}

TEST(GgufWriter, WritesFilesAndReportsIoErrors) {
  const GgufWriter w = small_model_writer();
  const std::string path = temp_path("small.gguf");
  ASSERT_TRUE(w.write_file(path).ok());
  EXPECT_EQ(read_all(path), must_write(w));
  std::remove(path.c_str());

  expect_error(w.write_file("/nonexistent-dir/x.gguf"), ErrorCode::kIo, "cannot create '/nonexistent-dir/x.gguf'");
  // A full disk: the error names the path and the OS reason, and the device stays.
  std::FILE* full = std::fopen("/dev/full", "wb");
  if (full) {
    std::fclose(full);
    expect_error(w.write_file("/dev/full"), ErrorCode::kIo, "'/dev/full': No space left on device");
    EXPECT_NE(std::fopen("/dev/full", "rb"), nullptr);
  }
  // A failing producer leaves no partial file behind.
  GgufWriter bad = small_model_writer();
  const int64_t shape[] = {32};
  ASSERT_TRUE(bad.add_tensor("z", TensorType::kF32, shape, [](GgufSink&) {
                   return Status::error(ErrorCode::kAborted, "stop");
                 }).ok());
  expect_error(bad.write_file(path), ErrorCode::kAborted, "tensor 'z': stop");
  EXPECT_EQ(std::fopen(path.c_str(), "rb"), nullptr);
}

// ---------------------------------------------------------------------------
// Hostile files

TEST(GgufHostile, BadMagic) {
  Bytes b = must_write(small_model_writer());
  b[3] = 'X';
  expect_error(parse(b).status(), ErrorCode::kBadFile, "not a GGUF file");
  expect_error(parse(Bytes{'G', 'G', 'U'}).status(), ErrorCode::kBadFile, "truncated");
  expect_error(parse(Bytes()).status(), ErrorCode::kBadFile, "magic");
}

TEST(GgufHostile, UnsupportedVersions) {
  expect_error(parse(Raw().header(0, 0, 1).b).status(), ErrorCode::kUnsupported, "version 1");
  expect_error(parse(Raw().header(0, 0, 4).b).status(), ErrorCode::kUnsupported, "version 4");
  // A big-endian writer's version 3 reads as 0x03000000 here.
  expect_error(parse(Raw().header(0, 0, 0x03000000).b).status(), ErrorCode::kUnsupported, "big-endian");
  // Version 2 is still read.
  EXPECT_TRUE(parse(Raw().header(0, 0, 2).b).ok());
}

TEST(GgufHostile, TruncatedAtEveryByte) {
  const Bytes full = must_write(small_model_writer());
  const GgufFile whole = must_parse(full);
  const uint64_t data_end = whole.data_offset() + whole.data_size();
  std::set<std::string> messages;  // message kinds seen, for the failure report
  for (size_t n = 0; n < full.size(); ++n) {
    // The file really is n bytes long.
    const Bytes cut(full.begin(), full.begin() + n);
    Result<GgufFile> r = parse(cut);
    if (n < data_end) {
      ASSERT_FALSE(r.ok()) << "cut at " << n;
      ASSERT_EQ(r.status().code(), ErrorCode::kBadFile) << "cut at " << n << ": " << r.status().message();
      const std::string& m = r.status().message();
      // Either a field runs past the end, or a count or the data cannot fit in what is left.
      bool named = false;
      for (const char* part : {"truncated", "data ends at byte", "cannot fit in", "more bytes than the file has"}) {
        named = named || m.find(part) != std::string::npos;
      }
      ASSERT_TRUE(named)
          << "cut at " << n << ": " << m;
      messages.insert(m.substr(0, m.find_first_of("0123456789")));
    } else {
      // Only the padding after the last tensor is missing.
      ASSERT_TRUE(r.ok()) << "cut at " << n << ": " << r.status().message();
    }
  }
  // Every field was cut somewhere: key, type, value, array, name, shape, data...
  EXPECT_GE(messages.size(), 10u);
}

TEST(GgufHostile, ShortPrefixOfALongerFileNeedsMoreData) {
  const Bytes full = must_write(small_model_writer());
  const GgufFile whole = must_parse(full);
  size_t first_ok = full.size();
  for (size_t n = 0; n <= full.size(); ++n) {
    uint64_t needed = 0;
    Result<GgufFile> r = GgufFile::parse_header(std::span<const uint8_t>(full.data(), n), full.size(), &needed);
    if (r.ok()) {
      first_ok = std::min(first_ok, n);
      expect_same(*r, whole);
      continue;
    }
    ASSERT_EQ(r.status().code(), ErrorCode::kNeedMoreData) << n << ": " << r.status().message();
    ASSERT_GT(needed, n);
    ASSERT_LE(needed, full.size());
    ASSERT_EQ(first_ok, full.size()) << "a longer prefix failed after a shorter one parsed";
  }
  // The header (everything before the data section's padding) is enough.
  EXPECT_LE(first_ok, whole.data_offset());
  expect_error(GgufFile::parse_header(std::span<const uint8_t>(full), full.size() - 1).status(),
               ErrorCode::kInvalidArgument, "longer than the file size");
}

// Parses by the kNeedMoreData protocol: start small, grow to what is asked.
Result<GgufFile> parse_growing(const Bytes& file, uint64_t start, int* rounds) {
  uint64_t n = std::min<uint64_t>(start, file.size());
  for (*rounds = 1;; ++*rounds) {
    uint64_t needed = 0;
    Result<GgufFile> r = GgufFile::parse_header(std::span<const uint8_t>(file.data(), n), file.size(), &needed);
    if (r.ok() || r.status().code() != ErrorCode::kNeedMoreData) return r;
    if (needed <= n) return Status::error(ErrorCode::kInternal, "asked for %llu bytes with %llu", (unsigned long long)needed, (unsigned long long)n);
    n = needed;
  }
}

TEST(GgufNeedMoreData, GrowingPrefixesGiveTheSameResultAsTheWholeFile) {
  // A big header: 20000 tokens with scores, like a vocabulary.
  GgufWriter w = small_model_writer();
  std::vector<std::string> toks;
  std::vector<float> scores;
  for (int i = 0; i < 20000; ++i) {
    toks.push_back("tok" + std::to_string(i * 7919));
    scores.push_back(-0.25f * i);
  }
  std::vector<std::string_view> views(toks.begin(), toks.end());
  ASSERT_TRUE(w.set_array_strings("tokenizer.ggml.tokens", views).ok());
  ASSERT_TRUE(w.set_array_f32("tokenizer.ggml.scores", scores).ok());
  const Bytes full = must_write(w);
  const GgufFile whole = must_parse(full);
  for (uint64_t start : {0ull, 1ull, 24ull, 100ull, 4096ull}) {
    int rounds = 0;
    Result<GgufFile> r = parse_growing(full, start, &rounds);
    ASSERT_TRUE(r.ok()) << r.status().message();
    expect_same(*r, whole);
    // The parser asks for at least double each time: few rounds.
    EXPECT_LE(rounds, 20) << start;
    EXPECT_EQ(r->get_array("tokenizer.ggml.tokens").value()->string_at(19999), "tok" + std::to_string(19999 * 7919));
  }
}

TEST(GgufNeedMoreData, RealVocabularyFile) {
  const std::string path = std::string(WLLM_SHARED_MODELS) + "/vocab/ggml-vocab-llama-spm.gguf";
  const Bytes full = read_all(path);
  ASSERT_FALSE(full.empty()) << path << " not found";
  const GgufFile whole = must_parse(full);
  int rounds = 0;
  Result<GgufFile> r = parse_growing(full, 1 << 16, &rounds);
  ASSERT_TRUE(r.ok()) << r.status().message();
  expect_same(*r, whole);
  EXPECT_EQ(whole.get_array("tokenizer.ggml.tokens").value()->size(), 32000u);

  // Copying every key through the writer reproduces the header exactly.
  GgufWriter w;
  for (const GgufKV& kv : whole.kvs()) ASSERT_TRUE(w.copy_kv(kv).ok()) << kv.key;
  const Bytes again = must_write(w);
  ASSERT_LE(full.size(), again.size());
  EXPECT_TRUE(std::equal(full.begin(), full.end(), again.begin()));
}

TEST(GgufHostile, AbsurdCounts) {
  expect_error(parse(Raw().header(0, uint64_t(1) << 63).b).status(), ErrorCode::kBadFile, "metadata count");
  expect_error(parse(Raw().header(~uint64_t(0), 0).b).status(), ErrorCode::kBadFile, "tensor count");
  // A key whose length is near 2^64.
  expect_error(parse(Raw().header(0, 1).u64(~uint64_t(0) - 3).zeros(16).b).status(), ErrorCode::kBadFile,
               "truncated: metadata key");
  // A string value of 2^63 bytes.
  expect_error(parse(Raw().header(0, 1).str("k").u32(uint32_t(GgufType::kString)).u64(uint64_t(1) << 63).zeros(8).b)
                   .status(),
               ErrorCode::kBadFile, "truncated: metadata string");
  // Numeric arrays whose byte size wraps around 2^64.
  for (uint64_t count : {~uint64_t(0), uint64_t(1) << 61, (uint64_t(1) << 62) + 1}) {
    expect_error(parse(Raw().header(0, 1).str("arr").u32(uint32_t(GgufType::kArray)).u32(uint32_t(GgufType::kU32))
                           .u64(count).zeros(16).b)
                     .status(),
                 ErrorCode::kBadFile, "metadata 'arr': array of");
  }
  // A string array claiming 2^62 elements.
  expect_error(parse(Raw().header(0, 1).str("arr").u32(uint32_t(GgufType::kArray)).u32(uint32_t(GgufType::kString))
                         .u64(uint64_t(1) << 62).zeros(16).b)
                   .status(),
               ErrorCode::kBadFile, "cannot fit in the file");
  // A string inside an array running past the end.
  expect_error(parse(Raw().header(0, 1).str("arr").u32(uint32_t(GgufType::kArray)).u32(uint32_t(GgufType::kString))
                         .u64(1).u64(~uint64_t(0)).b)
                   .status(),
               ErrorCode::kBadFile, "truncated: array string");
}

TEST(GgufHostile, DimensionCounts) {
  expect_error(parse(one_tensor({})).status(), ErrorCode::kBadFile, "tensor 't': 0 dimensions");
  expect_error(parse(one_tensor({1, 1, 1, 1, 1})).status(), ErrorCode::kBadFile, "tensor 't': 5 dimensions");
  EXPECT_TRUE(parse(one_tensor({2, 2, 2, 2})).ok());
}

TEST(GgufHostile, NegativeAndOverflowingShapes) {
  expect_error(parse(one_tensor({4, ~uint64_t(0)})).status(), ErrorCode::kBadFile, "tensor 't': dimension 1 is negative");
  expect_error(parse(one_tensor({uint64_t(1) << 63})).status(), ErrorCode::kBadFile, "dimension 0 is negative");
  expect_error(parse(one_tensor({uint64_t(1) << 32, uint64_t(1) << 32})).status(), ErrorCode::kBadFile,
               "tensor 't': element count overflows");
  // Fits in int64 elements but its byte size (2^64) does not fit in 64 bits.
  expect_error(parse(one_tensor({uint64_t(1) << 62})).status(), ErrorCode::kBadFile, "tensor 't': byte size overflows");
  // 2^63 bytes: representable, but far past the end.
  expect_error(parse(one_tensor({uint64_t(1) << 61})).status(), ErrorCode::kBadFile, "data ends at byte");
}

TEST(GgufHostile, UnknownTensorTypes) {
  for (uint32_t type : {4u, 5u, 16u, 29u, 39u, 1000u, 0xffffffffu}) {
    expect_error(parse(one_tensor({32}, type)).status(), ErrorCode::kUnsupported,
                 "tensor 't': tensor type " + std::to_string(type) + " is not supported");
  }
  // Activation-only formats are not weights.
  expect_error(parse(one_tensor({256}, 15, 0, 292)).status(), ErrorCode::kUnsupported, "tensor type 15");
}

TEST(GgufHostile, RowLengthNotAMultipleOfTheBlockSize) {
  expect_error(parse(one_tensor({33, 2}, kQ4_0)).status(), ErrorCode::kBadFile,
               "tensor 't': row length 33 is not a multiple of the q4_0 block size 32");
  expect_error(parse(one_tensor({128}, 12)).status(), ErrorCode::kBadFile, "q4_K block size 256");
}

TEST(GgufHostile, MisalignedOffsetAndDataPastTheEnd) {
  expect_error(parse(one_tensor({4}, kF32, 16)).status(), ErrorCode::kBadFile,
               "tensor 't': data offset 16 is not a multiple of the alignment 32");
  expect_error(parse(one_tensor({4}, kF32, 64, 64)).status(), ErrorCode::kBadFile, "tensor 't': data ends at byte");
  expect_error(parse(one_tensor({32}, kF32, 0, 127)).status(), ErrorCode::kBadFile, "data ends at byte");
  expect_error(parse(one_tensor({4}, kF32, ~uint64_t(0) - 31)).status(), ErrorCode::kBadFile, "data ends at byte");
  EXPECT_TRUE(parse(one_tensor({4}, kF32, 32, 64)).ok());
}

TEST(GgufHostile, DuplicateTensorNames) {
  Raw r;
  r.header(2, 0).tensor("same", {4}, kF32, 0).tensor("same", {4}, kF32, 32).pad().zeros(64);
  expect_error(parse(r.b).status(), ErrorCode::kBadFile, "tensor 'same' appears twice");
}

TEST(GgufHostile, DuplicateKeys) {
  Raw r;
  r.header(0, 2).kv_u32("dup", 1).kv_u32("dup", 2);
  expect_error(parse(r.b).status(), ErrorCode::kBadFile, "metadata 'dup': duplicate key");
}

TEST(GgufHostile, BadAlignment) {
  for (uint32_t a : {0u, 3u, 48u, 0x80000001u}) {
    Raw r;
    r.header(0, 1).kv_u32("general.alignment", a);
    expect_error(parse(r.b).status(), ErrorCode::kBadFile, std::to_string(a) + " is not a power of two");
  }
  Raw r;
  r.header(0, 1).str("general.alignment").u32(uint32_t(GgufType::kU64)).u64(32);
  expect_error(parse(r.b).status(), ErrorCode::kBadFile, "metadata 'general.alignment': expected u32, got u64");
}

TEST(GgufHostile, BadValueTypes) {
  Raw nested;
  nested.header(0, 1).str("n").u32(uint32_t(GgufType::kArray)).u32(uint32_t(GgufType::kArray)).u64(1);
  nested.u32(uint32_t(GgufType::kU8)).u64(0);
  expect_error(parse(nested.b).status(), ErrorCode::kBadFile, "metadata 'n': nested arrays are not supported");

  Raw boolean;
  boolean.header(0, 1).str("flag").u32(uint32_t(GgufType::kBool)).u8(2);
  expect_error(parse(boolean.b).status(), ErrorCode::kBadFile, "metadata 'flag': bool value 2 is neither 0 nor 1");

  Raw unknown;
  unknown.header(0, 1).str("k").u32(13).u32(0);
  expect_error(parse(unknown.b).status(), ErrorCode::kBadFile, "metadata 'k': unknown value type 13");

  Raw elem;
  elem.header(0, 1).str("k").u32(uint32_t(GgufType::kArray)).u32(99).u64(0);
  expect_error(parse(elem.b).status(), ErrorCode::kBadFile, "metadata 'k': unknown array element type 99");
}

TEST(GgufHostile, OverlongTensorName) {
  Raw r;
  r.header(1, 0).tensor(std::string(300, 'x'), {4}, kF32, 0).pad().zeros(32);
  expect_error(parse(r.b).status(), ErrorCode::kBadFile, "tensor name of 300 bytes is too long");
}

TEST(GgufHostile, DataSectionMissingEntirely) {
  // Header ends right before where the data should start.
  Raw r;
  r.header(1, 0).tensor("t", {4}, kF32, 0);
  expect_error(parse(r.b).status(), ErrorCode::kBadFile, "tensor data should start at byte 64");
}

}  // namespace
}  // namespace wllm
