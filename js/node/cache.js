// Node's download cache: a folder of model files, one per URL, each with a
// metadata file (js/cache-names.js). The worker writes an entry while it
// downloads (to a .part file, renamed once the model has loaded and its hash
// checked); LLM.cache lists and deletes entries from the caller's side.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PARTIAL_SUFFIX, cacheFileName, metaFileName } from '../cache-names.js';
import { openFileReader } from './file-reader.js';

// WASM_LLM_CACHE, else $XDG_CACHE_HOME/wasm-llm, else ~/.cache/wasm-llm.
export function defaultCacheDir() {
  if (process.env.WASM_LLM_CACHE) return path.resolve(process.env.WASM_LLM_CACHE);
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'wasm-llm');
}

export class FsModelCache {
  constructor(dir) {
    this.dir = dir;
  }

  // The cached file of `url` and its metadata, or null.
  async lookup(url) {
    const file = path.join(this.dir, cacheFileName(url));
    const meta = await readJson(path.join(this.dir, metaFileName(cacheFileName(url))));
    if (!meta || meta.url !== url || !fs.existsSync(file)) return null;
    return { file, meta };
  }

  // Worker side: {reader, meta} for a cached copy of `url`, or null.
  async open(url) {
    const hit = await this.lookup(url);
    return hit && { reader: await openFileReader(hit.file), meta: hit.meta };
  }

  // Worker side: a writer for a new entry; nothing is visible until commit().
  async create(url) {
    await fs.promises.mkdir(this.dir, { recursive: true });
    const file = path.join(this.dir, cacheFileName(url));
    const partial = `${file}.${process.pid}.${Date.now()}${PARTIAL_SUFFIX}`;
    const fd = fs.openSync(partial, 'w');
    let open = true;
    const close = () => {
      if (open) fs.closeSync(fd);
      open = false;
    };
    return {
      write: (bytes) => {
        for (let written = 0; written < bytes.length;) written += fs.writeSync(fd, bytes, written);
      },
      commit: async (meta) => {
        close();
        await fs.promises.rename(partial, file);
        await fs.promises.writeFile(path.join(this.dir, metaFileName(cacheFileName(url))), JSON.stringify(meta));
      },
      discard: async () => {
        close();
        await fs.promises.rm(partial, { force: true });
      },
    };
  }

  // Every entry: [{url, size, sha256, savedAt, file}].
  async list() {
    let names;
    try {
      names = await fs.promises.readdir(this.dir);
    } catch {
      return [];
    }
    const entries = [];
    for (const name of names.filter((n) => n.endsWith('.gguf.json'))) {
      const meta = await readJson(path.join(this.dir, name));
      const file = path.join(this.dir, name.slice(0, -'.json'.length));
      if (meta?.url && fs.existsSync(file)) entries.push({ ...meta, file });
    }
    return entries;
  }

  // Removes the entry of `url`; resolves to whether there was one.
  async delete(url) {
    const file = path.join(this.dir, cacheFileName(url));
    const existed = fs.existsSync(file);
    await fs.promises.rm(file, { force: true });
    await fs.promises.rm(path.join(this.dir, metaFileName(cacheFileName(url))), { force: true });
    return existed;
  }

  // Removes every entry (and any unfinished download).
  async clear() {
    let names = [];
    try {
      names = await fs.promises.readdir(this.dir);
    } catch {
      return;
    }
    for (const name of names) {
      if (name.endsWith('.gguf') || name.endsWith('.gguf.json') || name.endsWith(PARTIAL_SUFFIX)) {
        await fs.promises.rm(path.join(this.dir, name), { force: true });
      }
    }
  }
}

async function readJson(file) {
  try {
    return JSON.parse(await fs.promises.readFile(file, 'utf8'));
  } catch {
    return null;
  }
}
