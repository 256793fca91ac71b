// ISA-specific kernels that take the place of a type's reference `dot` and
// `gemm` in the traits table. Each must give exactly the reference's bits (see
// the numerics contract in traits.h); tests/cpp/kernels_test.cpp checks that
// they do, gemm and matvec against dot for every (row, activation) pair.
#pragma once

#include <cstddef>
#include <cstdint>

#include "quant/repack.h"
#include "quant/traits.h"

namespace wllm {

// One type's kernels in one ISA. A new ISA lists a row per type it speeds
// up; any column may stay null (the table keeps the reference's), except
// that a row with a dot and no gemm makes matmul loop that dot.
struct DotKernel {
  TensorType type;
  DotFn dot;
  GemmFn gemm = nullptr;
  FromFloatFn from_float = nullptr;  // activation formats (Q8_0, Q8_K)
  MatvecFn matvec = nullptr;         // decode: several rows at once against one activation
};

// The AVX2 (+F16C) kernels, or an empty list when this CPU or build has none.
const DotKernel* avx2_dot_kernels(size_t* count);
// AVX-512 (F, BW, VL, VNNI): the AVX2 list with wider tiled kernels where
// they pay, or an empty list when this CPU or build has none.
const DotKernel* avx512_dot_kernels(size_t* count);
// The wasm SIMD128 kernels, or an empty list when built without -msimd128.
const DotKernel* simd128_dot_kernels(size_t* count);
// The wasm relaxed-SIMD kernels (the SIMD128 list; repacked layouts for the
// relaxed dot, relaxed_repacked.cpp), or an empty list when built without
// -mrelaxed-simd: only the relaxed wasm variant, for engines that run it.
const DotKernel* relaxed_dot_kernels(size_t* count);
// The aarch64 NEON kernels, or an empty list when not built for aarch64.
const DotKernel* neon_dot_kernels(size_t* count);

// Elementwise math of the forward pass that an ISA may speed up. Each must
// give exactly the bits of the reference (ref::swiglu, ref::softmax):
// core/math.h's exp and silu are lane-wise steps, so vectors of them agree.
struct MathKernels {
  // gate[i] = silu(gate[i]) · up[i] for i < n.
  void (*swiglu)(float* gate, const float* up, int64_t n);
  // x = softmax(x · scale) in place over n >= 1 values: the maximum as
  // std::max finds it, e^(x − max) with the sum's element i in lane i % 8
  // (reduced by sum_lanes8), then each times 1 / sum.
  void (*softmax)(float* x, int64_t n, float scale);
};
const MathKernels* avx2_math_kernels();     // null when this CPU or build has none
const MathKernels* simd128_math_kernels();  // null when built without -msimd128
// The active ISA's math kernels, or the reference ones.
const MathKernels& math_kernels();

// The SIMD128 repacked types (repack.h), or an empty list without -msimd128.
const RepackedType* simd128_repacked_types(int* count);
// The relaxed-SIMD ones (SIMD128's where relaxed SIMD has none of its own).
const RepackedType* relaxed_repacked_types(int* count);
// The AVX2 ones (Q4_K, Q5_0), or an empty list when this CPU or build has no AVX2.
const RepackedType* avx2_repacked_types(int* count);
// The active ISA's repacked types (none for the reference).
const RepackedType* active_repacked_types(int* count);

// Every ISA this build knows, best first; an ISA this CPU cannot run lists
// no kernels. Tests check each one that does.
struct KernelIsa {
  const char* name;
  const DotKernel* (*kernels)(size_t* count);
  const MathKernels* (*math)();  // may return null: the reference's then
  const RepackedType* (*repacked)(int* count) = nullptr;  // layouts to repack weights into (repack.h)
  // Its f16 kernels convert slowly (SIMD128 has no f16 instructions: about
  // 18 per 8 values), so f16 rows read many times are better copied to f32
  // once (a batch's attention over the cache; the f32 kernels give the bits).
  bool slow_f16 = false;
};
const KernelIsa* kernel_isas(size_t* count);

// The kernels the traits table uses on this machine, and their ISA's name:
// the first ISA with kernels ("avx512", "avx2", "relaxed", "simd128", "neon"), or "reference"
// when there are none. WLLM_KERNELS=<name> picks a listed ISA instead
// ("ref": the reference kernels), to measure what each buys.
const DotKernel* active_dot_kernels(size_t* count);
const char* active_kernel_isa();
// The active ISA's slow_f16 (false for the reference).
bool active_isa_has_slow_f16();

// The reference row for `type` (scalar kernels), or nullptr if unknown:
// what tests and benchmarks compare the active kernels against.
const TypeTraits* find_reference_traits(uint32_t type);

}  // namespace wllm
