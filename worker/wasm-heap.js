// Scratch memory in the engine's wasm heap, for bytes JS hands the engine
// (file prefixes, a tokenizer file, saved states, chunks to checksum).
import { EngineError } from '../js/errors.js';

// A pointer to `bytes` bytes of the heap (free it with WasmEngine.free).
// The engine's malloc returns 0 when the heap cannot grow (the browser
// refused more memory, or 4 GB are reached): writing through that pointer
// would overwrite the engine's own data, so this throws 'out_of_memory'.
export function heapAlloc(WasmEngine, bytes) {
  const ptr = WasmEngine.alloc(bytes);
  if (ptr === 0) {
    throw new EngineError({
      code: 'out_of_memory',
      message: `could not allocate ${(bytes / 1048576).toFixed(1)} MiB in the engine's memory`,
    });
  }
  return ptr;
}
