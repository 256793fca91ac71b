// What LLM needs from Node (see js/llm.js): worker_threads, file paths, a
// cache folder, and model names resolved through a local models folder.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { LoadError } from '../errors.js';
import { MODELS } from '../registry.js';
import { describeCommonSource, registryDownload } from '../sources.js';
import { FsModelCache, defaultCacheDir } from './cache.js';

const MAX_DEFAULT_THREADS = 4;

// The CPU threads Node may run on.
export function logicalCores() {
  return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
}

// A registry name's download ({url, sha256, file}) plus, when the models folder
// (modelsDir, else $WASM_LLM_MODELS) holds its file, that file's path as
// `local`; null if `name` is not a registry name.
export function resolveRegistryName(name, modelsDir = process.env.WASM_LLM_MODELS) {
  const download = registryDownload(name);
  if (!download) return null;
  const local = modelsDir && path.resolve(modelsDir, download.file);
  return { ...download, local: local && fs.existsSync(local) ? local : undefined };
}

export const nodePlatform = {
  defaultThreads() {
    return Math.max(1, Math.min(MAX_DEFAULT_THREADS, logicalCores()));
  },

  // Node always has SharedArrayBuffer.
  threadsSupported: () => true,

  // The worker picks the relaxed-SIMD build of `variant` if relaxedSimd and this Node runs it (Node 22 and later).
  startWorker(variant, threads, relaxedSimd) {
    const worker = new Worker(new URL('../../worker/node-worker.js', import.meta.url), {
      workerData: { variant, threads, relaxedSimd },
      // None of the parent's Node options: new Worker refuses per-process ones
      // (--max-old-space-size, --expose-gc, --input-type, ...), V8 flags are
      // process-wide anyway, and the engine's own code needs no loader or
      // --experimental flag.
      execArgv: [],
    });
    return {
      post: (message, transfer) => worker.postMessage(message, transfer),
      on: (event, listener) => {
        worker.on(event, listener);
        return () => worker.off(event, listener);
      },
      terminate: () => worker.terminate(),
      ref: () => worker.ref(),
      unref: () => worker.unref(),
    };
  },

  // Sources: a registry name (looked up in the models folder first), a file
  // path or file: URL, an http(s) URL or 'hf:owner/repo/file', bytes, a
  // Blob or a ReadableStream. options: the load options plus
  // {modelsDir, cacheDir}.
  async resolveSource(source, options) {
    const cacheDir = options.cacheDir ? path.resolve(options.cacheDir) : defaultCacheDir();
    const download = resolveRegistryName(source, options.modelsDir);
    if (download) {
      if (download.local) return { description: { kind: 'path', path: download.local }, transfer: [] };
      return {
        description: { kind: 'url', url: download.url, cache: options.cache, cacheDir },
        transfer: [],
        sha256: download.sha256,
      };
    }
    if (source instanceof URL && source.protocol === 'file:') source = fileURLToPath(source);
    const common = describeCommonSource(source, options, { cacheDir });
    if (common) return common;
    if (typeof source === 'string') {
      const file = path.resolve(source);
      if (!fs.existsSync(file) && !/[\\/.]/.test(source)) {
        throw new LoadError(`'${source}' is neither a file nor a known model name (known: ${knownNames()})`, {
          code: 'not_found',
        });
      }
      return { description: { kind: 'path', path: file }, transfer: [] };
    }
    throw new TypeError('the model source must be a model name, a path, a URL, bytes, a Blob or a ReadableStream');
  },

  get cache() {
    return new FsModelCache(defaultCacheDir());
  },
};

function knownNames() {
  return Object.keys(MODELS).join(', ');
}
