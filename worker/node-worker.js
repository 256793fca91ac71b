// The engine worker in Node: a worker_threads worker that owns the wasm
// instance (Emscripten's classic glue) and serves the caller's requests
// (serve.js). Paths are read from disk; downloads are cached in a folder.
// Started by js/node/platform.js with workerData {variant: 'mt' | 'st',
// threads, relaxedSimd}.
import { setImmediate } from 'node:timers/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { FsModelCache } from '../js/node/cache.js';
import { openFileReader } from '../js/node/file-reader.js';
import { instantiateWasm } from '../js/node/wasm-engine.js';
import { EngineHost } from './engine-host.js';
import { wasmBuild } from './relaxed-simd.js';
import { serve } from './serve.js';

async function createHost() {
  const { variant, threads, relaxedSimd } = workerData;
  const module = await instantiateWasm(wasmBuild(variant, relaxedSimd), { nThreads: threads, printErr: () => {} });
  return new EngineHost(module, threads, {
    readers: { path: (source) => openFileReader(source.path) },
    cache: (source) => new FsModelCache(source.cacheDir),
    yieldToEventLoop: () => setImmediate(),
  });
}

const onMessage = serve((message, transfer) => parentPort.postMessage(message, transfer), createHost);
parentPort.on('message', onMessage);
