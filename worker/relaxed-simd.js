// Whether this JS engine runs wasm relaxed SIMD, which the relaxed build's
// kernels need (V8 11.4 and later: Chromium 114, Node 22; Firefox behind a
// pref; Node 20's V8 only with --experimental-wasm-relaxed-simd). The probe
// is the smallest module using the one instruction those kernels add: a function
// (v128, v128, v128) → v128 that returns
// i32x4.relaxed_dot_i8x16_i7x16_add_s of its parameters.
const PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // '\0asm', version 1
  0x01, 0x08, 0x01, 0x60, 0x03, 0x7b, 0x7b, 0x7b, 0x01, 0x7b, // type section: (v128, v128, v128) → v128
  0x03, 0x02, 0x01, 0x00, // function section: one function of type 0
  0x0a, 0x0d, 0x01, 0x0b, 0x00, // code section: one body of 11 bytes, no locals
  0x20, 0x00, 0x20, 0x01, 0x20, 0x02, // local.get 0, 1, 2
  0xfd, 0x93, 0x02, // prefix 0xfd, opcode 0x113 (LEB128): i32x4.relaxed_dot_i8x16_i7x16_add_s
  0x0b, // end
]);

export function runsRelaxedSimd() {
  return WebAssembly.validate(PROBE);
}

// The build of `variant` ('mt' or 'st') an engine worker loads: its
// relaxed-SIMD build where this engine runs it, unless the caller asked for
// SIMD128 (the load option relaxedSimd: false). Both give the same results.
export function wasmBuild(variant, relaxedSimd) {
  return relaxedSimd && runsRelaxedSimd() ? `${variant}-relaxed` : variant;
}
