// THE table. One row per tensor type; see traits.h for what each column means.
// The kernel columns hold the scalar reference (ref/; its gemm loops its dot,
// and it has no matvec: matvec_rows loops the dot);
// active_table() swaps in the ISA kernels (kernels.h) this machine runs,
// which give the same bits.
// Activation-only types (Q8_1, Q8_K) have a to_float too, so tests can check
// their quantizers; they have no dot.
#include "quant/traits.h"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "quant/blocks.h"
#include "quant/kernels.h"
#include "quant/ref/ref.h"

namespace wllm {
namespace {

constexpr TypeTraits kTable[] = {
    // type             name    block bytes weight act_type          to_float            from_float            dot                 gemm
    {TensorType::kF32,  "f32",  1,   4,   true,  TensorType::kF32,  ref::to_float_f32,  ref::from_float_f32,  ref::dot_f32_f32,   ref::gemm_by_dot<ref::dot_f32_f32>},
    {TensorType::kF16,  "f16",  1,   2,   true,  TensorType::kF32,  ref::to_float_f16,  ref::from_float_f16,  ref::dot_f16_f32,   ref::gemm_by_dot<ref::dot_f16_f32>},
    {TensorType::kBF16, "bf16", 1,   2,   true,  TensorType::kF32,  ref::to_float_bf16, ref::from_float_bf16, ref::dot_bf16_f32,  ref::gemm_by_dot<ref::dot_bf16_f32>},
    {TensorType::kQ4_0, "q4_0", 32,  18,  true,  TensorType::kQ8_0, ref::to_float_q4_0, ref::from_float_q4_0, ref::dot_q4_0_q8_0, ref::gemm_by_dot<ref::dot_q4_0_q8_0>},
    {TensorType::kQ4_1, "q4_1", 32,  20,  true,  TensorType::kQ8_1, ref::to_float_q4_1, ref::from_float_q4_1, ref::dot_q4_1_q8_1, ref::gemm_by_dot<ref::dot_q4_1_q8_1>},
    {TensorType::kQ5_0, "q5_0", 32,  22,  true,  TensorType::kQ8_0, ref::to_float_q5_0, ref::from_float_q5_0, ref::dot_q5_0_q8_0, ref::gemm_by_dot<ref::dot_q5_0_q8_0>},
    {TensorType::kQ5_1, "q5_1", 32,  24,  true,  TensorType::kQ8_1, ref::to_float_q5_1, ref::from_float_q5_1, ref::dot_q5_1_q8_1, ref::gemm_by_dot<ref::dot_q5_1_q8_1>},
    {TensorType::kQ8_0, "q8_0", 32,  34,  true,  TensorType::kQ8_0, ref::to_float_q8_0, ref::from_float_q8_0, ref::dot_q8_0_q8_0, ref::gemm_by_dot<ref::dot_q8_0_q8_0>},
    {TensorType::kQ8_1, "q8_1", 32,  36,  false, TensorType::kQ8_1, ref::to_float_q8_1, ref::from_float_q8_1, nullptr,            nullptr},
    {TensorType::kQ2_K, "q2_K", 256, 84,  true,  TensorType::kQ8_K, ref::to_float_q2_K, ref::from_float_q2_K, ref::dot_q2_K_q8_K, ref::gemm_by_dot<ref::dot_q2_K_q8_K>},
    {TensorType::kQ3_K, "q3_K", 256, 110, true,  TensorType::kQ8_K, ref::to_float_q3_K, ref::from_float_q3_K, ref::dot_q3_K_q8_K, ref::gemm_by_dot<ref::dot_q3_K_q8_K>},
    {TensorType::kQ4_K, "q4_K", 256, 144, true,  TensorType::kQ8_K, ref::to_float_q4_K, ref::from_float_q4_K, ref::dot_q4_K_q8_K, ref::gemm_by_dot<ref::dot_q4_K_q8_K>},
    {TensorType::kQ5_K, "q5_K", 256, 176, true,  TensorType::kQ8_K, ref::to_float_q5_K, ref::from_float_q5_K, ref::dot_q5_K_q8_K, ref::gemm_by_dot<ref::dot_q5_K_q8_K>},
    {TensorType::kQ6_K, "q6_K", 256, 210, true,  TensorType::kQ8_K, ref::to_float_q6_K, ref::from_float_q6_K, ref::dot_q6_K_q8_K, ref::gemm_by_dot<ref::dot_q6_K_q8_K>},
    {TensorType::kQ8_K, "q8_K", 256, 292, false, TensorType::kQ8_K, ref::to_float_q8_K, ref::from_float_q8_K, nullptr,            nullptr},
};

bool iequals(const char* a, const char* b) {
  for (; *a && *b; ++a, ++b) {
    if (std::tolower(static_cast<unsigned char>(*a)) != std::tolower(static_cast<unsigned char>(*b))) return false;
  }
  return *a == *b;
}

// The table the engine uses: the reference rows with `dot`, `gemm` and
// `from_float` (and `matvec`) replaced by the best kernels this machine runs. Built once, on first use.
// An ISA that has a dot but no tiled kernel for a type leaves gemm null, so
// matmul loops the fast dot rather than the reference one.
const std::vector<TypeTraits>& active_table() {
  static const std::vector<TypeTraits> table = [] {
    std::vector<TypeTraits> rows(std::begin(kTable), std::end(kTable));
    size_t count = 0;
    const DotKernel* kernels = active_dot_kernels(&count);
    for (size_t k = 0; k < count; ++k) {
      for (TypeTraits& row : rows) {
        if (row.type != kernels[k].type) continue;
        if (kernels[k].dot) {
          row.dot = kernels[k].dot;
          row.gemm = kernels[k].gemm;
          row.matvec = kernels[k].matvec;
        }
        if (kernels[k].from_float) row.from_float = kernels[k].from_float;
      }
    }
    return rows;
  }();
  return table;
}

constexpr KernelIsa kIsas[] = {
    {"avx512", avx512_dot_kernels, avx2_math_kernels},
    {"avx2", avx2_dot_kernels, avx2_math_kernels, avx2_repacked_types},
    {"relaxed", relaxed_dot_kernels, simd128_math_kernels, relaxed_repacked_types, /*slow_f16=*/true},
    {"simd128", simd128_dot_kernels, simd128_math_kernels, simd128_repacked_types, /*slow_f16=*/true},
    {"neon", neon_dot_kernels, nullptr},
};

constexpr MathKernels kReferenceMath = {ref::swiglu, ref::softmax};

bool runs(const KernelIsa& isa) {
  size_t count = 0;
  isa.kernels(&count);
  return count > 0;
}

// The first ISA this CPU runs, or the one WLLM_KERNELS names (null: the
// reference kernels).
const KernelIsa* active_isa() {
  const char* wanted = std::getenv("WLLM_KERNELS");
  for (const KernelIsa& isa : kIsas) {
    if (wanted && *wanted && std::strcmp(wanted, isa.name) != 0) continue;
    if (runs(isa)) return &isa;
  }
  return nullptr;
}

}  // namespace

const KernelIsa* kernel_isas(size_t* count) {
  *count = sizeof(kIsas) / sizeof(kIsas[0]);
  return kIsas;
}

const MathKernels& math_kernels() {
  static const MathKernels* kernels = [] {
    const KernelIsa* isa = active_isa();
    const MathKernels* m = isa && isa->math ? isa->math() : nullptr;
    return m ? m : &kReferenceMath;
  }();
  return *kernels;
}

const DotKernel* active_dot_kernels(size_t* count) {
  *count = 0;
  const KernelIsa* isa = active_isa();
  return isa ? isa->kernels(count) : nullptr;
}

const RepackedType* active_repacked_types(int* count) {
  *count = 0;
  const KernelIsa* isa = active_isa();
  return isa && isa->repacked ? isa->repacked(count) : nullptr;
}

const char* active_kernel_isa() {
  const KernelIsa* isa = active_isa();
  return isa ? isa->name : "reference";
}

bool active_isa_has_slow_f16() {
  const KernelIsa* isa = active_isa();
  return isa && isa->slow_f16;
}

const TypeTraits* find_reference_traits(uint32_t type) {
  for (const TypeTraits& t : kTable) {
    if (static_cast<uint32_t>(t.type) == type) return &t;
  }
  return nullptr;
}

const TypeTraits* find_type_traits(uint32_t type) {
  for (const TypeTraits& t : active_table()) {
    if (static_cast<uint32_t>(t.type) == type) return &t;
  }
  return nullptr;
}

const TypeTraits& type_traits(TensorType type) { return *find_type_traits(static_cast<uint32_t>(type)); }

const TypeTraits* find_type_traits_by_name(const char* name) {
  for (const TypeTraits& t : active_table()) {
    if (iequals(t.name, name)) return &t;
  }
  return nullptr;
}

void gemm(const TypeTraits& t, int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
          int64_t act_stride, int n_acts, float* out, int64_t out_stride) {
  if (t.gemm) {
    t.gemm(n, rows, row_stride, n_rows, acts, act_stride, n_acts, out, out_stride);
    return;
  }
  const uint8_t* w = static_cast<const uint8_t*>(rows);
  const uint8_t* x = static_cast<const uint8_t*>(acts);
  for (int r = 0; r < n_rows; ++r) {
    for (int a = 0; a < n_acts; ++a) out[a * out_stride + r] = t.dot(n, w + r * row_stride, x + a * act_stride);
  }
}

void matvec_rows(const TypeTraits& t, int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act,
                 float* out) {
  if (t.matvec) {
    t.matvec(n, rows, row_stride, n_rows, act, out);
    return;
  }
  const uint8_t* w = static_cast<const uint8_t*>(rows);
  for (int r = 0; r < n_rows; ++r) out[r] = t.dot(n, w + r * row_stride, act);
}

const TypeTraits* all_type_traits(size_t* count) {
  *count = active_table().size();
  return active_table().data();
}

}  // namespace wllm
