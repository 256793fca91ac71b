// The browser's download cache: model files in the origin private file system
// (OPFS), folder 'wasm-llm', one file per URL with a metadata file beside it
// (names from js/cache-names.js). The engine worker writes an entry while it
// downloads — to a partial file, moved into place once the model has loaded
// and its hash was checked — and reads it back on later loads (the cache
// interface of worker/engine-host.js). The page lists and deletes entries
// (LLM.cache). Caching is best effort: when OPFS is missing (some private
// modes) or full, models still load, just without being kept.
import { PARTIAL_SUFFIX, cacheFileName, metaFileName } from '../cache-names.js';
import { canUseSyncAccess, openOpfsReader, openOpfsWriter, writeOpfsText } from './opfs-files.js';

const CACHE_DIR = 'wasm-llm';

// The cache, or null when this context has no usable OPFS.
export async function openOpfsCache() {
  try {
    const root = await navigator.storage.getDirectory();
    return new OpfsModelCache(await root.getDirectoryHandle(CACHE_DIR, { create: true }));
  } catch {
    return null;
  }
}

export class OpfsModelCache {
  constructor(dir) {
    this.dir = dir;
  }

  // Worker side: {reader, meta} for a complete cached copy of `url`, or null.
  async open(url) {
    const name = cacheFileName(url);
    const meta = await this.#readMeta(metaFileName(name));
    if (!meta || meta.url !== url) return null;
    const handle = await this.#fileHandle(name);
    if (!handle) return null;
    const reader = await openOpfsReader(handle, await this.#syncAccess());
    if (reader.size !== meta.size) {
      await reader.close();
      return null;
    }
    return { reader, meta };
  }

  // Worker side: a writer for a new entry of `url`; nothing is visible until
  // commit(meta). A write that fails (quota) drops the entry, not the load.
  async create(url) {
    const name = cacheFileName(url);
    const partialName = `${name}.${randomId()}${PARTIAL_SUFFIX}`;
    const syncAccess = await this.#syncAccess();
    let writer = null;
    try {
      writer = await openOpfsWriter(await this.dir.getFileHandle(partialName, { create: true }), syncAccess);
    } catch (error) {
      return this.#droppedWriter(url, partialName, error);
    }
    let failed = false;
    const drop = async (error) => {
      failed = true;
      await writer.abort().catch(() => {});  // the file is removed anyway
      await this.#remove(partialName).catch(() => {});
      if (error) warnNotCached(url, error);
    };
    return {
      write: async (bytes) => {
        if (failed) return;
        try {
          await writer.write(bytes);
        } catch (error) {
          await drop(error);
        }
      },
      commit: async (meta) => {
        if (failed) return;
        try {
          await writer.close();
          // The old entry (if any) goes first, so no metadata ever describes a file being replaced.
          await this.#remove(metaFileName(name));
          await this.#remove(name);
          await moveFile(this.dir, partialName, name, syncAccess);
          const metaHandle = await this.dir.getFileHandle(metaFileName(name), { create: true });
          await writeOpfsText(metaHandle, JSON.stringify(meta), syncAccess);
        } catch (error) {
          await this.#remove(metaFileName(name)).catch(() => {});
          await this.#remove(name).catch(() => {});
          await drop(error);
        }
      },
      discard: () => (failed ? undefined : drop(null)),
    };
  }

  // Every complete entry: [{url, size, sha256, savedAt}].
  async list() {
    const names = new Set();
    for await (const name of this.dir.keys()) names.add(name);
    const entries = [];
    for (const name of names) {
      if (!name.endsWith('.gguf.json') || !names.has(name.slice(0, -'.json'.length))) continue;
      const meta = await this.#readMeta(name);
      if (meta?.url) entries.push(meta);
    }
    return entries;
  }

  // Removes the entry of `url`; resolves to whether there was one. The model
  // file goes first: if it is in use and cannot be removed, nothing changes.
  async delete(url) {
    const name = cacheFileName(url);
    const existed = (await this.#fileHandle(name)) !== null;
    await this.#remove(name);
    await this.#remove(metaFileName(name));
    return existed;
  }

  // Removes every entry, and unfinished downloads that are not in progress.
  async clear() {
    const names = [];
    for await (const name of this.dir.keys()) names.push(name);
    for (const name of names) {
      if (name.endsWith(PARTIAL_SUFFIX)) await this.#remove(name).catch(() => {});  // in use by a download
      else if (name.endsWith('.gguf') || name.endsWith('.gguf.json')) await this.#remove(name);
    }
  }

  // Whether the worker's files go through sync access handles (opfs-files.js).
  #syncAccess() {
    return canUseSyncAccess(this.dir, `sync-access-test-${randomId()}${PARTIAL_SUFFIX}`);
  }

  async #readMeta(name) {
    try {
      const handle = await this.dir.getFileHandle(name);
      return JSON.parse(await (await handle.getFile()).text());
    } catch {
      return null;
    }
  }

  async #fileHandle(name) {
    try {
      return await this.dir.getFileHandle(name);
    } catch {
      return null;
    }
  }

  // Removes `name`; a missing file is fine, any other failure throws.
  async #remove(name) {
    try {
      await this.dir.removeEntry(name);
    } catch (error) {
      if (error?.name !== 'NotFoundError') throw error;
    }
  }

  // A writer that keeps nothing (the partial file could not be created).
  async #droppedWriter(url, partialName, error) {
    warnNotCached(url, error);
    await this.#remove(partialName).catch(() => {});
    return { write() {}, async commit() {}, async discard() {} };
  }
}

// Renames `from` to `to` in `dir`: move() where the browser has it (WebKit's
// takes the folder too), else a copy.
async function moveFile(dir, from, to, syncAccess) {
  const source = await dir.getFileHandle(from);
  if (typeof source.move === 'function') {
    await source.move(dir, to);
    return;
  }
  const reader = await openOpfsReader(source, syncAccess);
  const writer = await openOpfsWriter(await dir.getFileHandle(to, { create: true }), syncAccess);
  try {
    const chunk = new Uint8Array(8 << 20);
    for (let n; (n = await reader.read(chunk)) > 0;) await writer.write(chunk.subarray(0, n));
    await writer.close();
  } catch (error) {
    await writer.abort().catch(() => {});
    throw error;
  } finally {
    await reader.close();
  }
  await dir.removeEntry(from);
}

function warnNotCached(url, error) {
  console.warn(`wasm-llm: ${url} is not cached: ${error?.message ?? error}`);
}

function randomId() {
  return Math.random().toString(36).slice(2, 10);
}
