// The engine worker in Node: a worker_threads worker that owns the wasm
// instance (Emscripten's classic glue) and serves the caller's requests
// (serve.js). Paths are read from disk; downloads are cached in a folder.
// Started by js/node/platform.js with workerData {variant: 'mt' | 'st',
// threads, relaxedSimd}.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { setImmediate } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';
import { FsModelCache } from '../js/node/cache.js';
import { openFileReader } from '../js/node/file-reader.js';
import { EngineHost } from './engine-host.js';
import { wasmBuild } from './relaxed-simd.js';
import { serve } from './serve.js';

const require = createRequire(import.meta.url);
const wasmDir = new URL('../dist/wasm/', import.meta.url);

async function createHost() {
  const { variant, threads, relaxedSimd } = workerData;
  const name = `wasm-llm-${wasmBuild(variant, relaxedSimd)}`;
  const factory = require(fileURLToPath(new URL(`${name}.js`, wasmDir)));
  // Node needs the binary passed in: the 3.1.6 glue would fetch() a file path.
  const wasmBinary = fs.readFileSync(new URL(`${name}.wasm`, wasmDir));
  const module = await factory({ wasmBinary, nThreads: threads, printErr: () => {} });
  return new EngineHost(module, threads, {
    readers: { path: (source) => openFileReader(source.path) },
    cache: (source) => new FsModelCache(source.cacheDir),
    yieldToEventLoop: () => setImmediate(),
  });
}

const onMessage = serve((message) => parentPort.postMessage(message), createHost);
parentPort.on('message', onMessage);
