// The per-type traits table: everything the rest of the engine knows about a
// tensor type lives in one row of this table. Adding a quant type means a block
// struct (blocks.h), scalar reference kernels (ref/), and one row in traits.cpp.
//
// Matrix-vector products follow ggml's scheme: the activation vector is
// converted once per product to the weight type's `act_type` (F32 for float
// weights, Q8_0/Q8_1/Q8_K for quantized weights), then every row is dotted with
// `dot`. A batch of activations (prompt tokens) goes through `gemm` instead,
// which decodes each weight block once for several activations, and a single
// activation (decode) through `matvec`, which works on several rows at once;
// both must give every output exactly as `dot` would. Numerics are fixed so that every ISA
// gives the same bits:
//  - quantized dots sum integer products exactly per block, then combine each
//    block's term into float accumulator (block % 8), reduced at the end by
//    sum_lanes8() below;
//  - float dots accumulate element i into lane (i % 8), reduced the same way;
//  - no fused multiply-add anywhere (-ffp-contract=off).
#pragma once

#include <cstddef>
#include <cstdint>

#include "quant/types.h"

namespace wllm {

// Converts n elements (n a multiple of block_size) of this type to float.
using ToFloatFn = void (*)(const void* src, float* dst, int64_t n);
// Converts n floats (n a multiple of block_size) to this type.
using FromFloatFn = void (*)(const float* src, void* dst, int64_t n);
// Dot product of n elements: a row of this type against a row of act_type.
using DotFn = float (*)(int64_t n, const void* row, const void* act);
// Tiled product of n_rows weight rows and n_acts activation rows (n elements
// each; strides in bytes): out[a * out_stride + r] = dot(n, row r, act a) for
// every r < n_rows, a < n_acts, each value bit for bit what `dot` returns.
using GemmFn = void (*)(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
                        int64_t act_stride, int n_acts, float* out, int64_t out_stride);
// n_rows weight rows against one activation: out[r] = dot(n, row r, act) for
// every r < n_rows, bit for bit.
using MatvecFn = void (*)(int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act, float* out);

struct TypeTraits {
  TensorType type;
  const char* name;       // as ggml names it: "q4_0", "q6_K", "bf16"
  int64_t block_size;     // elements per block
  int64_t block_bytes;    // bytes per block
  bool weight_type;       // may appear as a weight (false: activation-only)
  TensorType act_type;    // what the activation is converted to for `dot`
  ToFloatFn to_float;     // reference dequantizer
  FromFloatFn from_float; // quantizer (bit for bit the reference; used by `quantize` too)
  DotFn dot;              // row . activation (null for activation-only types)
  GemmFn gemm;            // rows x activations, exactly `dot`'s values (null: matmul loops `dot`)
  MatvecFn matvec = nullptr;  // rows x one activation, exactly `dot`'s values (null: loops `dot`)
};

// The row for `type`, or nullptr if the engine does not know the type.
const TypeTraits* find_type_traits(uint32_t type);
// The row for a known type (never null).
const TypeTraits& type_traits(TensorType type);
// Looks a type up by its ggml name ("q4_0", "Q4_K", case-insensitive).
const TypeTraits* find_type_traits_by_name(const char* name);

// All types the table knows, for tests and the CLI.
const TypeTraits* all_type_traits(size_t* count);

// rows x activations through the table (see GemmFn): the type's tiled
// kernel, or, where it has none, its dot in a loop.
void gemm(const TypeTraits& t, int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* acts,
          int64_t act_stride, int n_acts, float* out, int64_t out_stride);

// rows x one activation through the table (see MatvecFn): the type's matvec
// kernel, or, where it has none, its dot in a loop.
void matvec_rows(const TypeTraits& t, int64_t n, const void* rows, int64_t row_stride, int n_rows, const void* act,
                 float* out);

// Bytes taken by a row of n elements; n must be a multiple of block_size.
inline int64_t row_bytes(const TypeTraits& t, int64_t n) { return n / t.block_size * t.block_bytes; }

// The fixed reduction of 8 partial sums used by every dot kernel:
// ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7)) — what folding a SIMD register in
// halves computes, so scalar and vector code agree bit for bit.
inline float sum_lanes8(const float a[8]) {
  const float s0 = a[0] + a[4], s1 = a[1] + a[5], s2 = a[2] + a[6], s3 = a[3] + a[7];
  return (s0 + s2) + (s1 + s3);
}

}  // namespace wllm
