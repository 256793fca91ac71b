// Weights repacked at load into a layout an ISA's kernels read faster: the
// same bytes rearranged in place, so a repacked model takes no extra memory.
// A repacked tensor keeps its traits (type, activation format, numerics: every
// output is bit for bit the type's `dot`), and gets a RepackedType with the
// kernels that read the new layout; ops.cpp sends its products there.
//
// The wasm builds repack, and so does AVX2 (Q4_K and Q5_0). SIMD128 (Q4_0,
// Q5_0, Q8_0 and Q4_K into Q4_0x8, Q5_0x8, Q8_0x8 and Q4_Kx8, blocks.h): wasm
// has no int8 dot, and with 4 rows in the lanes of every vector its kernels
// need no horizontal sums and no per-row scale gathers. Relaxed SIMD repacks
// into the "i4" layouts and Q6_Kx8 (4 bytes of each of 4 rows per vector, for
// its int8 dot; relaxed_repacked.cpp). SIMD128 keeps Q6_K in the file's
// layout: repacked, its rows ran faster alone but decode gained nothing for
// the load time it cost. AVX2 reads Q4_K as Q4_Kx8i4 and Q5_0 as Q5_0x8i4
// (x86/repacked_avx2.cpp): with 8 rows in the lanes, a sub-block's products
// add up in int16 before one multiply by its scales, against a multiply per 32
// products in the file's layout, and Q5_0's fifth bits are a shift and a mask
// per 32 codes. AVX-512 and the other x86 types keep the file's layout: their
// kernels gained nothing from the layouts tried (figures and experiments:
// docs/performance.md, "Measurements behind the code").
#pragma once

#include <cstdint>

#include "quant/traits.h"

namespace wllm {

using RepackFn = void (*)(uint8_t* data, int64_t n, int64_t n_rows);
using UnpackFn = RepackFn;

struct RepackedType {
  const char* name;     // "q4_0x8"
  TensorType source;    // the file's type, which the activation format and numerics stay those of
  int rows;             // rows per interleaved group (a tensor's last rows, fewer, stay as they are)
  // In place: `rows` rows at a time, n elements each (data: the tensor's bytes).
  RepackFn repack;
  // Undoes repack (tests, and anything that needs plain rows back).
  UnpackFn unpack;
  // As MatvecFn / GemmFn (traits.h), on repacked rows: `rows` points at a
  // group's first row, n_rows is a multiple of `rows`; row_stride is the
  // source type's row size (a group of R rows takes R strides).
  MatvecFn matvec;
  GemmFn gemm;
};

// The repacked form the active kernels want for `source`, or null: keep the
// file's layout. WLLM_KERNELS=ref (or any ISA without one) turns it off.
const RepackedType* repacked_type_for(TensorType source);

// The scalar reference of every repacked type (its kernels unpack a group and
// loop the reference dot), for tests: the ISA kernels must match it bit for bit.
const RepackedType* reference_repacked_types(int* count);

namespace ref {
void repack_q4_0x8(uint8_t* data, int64_t n, int64_t n_rows);
void unpack_q4_0x8(uint8_t* data, int64_t n, int64_t n_rows);
void repack_q4_0x8i4(uint8_t* data, int64_t n, int64_t n_rows);
void unpack_q4_0x8i4(uint8_t* data, int64_t n, int64_t n_rows);
void repack_q8_0x8(uint8_t* data, int64_t n, int64_t n_rows);
void unpack_q8_0x8(uint8_t* data, int64_t n, int64_t n_rows);
void repack_q5_0x8(uint8_t* data, int64_t n, int64_t n_rows);
void unpack_q5_0x8(uint8_t* data, int64_t n, int64_t n_rows);
void repack_q5_0x8i4(uint8_t* data, int64_t n, int64_t n_rows);
void unpack_q5_0x8i4(uint8_t* data, int64_t n, int64_t n_rows);
void repack_q4_Kx8(uint8_t* data, int64_t n, int64_t n_rows);
void unpack_q4_Kx8(uint8_t* data, int64_t n, int64_t n_rows);
void repack_q4_Kx8i4(uint8_t* data, int64_t n, int64_t n_rows);
void unpack_q4_Kx8i4(uint8_t* data, int64_t n, int64_t n_rows);
void repack_q6_Kx8(uint8_t* data, int64_t n, int64_t n_rows);
void unpack_q6_Kx8(uint8_t* data, int64_t n, int64_t n_rows);
}  // namespace ref

}  // namespace wllm
