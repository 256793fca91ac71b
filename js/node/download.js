// Downloads a model into Node's cache folder (for the CLI, which runs the
// engine on a file): resumes dropped connections, starts over when the file
// changes on the server, checks the sha256, records the checksum that cached
// copies are checked against (here and by the engine worker), and leaves
// nothing behind on failure.
import crypto from 'node:crypto';
import { heapAlloc } from '../../worker/wasm-heap.js';
import { LoadError } from '../errors.js';
import { DownloadRestartError, openUrlReader } from '../readers.js';
import { FsModelCache } from './cache.js';
import { openFileReader } from './file-reader.js';
import { instantiateWasm } from './wasm-engine.js';

const CHUNK_BYTES = 4 << 20;
const MAX_RESTARTS = 2;  // as the engine worker's loads (worker/engine-host.js)

// Resolves to the cached file of `url`. onProgress({phase: 'download' | 'cache', loaded, total}).
// A cached copy whose bytes no longer match its checksum is downloaded again.
export async function downloadToCache(url, { cacheDir, sha256, onProgress = () => {}, signal } = {}) {
  const cache = new FsModelCache(cacheDir);
  const checksums = await wasmChecksums();
  const hit = await cache.lookup(url);
  if (hit && (!sha256 || hit.meta.sha256 === sha256) && (await checksums.ofFile(hit.file)) === hit.meta.checksum) {
    onProgress({ phase: 'cache', loaded: hit.meta.size, total: hit.meta.size });
    return hit.file;
  }
  for (let restarts = 0; ; restarts++) {
    try {
      await download(url, cache, checksums, { sha256, onProgress, signal: signal ?? new AbortController().signal });
      return (await cache.lookup(url)).file;
    } catch (error) {
      if (!(error instanceof DownloadRestartError) || restarts >= MAX_RESTARTS) throw error;
    }
  }
}

async function download(url, cache, checksums, { sha256, onProgress, signal }) {
  const reader = await openUrlReader(url, signal);
  const writer = await cache.create(url);
  const hash = crypto.createHash('sha256');
  const checksum = checksums.start();
  const buffer = new Uint8Array(CHUNK_BYTES);
  let loaded = 0;
  try {
    for (;;) {
      const n = await reader.read(buffer);
      if (n === 0) break;
      const bytes = buffer.subarray(0, n);
      writer.write(bytes);
      hash.update(bytes);
      checksum.update(bytes);
      loaded += n;
      onProgress({ phase: 'download', loaded, total: reader.size });
    }
    const digest = hash.digest('hex');
    if (sha256 && digest !== sha256) {
      throw new LoadError(`${url}: the file's sha256 is ${digest}, not the expected ${sha256}`, {
        code: 'sha256_mismatch',
      });
    }
    await writer.commit({ url, size: loaded, sha256: digest, checksum: checksum.digest(), savedAt: Date.now() });
  } catch (error) {
    await writer.discard();
    throw error;
  } finally {
    await reader.close();
  }
}

// Checksum64 (cpp/core/checksum.h), computed by the engine's wasm build so
// it is the very value the worker records and checks: start() → a fresh
// {update(bytes), digest()}; ofFile(path) → a file's, read straight into the heap.
async function wasmChecksums() {
  const module = await instantiateWasm('st', { printErr: () => {} });
  const { WasmEngine } = module;
  const heap = heapAlloc(WasmEngine, CHUNK_BYTES);
  const start = () => {
    const hash = new module.Checksum64();
    return {
      update(bytes) {
        for (let at = 0; at < bytes.length; at += CHUNK_BYTES) {
          const piece = bytes.subarray(at, at + CHUNK_BYTES);
          WasmEngine.heapView(heap, piece.length).set(piece);
          hash.update(heap, piece.length);
        }
      },
      updateFromHeap: (n) => hash.update(heap, n),
      digest() {
        const value = hash.hexDigest();
        hash.delete();
        return value;
      },
    };
  };
  return {
    start,
    async ofFile(file) {
      const reader = await openFileReader(file);
      const checksum = start();
      try {
        for (let n; (n = await reader.read(WasmEngine.heapView(heap, CHUNK_BYTES))) > 0;) checksum.updateFromHeap(n);
      } finally {
        await reader.close();
      }
      return checksum.digest();
    },
  };
}
