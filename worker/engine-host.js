// Worker side: one wasm instance and the engine in it. Streams a model file
// into the wasm heap (header first, then the tensor data straight into the
// engine's arena) and runs generation step by step, yielding to the event
// loop between steps so an abort message is seen promptly. The same code runs
// in Node's worker_threads worker and in the browser's Web Worker; what
// differs is passed in: the wasm module, readers for platform sources (files,
// OPFS) and the download cache.
import { AbortError, GenerationError, LoadError, checkStatus } from '../js/errors.js';
import { DownloadRestartError, blobReader, openUrlReader, streamReader, tapReader } from '../js/readers.js';

const FIRST_PREFIX_BYTES = 1 << 20;  // most GGUF headers fit in 1 MiB
const CHUNK_BYTES = 4 << 20;         // bytes per read into the heap
const UNKNOWN_SIZE = Number.MAX_SAFE_INTEGER;
const MAX_DOWNLOAD_RESTARTS = 2;  // a file that keeps changing fails instead
const STATE_CHUNK_BYTES = 4 << 20;  // bytes of a saved state copied into the heap at a time

// Where the bytes of a load came from, as onProgress's phase names it.
const PHASE = { network: 'download', cache: 'cache', local: 'read' };

export class EngineHost {
  // module: the instantiated Emscripten module; threads: engine threads.
  // platform: { readers: {kind: (description) → reader}, cache(description) → cache or null,
  //             yieldToEventLoop() → Promise }.
  // A cache is { open(url) → {reader, meta} | null, create(url) → writer, delete(url) };
  // a writer is { write(bytes), commit(meta), discard() }; meta is {url, size, sha256, checksum, savedAt}
  // (js/cache-names.js).
  constructor(module, threads, platform) {
    this.module = module;
    this.threads = threads;
    this.platform = platform;
    this.engine = new module.WasmEngine();
    this.loaded = false;
  }

  // Loads the model described by `source` (see js/sources.js). options:
  // {contextSize, memoryLimit, sha256}; onProgress({phase, loaded, total});
  // signal: AbortSignal. A cached copy that fails to load or to verify is
  // deleted and the model is downloaded again; a download whose file changed
  // on the server starts over (a few times at most).
  async load(source, options, onProgress, signal) {
    let useCachedCopy = true;
    let restarts = 0;
    try {
      for (;;) {
        try {
          return await this.#loadOnce(source, options, onProgress, signal, useCachedCopy);
        } catch (error) {
          if (error instanceof CachedCopyError && useCachedCopy) {
            await error.cache.delete(source.url);
            useCachedCopy = false;
          } else if (error instanceof DownloadRestartError && restarts < MAX_DOWNLOAD_RESTARTS) {
            restarts += 1;
          } else {
            throw error;
          }
          this.engine.delete();
          this.engine = new this.module.WasmEngine();
        }
      }
    } catch (error) {
      if (signal.aborted) throw new AbortError('loading was aborted');
      throw error instanceof CachedCopyError ? error.cause : error;
    }
  }

  async #loadOnce(source, options, onProgress, signal, useCachedCopy) {
    const opened = await this.#open(source, signal, useCachedCopy);
    let { reader } = opened;
    const phase = PHASE[opened.from];
    const fromCache = opened.from === 'cache';
    // Hashed while the bytes stream in: the expected sha256, unless the cached
    // copy recorded it when it was written; a download being cached gets both
    // hashes recorded; a cached copy's bytes are checked against the checksum
    // recorded with them (cheap, unlike SHA-256), which also vouches for its sha256.
    const wantSha256 = options.sha256 && !(fromCache && opened.meta.sha256 === options.sha256) ? options.sha256 : null;
    const sha256 = wantSha256 || opened.writer ? new this.module.Sha256() : null;
    const checksum = opened.writer || fromCache ? new this.module.Checksum64() : null;
    const hashes = [sha256, checksum].filter(Boolean);
    if (hashes.length > 0) reader = tapReader(reader, (bytes) => this.#hash(hashes, bytes));
    try {
      const prefix = await this.#beginLoad(reader, options, (loaded) => onProgress({ phase, loaded, total: reader.size }),
        signal);
      await this.#readData(reader, prefix, (loaded) => onProgress({ phase, loaded, total: reader.size }), signal);
      // The bytes after the tensor data (if any) are hashed and cached too.
      if (hashes.length > 0) await drain(reader, signal);
      const digest = sha256?.hexDigest();
      const sum = checksum?.hexDigest();
      if (wantSha256 && digest !== wantSha256) {
        throw new LoadError(`the file's sha256 is ${digest}, not the expected ${wantSha256}`, {
          code: 'sha256_mismatch',
        });
      }
      if (fromCache && sum !== opened.meta.checksum) {
        const recorded = opened.meta.checksum;
        throw new LoadError(`the cached copy is damaged: its checksum is ${sum}, not the recorded ${recorded}`, {
          code: 'bad_file',
        });
      }
      onProgress({ phase: 'init', loaded: this.#fileEnd(), total: reader.size ?? this.#fileEnd() });
      this.#check(this.engine.finishLoad());
      await opened.writer?.commit({
        url: source.url, size: this.#fileEnd(), sha256: digest, checksum: sum, savedAt: Date.now(),
      });
      this.loaded = true;
      onProgress({ phase: 'done', loaded: this.#fileEnd(), total: reader.size ?? this.#fileEnd() });
      return { ...this.info(), loadedFrom: opened.from };
    } catch (error) {
      await opened.writer?.discard();
      if (fromCache && useCachedCopy && !signal.aborted) throw new CachedCopyError(opened.cache, error);
      throw error;
    } finally {
      for (const hash of hashes) hash.delete();
      await reader.close();
    }
  }

  // {reader, from: 'network' | 'cache' | 'local', writer?, meta?, cache?}
  async #open(source, signal, useCachedCopy) {
    switch (source.kind) {
      case 'url': {
        const cache = source.cache ? await this.platform.cache(source) : null;
        const hit = cache && useCachedCopy ? await cache.open(source.url) : null;
        if (hit?.meta.checksum) return { reader: hit.reader, meta: hit.meta, from: 'cache', cache };
        await hit?.reader.close();  // an entry without a checksum cannot be checked: downloaded again
        const reader = await openUrlReader(source.url, signal);
        if (!cache) return { reader, from: 'network' };
        const writer = await cache.create(source.url);
        return { reader: tapReader(reader, (bytes) => writer.write(bytes)), writer, from: 'network' };
      }
      case 'stream':
        return { reader: callerSourceReader(streamReader(source.stream, source.size)), from: 'local' };
      case 'blob':
        return { reader: callerSourceReader(blobReader(source.blob)), from: 'local' };
      default: {
        const open = this.platform.readers[source.kind];
        if (!open) {
          throw new LoadError(`this platform cannot load a source of kind '${source.kind}'`, { code: 'internal' });
        }
        return { reader: await open(source), from: 'local' };
      }
    }
  }

  // Feeds bytes to each of `hashes`: in place when they are in the heap, else through a copy.
  #hash(hashes, bytes) {
    const { WasmEngine } = this.module;
    if (bytes.buffer === WasmEngine.heapView(0, 0).buffer) {
      for (const hash of hashes) hash.update(bytes.byteOffset, bytes.length);
      return;
    }
    const ptr = WasmEngine.alloc(bytes.length);
    try {
      WasmEngine.heapView(ptr, bytes.length).set(bytes);
      for (const hash of hashes) hash.update(ptr, bytes.length);
    } finally {
      WasmEngine.free(ptr);
    }
  }

  // Grows the header prefix until the engine stops asking for more; returns it.
  async #beginLoad(reader, options, progress, signal) {
    const fileSize = reader.size ?? UNKNOWN_SIZE;
    let prefix = new Uint8Array(0);
    let want = Math.min(fileSize, FIRST_PREFIX_BYTES);
    for (;;) {
      prefix = await readMore(reader, prefix, want);
      throwIfAborted(signal);
      progress(prefix.length);
      // A reader that ended early tells the parser the true size, so its
      // message says where the file is truncated.
      const ended = prefix.length < want;
      const status = this.#beginLoadWith(prefix, ended ? prefix.length : fileSize, options);
      if (status.code === 'need_more_data' && !ended && status.neededBytes > want) {
        want = Math.min(fileSize, status.neededBytes);
        continue;
      }
      this.#check(status);
      return prefix;
    }
  }

  #beginLoadWith(prefix, fileSize, options) {
    const { WasmEngine } = this.module;
    const ptr = WasmEngine.alloc(prefix.length);
    try {
      WasmEngine.heapView(ptr, prefix.length).set(prefix);
      return this.engine.beginLoad(ptr, prefix.length, fileSize, {
        contextSize: options.contextSize ?? 0,
        threads: this.threads,
        memoryLimit: options.memoryLimit ?? 0,
      });
    } finally {
      WasmEngine.free(ptr);
    }
  }

  // Puts file bytes [dataOffset, dataOffset + dataSize) into the arena: what
  // the prefix already holds, then the rest read straight into the heap.
  async #readData(reader, prefix, progress, signal) {
    const { WasmEngine } = this.module;
    const offset = this.engine.dataOffset();
    const size = this.engine.dataSize();
    const dest = this.engine.dataDestination();
    let written = 0;
    if (prefix.length > offset) {
      const inPrefix = prefix.subarray(offset, Math.min(prefix.length, offset + size));
      WasmEngine.heapView(dest, inPrefix.length).set(inPrefix);
      written = inPrefix.length;
    }
    await skip(reader, offset - prefix.length);  // padding after the header, if not read yet
    while (written < size) {
      throwIfAborted(signal);
      // A fresh view per chunk: views die when the memory grows.
      const view = WasmEngine.heapView(dest + written, Math.min(CHUNK_BYTES, size - written));
      const n = await reader.read(view);
      if (n === 0) {
        throw new LoadError(
          `the file is truncated: it ends at byte ${offset + written} but its tensor data ends at byte ${offset + size}`,
          { code: 'bad_file' },
        );
      }
      written += n;
      progress(offset + written);
    }
  }

  #fileEnd() {
    return this.engine.dataOffset() + this.engine.dataSize();
  }

  #check(status) {
    try {
      checkStatus(status);
    } catch (error) {
      throw new LoadError(`cannot load the model: ${error.message}`, { code: error.code, cause: error });
    }
  }

  info() {
    return { ...this.engine.info(), threaded: this.module.WasmEngine.threaded() };
  }

  tokenize(text, addSpecial, parseSpecial) {
    return checkRequest(this.engine.tokenize(text, addSpecial, parseSpecial)).tokens;
  }

  detokenize(ids) {
    return checkRequest(this.engine.detokenize(ids)).text;
  }

  // Runs one generation; onText(piece) for each piece as it is produced.
  // Returns the stats; throws AbortError once signal is aborted.
  async generate(prompt, options, onText, signal) {
    checkRequest(this.engine.startGeneration(prompt, options));
    const tasksBefore = this.engine.threadTasksRun();
    for (;;) {
      if (signal.aborted) {
        const { text } = this.engine.cancel();
        if (text) onText(text);
        throw new AbortError('generation was aborted');
      }
      const step = this.engine.step();
      const { more, text, stats } = step;
      if (text) onText(text);
      if (!more) {
        checkRequest(step);  // a generation can fail midway (no token could continue its grammar)
        return { ...stats, threadsUsed: this.#threadsUsedSince(tasksBefore) };
      }
      await this.platform.yieldToEventLoop();
    }
  }

  // The tokens the cache holds and their state, as a saved state's bytes
  // (cpp/engine/state_file.h): copied out of the heap piece by piece.
  saveState() {
    const { size, pieces } = checkRequest(this.engine.saveState());
    const heap = this.module.WasmEngine.heapView(0, 0).buffer;  // nothing allocates while it is read
    const out = new Uint8Array(size);
    let at = 0;
    for (let i = 0; i < pieces.length; i += 2) {
      out.set(new Uint8Array(heap, pieces[i], pieces[i + 1]), at);
      at += pieces[i + 1];
    }
    return out;
  }

  // Restores a saved state from `bytes` (a Uint8Array), through the heap a
  // chunk at a time. A refused state rejects with code 'bad_state'.
  loadState(bytes) {
    const { WasmEngine } = this.module;
    checkRequest(this.engine.beginLoadState(bytes.length));
    const chunk = Math.min(bytes.length, STATE_CHUNK_BYTES);
    const ptr = WasmEngine.alloc(chunk);
    try {
      for (let at = 0; at < bytes.length; at += chunk) {
        const piece = bytes.subarray(at, at + chunk);
        WasmEngine.heapView(ptr, piece.length).set(piece);
        checkRequest(this.engine.loadStatePiece(ptr, piece.length));
      }
    } finally {
      WasmEngine.free(ptr);
    }
    checkRequest(this.engine.finishLoadState());
  }

  // The speed benchmark (cpp/engine/bench.h): a prefill of `promptTokens`
  // pseudo-random tokens, then `generateTokens` greedy decode steps, in one
  // blocking call. Returns their timings and the threads that ran work.
  bench(promptTokens, generateTokens) {
    const tasksBefore = this.engine.threadTasksRun();
    const { code, message, ...times } = checkRequest(this.engine.bench(promptTokens, generateTokens));
    return { ...times, threadsUsed: this.#threadsUsedSince(tasksBefore) };
  }

  // How many engine threads ran work since the task counts were `before`:
  // counted by each thread itself, so it shows the pthreads really ran.
  #threadsUsedSince(before) {
    return this.engine.threadTasksRun().filter((n, i) => n > before[i]).length;
  }
}

// A load from the cache failed: the copy is dropped and the model downloaded again.
class CachedCopyError extends Error {
  constructor(cache, cause) {
    super(cause.message, { cause });
    this.cache = cache;
  }
}

function checkRequest(status) {
  try {
    return checkStatus(status);
  } catch (error) {
    throw new GenerationError(error.message, { code: error.code, cause: error });
  }
}

// A reader of a source the caller handed over (bytes, a Blob, a stream):
// if it fails, say so with code 'io' (the caller's stream errored, a File
// changed on disk).
function callerSourceReader(reader) {
  return {
    size: reader.size,
    async read(dst) {
      try {
        return await reader.read(dst);
      } catch (error) {
        throw new LoadError(`cannot read the model source: ${error?.message ?? error}`, { code: 'io', cause: error });
      }
    },
    close: () => reader.close(),
  };
}

function throwIfAborted(signal) {
  if (signal.aborted) throw new AbortError('loading was aborted');
}

// `prefix` extended to `want` bytes, or shorter if the reader ends first.
async function readMore(reader, prefix, want) {
  const grown = new Uint8Array(want);
  grown.set(prefix);
  let have = prefix.length;
  while (have < want) {
    const n = await reader.read(grown.subarray(have));
    if (n === 0) return grown.subarray(0, have);
    have += n;
  }
  return grown;
}

async function skip(reader, bytes) {
  const scratch = new Uint8Array(Math.min(Math.max(bytes, 0), 1 << 16));
  while (bytes > 0) {
    const n = await reader.read(scratch.subarray(0, Math.min(bytes, scratch.length)));
    if (n === 0) throw new LoadError('the file ends before its tensor data', { code: 'bad_file' });
    bytes -= n;
  }
}

// Reads the reader to its end (the bytes go to its taps).
async function drain(reader, signal) {
  const scratch = new Uint8Array(1 << 16);
  while ((await reader.read(scratch)) > 0) throwIfAborted(signal);
}
