// Downloads a model into Node's cache folder (for the CLI, which runs the
// engine on a file): resumes dropped connections, starts over when the file
// changes on the server, checks the sha256, and leaves nothing behind on
// failure.
import crypto from 'node:crypto';
import { LoadError } from '../errors.js';
import { DownloadRestartError, openUrlReader } from '../readers.js';
import { FsModelCache } from './cache.js';

const CHUNK_BYTES = 4 << 20;
const MAX_RESTARTS = 2;  // as the engine worker's loads (worker/engine-host.js)

// Resolves to the cached file of `url`. onProgress({phase: 'download' | 'cache', loaded, total}).
export async function downloadToCache(url, { cacheDir, sha256, onProgress = () => {}, signal } = {}) {
  const cache = new FsModelCache(cacheDir);
  const hit = await cache.lookup(url);
  if (hit && (!sha256 || hit.meta.sha256 === sha256)) {
    onProgress({ phase: 'cache', loaded: hit.meta.size, total: hit.meta.size });
    return hit.file;
  }
  for (let restarts = 0; ; restarts++) {
    try {
      await download(url, cache, { sha256, onProgress, signal: signal ?? new AbortController().signal });
      return (await cache.lookup(url)).file;
    } catch (error) {
      if (!(error instanceof DownloadRestartError) || restarts >= MAX_RESTARTS) throw error;
    }
  }
}

async function download(url, cache, { sha256, onProgress, signal }) {
  const reader = await openUrlReader(url, signal);
  const writer = await cache.create(url);
  const hash = crypto.createHash('sha256');
  const buffer = new Uint8Array(CHUNK_BYTES);
  let loaded = 0;
  try {
    for (;;) {
      const n = await reader.read(buffer);
      if (n === 0) break;
      const bytes = buffer.subarray(0, n);
      writer.write(bytes);
      hash.update(bytes);
      loaded += n;
      onProgress({ phase: 'download', loaded, total: reader.size });
    }
    const digest = hash.digest('hex');
    if (sha256 && digest !== sha256) throw new LoadError(`${url}: the file's sha256 is ${digest}, not the expected ${sha256}`);
    await writer.commit({ url, size: loaded, sha256: digest, savedAt: Date.now() });
  } catch (error) {
    await writer.discard();
    throw error;
  } finally {
    await reader.close();
  }
}
