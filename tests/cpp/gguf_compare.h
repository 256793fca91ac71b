// Compares parsed GGUF metadata in tests: two key-value pairs must have the
// same key, type and value, bit for bit (floats compared by their bytes).
#pragma once

#include <gtest/gtest.h>

#include <cstring>

#include "gguf/gguf.h"

namespace wllm::testing {

inline void expect_same_kv(const GgufKV& x, const GgufKV& y) {
  EXPECT_EQ(x.key, y.key);
  ASSERT_EQ(x.value.type, y.value.type) << x.key;
  EXPECT_EQ(x.value.u, y.value.u) << x.key;
  EXPECT_EQ(x.value.i, y.value.i) << x.key;
  EXPECT_EQ(std::memcmp(&x.value.f, &y.value.f, sizeof(double)), 0) << x.key;
  EXPECT_EQ(x.value.s, y.value.s) << x.key;
  const GgufArray& p = x.value.array;
  const GgufArray& q = y.value.array;
  ASSERT_EQ(p.elem_type(), q.elem_type()) << x.key;
  ASSERT_EQ(p.size(), q.size()) << x.key;
  for (uint64_t j = 0; j < p.size(); ++j) {
    ASSERT_EQ(p.string_at(j), q.string_at(j)) << x.key << "[" << j << "]";
    ASSERT_EQ(p.int_at(j), q.int_at(j)) << x.key << "[" << j << "]";
    const double u = p.number_at(j), v = q.number_at(j);
    ASSERT_EQ(std::memcmp(&u, &v, sizeof(double)), 0) << x.key << "[" << j << "]";
  }
}

}  // namespace wllm::testing
