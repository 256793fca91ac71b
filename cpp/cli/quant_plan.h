// What `quantize` and `synth` share: the choice of each tensor's type (a
// port of the rules in llama.cpp's src/llama-quant.cpp, llama_tensor_get_type
// and tensor_type_fallback) and a tensor producer that converts rows to the
// chosen type on several threads while the GGUF writer streams them out.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "core/status.h"
#include "gguf/gguf_writer.h"
#include "quant/traits.h"
#include "runtime/thread_pool.h"

namespace wllm::cli {

// llama.cpp's per-tensor rules that a scheme follows.
enum class QuantMix {
  kUniform,  // every 2-D weight gets the base type, output.weight too (float types, --pure)
  kPlain,    // base type, but output.weight (or tied token_embd) gets q6_K, as llama.cpp
             // does for every quantized file type
  kQ3_K_M, kQ3_K_L, kQ4_K_S, kQ4_K_M, kQ5_K_M,  // llama.cpp's mixes of the same names
};

// A TYPE the user can name on the command line.
struct QuantScheme {
  const char* name;   // "q4_0", "q4_K_M"
  TensorType base;    // what most 2-D weights become
  uint32_t ftype;     // llama.cpp's LLAMA_FTYPE_* number, stored as general.file_type
  QuantMix mix;
};

// The scheme named `name` (case-insensitive), or nullptr.
const QuantScheme* find_quant_scheme(std::string_view name);
// "f32, f16, ..., q5_K_M" for usage and error messages.
std::string quant_scheme_names();

struct TensorChoice {
  TensorType type;    // what to write
  TensorType wanted;  // what the rules picked before the block-size fallback
  bool fell_back() const { return type != wanted; }
  bool quantized;     // false: not a quantizable weight (1-D, norms), written as f32
};

// Picks tensor types as llama.cpp does. Like llama.cpp, the attn_v/ffn_down
// layer rules count those tensors in file order, so call choose() once per
// tensor, in the order they are written.
class QuantPlanner {
 public:
  // `names`: every tensor of the output model (to count attn_v/ffn_down and
  // see whether output.weight exists). `pure` turns kPlain/mix rules off.
  QuantPlanner(const QuantScheme& scheme, bool pure, std::span<const std::string> names);
  TensorChoice choose(std::string_view name, int n_dims, int64_t ne0);

 private:
  const QuantScheme& scheme_;
  bool pure_;
  bool has_output_ = false;
  int n_attn_v_ = 0, n_ffn_down_ = 0;
  int i_attn_v_ = 0, i_ffn_down_ = 0;
};

// Where a tensor's rows come from, as floats.
struct RowSource {
  // Called on the writing thread before rows [first, first + count) are
  // converted (e.g. to read them from a file). May be empty.
  std::function<Status(int64_t first, int64_t count)> load;
  // Writes row r (inside the loaded range) as row_len floats. Called from
  // several threads at once for different rows.
  std::function<void(int64_t r, float* dst)> row;
};

// A producer that writes n_rows rows of row_len elements of type `to`,
// converting blocks of rows from `source` with every thread of `pool`. Each
// row is converted whole by one thread, so the bytes never depend on the
// thread count. `to` must have a from_float kernel (checked by the caller
// with check_quantizer).
GgufTensorProducer make_row_producer(const TypeTraits& to, int64_t row_len, int64_t n_rows, RowSource source,
                                     ThreadPool* pool);

// kUnsupported if the table has no from_float for `type` (or no to_float
// when `need_to_float`).
Status check_kernels(const TypeTraits& type, bool need_from_float, bool need_to_float);

// "12.3 MiB"
std::string format_bytes(uint64_t n);

}  // namespace wllm::cli
