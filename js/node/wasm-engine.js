// Instantiates one of the engine's wasm builds in this Node thread, with
// Emscripten's classic glue (dist/wasm/wasm-llm-<build>.js).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const wasmDir = new URL('../../dist/wasm/', import.meta.url);

// build: 'st', 'mt-relaxed', 'cli', ...; settings: the glue's Module settings.
export function instantiateWasm(build, settings = {}) {
  const factory = require(fileURLToPath(new URL(`wasm-llm-${build}.js`, wasmDir)));
  // Node needs the binary passed in: the 3.1.6 glue would fetch() a file path.
  const wasmBinary = fs.readFileSync(new URL(`wasm-llm-${build}.wasm`, wasmDir));
  return factory({ wasmBinary, ...settings });
}
