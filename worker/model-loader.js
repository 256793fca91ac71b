// Worker side: streams a model's files into the engine (design-notes §1) —
// the headers from each file's first bytes, then the tensor data straight
// into the engine's arena. A model is one GGUF file; the files of a split
// GGUF model (given the first, the others are found beside it by name and
// read in parallel); or a llama2.c checkpoint and its tokenizer file (the
// `tokenizer` option, else one found beside the checkpoint). The engine says
// what it needs next (cpp/engine/model_layout.h); this file only fetches it.
// Each file is hashed while it streams and, if downloaded, cached on its own.
import { AbortError, LoadError, checkStatus } from '../js/errors.js';
import { DownloadRestartError, blobReader, openUrlReader, streamReader, tapReader } from '../js/readers.js';
import { besideSource, splitFileSource } from './sibling-files.js';
import { heapAlloc } from './wasm-heap.js';

const FIRST_PREFIX_BYTES = 1 << 20;  // most GGUF headers fit in 1 MiB
const CHUNK_BYTES = 4 << 20;         // bytes per read into the heap
const UNKNOWN_SIZE = Number.MAX_SAFE_INTEGER;
const MAX_TOKENIZER_BYTES = 256 << 20;  // a llama2.c tokenizer file is a few MB

// Where the bytes of a load came from, as onProgress's phase names it.
const PHASE = { network: 'download', cache: 'cache', local: 'read' };

// A load from the cache failed: the cached copies it read are dropped and the
// model downloaded again. `cached`: [{cache, url}].
export class CachedCopyError extends Error {
  constructor(cached, cause) {
    super(cause.message, { cause });
    this.cached = cached;
  }
}

export class ModelLoad {
  // module: the instantiated Emscripten module; engine: its WasmEngine;
  // platform: as EngineHost's; useCachedCopy: false after a cached copy failed.
  constructor(module, engine, platform, threads, signal, useCachedCopy) {
    this.module = module;
    this.engine = engine;
    this.platform = platform;
    this.threads = threads;
    this.signal = signal;
    this.useCachedCopy = useCachedCopy;
    this.files = [];        // the model's files (see #openFile), in order
    this.tokenizer = null;  // {file, ptr, length}: a llama2.c tokenizer file, whole, in the heap
    this.reporting = false; // progress events start once the files are known
  }

  // Loads the model described by `source` (js/sources.js). options:
  // {contextSize, memoryLimit, sha256 (one hash, or one per file of a split
  // model), tokenizer (a source description)}. Resolves to where the bytes
  // came from: 'network' | 'cache' | 'local'.
  async run(source, options, onProgress) {
    this.onProgress = onProgress;
    this.sha256 = options.sha256;
    try {
      this.files.push(await this.#openFile(source, firstSha256(options.sha256)));
      await this.#readPrefix(this.files[0], FIRST_PREFIX_BYTES);
      if (options.tokenizer) await this.#readTokenizer(options.tokenizer);
      await this.#beginLoad(options);
      this.#checkSha256Count(this.files.length);
      this.reporting = true;
      this.#progress();
      const ranges = this.engine.dataRanges();
      const rangesOf = (i) => ranges.filter((r) => r.file === i);
      await allOrStop(this.files.map((file, i) => (stop) => this.#readRanges(file, rangesOf(i), stop)));
      for (const file of this.#allFiles()) await this.#verify(file);
      this.#progress('init');
      this.#check(this.engine.finishLoad());
      for (const file of this.#allFiles()) await file.writer?.commit(file.meta);
      this.#progress('done');
      return loadedFrom(this.files);
    } catch (error) {
      for (const file of this.#allFiles()) await file.writer?.discard();
      const cached = this.#allFiles().filter((f) => f.from === 'cache')
        .map((f) => ({ cache: f.cache, url: f.description.url }));
      const restart = error instanceof DownloadRestartError;  // EngineHost starts over, with the cache
      if (cached.length > 0 && this.useCachedCopy && !this.signal.aborted && !restart) {
        throw new CachedCopyError(cached, error);
      }
      throw error;
    } finally {
      await this.#close();
    }
  }

  #allFiles() {
    return [...this.files, this.tokenizer?.file].filter(Boolean);
  }

  // One file as it streams: {description, reader, from, writer?, meta?,
  // cache?, size, prefix (its first bytes, read so far), loaded (bytes read),
  // hashes}. Its bytes are hashed as they pass: with SHA-256 when a hash is
  // expected (unless its cached copy recorded that one) or when the download
  // is being cached (both hashes are then recorded); with the cheap checksum
  // when written to or read from the cache, whose entry it vouches for.
  async #openFile(description, wantSha256) {
    const opened = await this.#open(description);
    const { Sha256, Checksum64 } = this.module;
    const fromCache = opened.from === 'cache';
    const file = {
      ...opened, description, size: opened.reader.size ?? UNKNOWN_SIZE, prefix: new Uint8Array(0), loaded: 0,
      wantSha256: wantSha256 && !(fromCache && opened.meta.sha256 === wantSha256) ? wantSha256 : null,
    };
    file.sha256 = file.wantSha256 || opened.writer ? new Sha256() : null;
    file.checksum = opened.writer || fromCache ? new Checksum64() : null;
    const hashes = [file.sha256, file.checksum].filter(Boolean);
    file.reader = tapReader(opened.reader, (bytes) => {
      file.loaded += bytes.length;
      if (hashes.length > 0) this.#hash(hashes, bytes);
    });
    return file;
  }

  // {reader, from: 'network' | 'cache' | 'local', writer?, meta?, cache?}
  async #open(source) {
    switch (source.kind) {
      case 'url': {
        const cache = source.cache ? await this.platform.cache(source) : null;
        const hit = cache && this.useCachedCopy ? await cache.open(source.url) : null;
        if (hit?.meta.checksum) return { reader: hit.reader, meta: hit.meta, from: 'cache', cache };
        await hit?.reader.close();  // an entry without a checksum cannot be checked: downloaded again
        const reader = await openUrlReader(source.url, this.signal);
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
    const ptr = heapAlloc(WasmEngine, bytes.length);
    try {
      WasmEngine.heapView(ptr, bytes.length).set(bytes);
      for (const hash of hashes) hash.update(ptr, bytes.length);
    } finally {
      WasmEngine.free(ptr);
    }
  }

  // Extends file.prefix to `bytes` (or the file's end). A file that ends
  // early gets its true size, so the parser says where it is truncated.
  async #readPrefix(file, bytes) {
    const want = Math.min(bytes, file.size);
    file.prefix = await readMore(file.reader, file.prefix, want);
    this.#throwIfAborted();
    if (file.prefix.length < want) file.size = file.prefix.length;
  }

  // Calls the engine's beginLoad until it stops asking for more: longer
  // prefixes, the other files of a split model, a tokenizer file found
  // beside a llama2.c checkpoint that came without one.
  async #beginLoad(options) {
    let candidates = null;  // tokenizer file names still to try
    let missing = null;     // the engine's status without a tokenizer
    let rejected = '';      // why the tokenizers tried did not fit
    for (;;) {
      const status = this.#beginLoadWith(options);
      if (status.code === 'need_more_data') {
        if (status.neededFiles > 0 && this.files.length === 1) {
          await this.#openSplitFiles(status.neededFiles);
          continue;
        }
        const file = this.files[status.neededFile];
        const more = file && status.neededBytes > file.prefix.length && file.prefix.length < file.size;
        if (status.neededFiles === 0 && more) {
          await this.#readPrefix(file, status.neededBytes);
          continue;
        }
      }
      if (status.code === 'ok') return;
      // (An argument the bindings refuse comes back with none of the fields below.)
      if (!this.tokenizer && status.tokenizerFiles?.length > 0) {
        missing = status;
        candidates = [...status.tokenizerFiles];
      } else if (status.tokenizerRejected && candidates) {
        rejected += `; ${this.tokenizer.name} beside it does not fit: ${status.message}`;
      } else {
        this.#check(status);
      }
      if (!(await this.#tryTokenizerBeside(candidates))) {
        this.#check({ code: missing.code, message: missing.message + rejected });
      }
    }
  }

  #beginLoadWith(options) {
    const { WasmEngine } = this.module;
    const ptrs = [];
    try {
      const files = this.files.map((file) => {
        const ptr = heapAlloc(WasmEngine, file.prefix.length);
        ptrs.push(ptr);
        WasmEngine.heapView(ptr, file.prefix.length).set(file.prefix);
        return { ptr, length: file.prefix.length, size: file.size };
      });
      return this.engine.beginLoad(files, {
        contextSize: options.contextSize ?? 0,
        threads: this.threads,
        memoryLimit: options.memoryLimit ?? 0,
        tokenizerPtr: this.tokenizer?.ptr ?? 0,
        tokenizerLength: this.tokenizer?.length ?? 0,
      });
    } finally {
      for (const ptr of ptrs) WasmEngine.free(ptr);
    }
  }

  // Opens files 2..count of a split model beside the first, and reads their
  // first bytes, all at once.
  async #openSplitFiles(count) {
    this.#checkSha256Count(count);
    const { splitFileName } = this.module.WasmEngine;
    const first = this.files[0].description;
    const sources = [];
    for (let i = 1; i < count; i++) sources.push(splitFileSource(first, i, count, splitFileName));
    await allOrStop(sources.map((source, k) => async () => {
      const file = await this.#openFile(source, Array.isArray(this.sha256) ? this.sha256[k + 1] : null);
      this.files[k + 1] = file;
      await this.#readPrefix(file, FIRST_PREFIX_BYTES);
    }));
  }

  // A split model takes one sha256 per file.
  #checkSha256Count(count) {
    const hashes = this.sha256;
    if (hashes === undefined || (typeof hashes === 'string' && count === 1)) return;
    if (Array.isArray(hashes) && hashes.length === count) return;
    throw new LoadError(
      `sha256 gives ${Array.isArray(hashes) ? hashes.length : 1} hash(es), but the model is in ${count} file(s): ` +
        'give one per file, in order',
      { code: 'invalid_argument' },
    );
  }

  // Reads the llama2.c tokenizer file `description` whole into the heap.
  async #readTokenizer(description, name = description.url ?? description.path ?? 'the tokenizer') {
    const file = await this.#openFile(description, null);
    this.#dropTokenizer();
    this.tokenizer = { file, name, ptr: 0, length: 0 };
    const chunks = [];
    for (;;) {
      const chunk = new Uint8Array(1 << 16);
      const n = await file.reader.read(chunk);
      this.#throwIfAborted();
      if (n === 0) break;
      chunks.push(chunk.subarray(0, n));
      if (file.loaded > MAX_TOKENIZER_BYTES) {
        throw new LoadError(`${name} is over ${MAX_TOKENIZER_BYTES >> 20} MiB: not a llama2.c tokenizer file`, {
          code: 'bad_file',
        });
      }
    }
    const { WasmEngine } = this.module;
    this.tokenizer.length = file.loaded;
    this.tokenizer.ptr = heapAlloc(WasmEngine, file.loaded);
    let at = 0;
    for (const chunk of chunks) {
      WasmEngine.heapView(this.tokenizer.ptr + at, chunk.length).set(chunk);
      at += chunk.length;
    }
  }

  // Reads the next of `candidates` (tokenizer file names) that exists beside
  // the model; false when none is left.
  async #tryTokenizerBeside(candidates) {
    while (candidates?.length > 0) {
      const name = candidates.shift();
      const source = besideSource(this.files[0].description, name);
      if (!source) return false;
      try {
        await this.#readTokenizer(source, name);
        return true;
      } catch (error) {
        if (error?.code !== 'not_found') throw error;
      }
    }
    return false;
  }

  #dropTokenizer() {
    if (!this.tokenizer) return;
    const { file, ptr } = this.tokenizer;
    this.tokenizer = null;
    this.module.WasmEngine.free(ptr);
    file.writer?.discard();
    file.sha256?.delete();
    file.checksum?.delete();
    file.reader.close();
  }

  // Puts the bytes of `ranges` (this file's, by offset) into the arena: from
  // the prefix where it holds them, the rest read straight into the heap.
  async #readRanges(file, ranges, stop) {
    const { WasmEngine } = this.module;
    const dest = this.engine.dataDestination();
    let position = file.prefix.length;  // where the reader is
    for (const range of ranges) {
      const end = range.fileOffset + range.size;
      let at = range.fileOffset;
      if (at < file.prefix.length) {
        const held = file.prefix.subarray(at, Math.min(file.prefix.length, end));
        WasmEngine.heapView(dest + range.arenaOffset, held.length).set(held);
        at += held.length;
      }
      if (at === end) continue;
      await skip(file.reader, at - position);
      while (at < end) {
        this.#throwIfAborted();
        if (stop.aborted) return;
        // A fresh view per chunk: views die when the memory grows.
        const to = dest + range.arenaOffset + (at - range.fileOffset);
        const view = WasmEngine.heapView(to, Math.min(CHUNK_BYTES, end - at));
        const n = await file.reader.read(view);
        if (n === 0) {
          throw new LoadError(
            `the file is truncated: it ends at byte ${at} but its tensor data goes on to byte ${end}`,
            { code: 'bad_file' },
          );
        }
        at += n;
        this.#progress();
      }
      position = end;
    }
  }

  // Reads the rest of a hashed file (its bytes go to the hashes and the
  // cache), then checks the hashes: the expected sha256, and a cached copy's
  // recorded checksum. Sets the metadata its cache entry is committed with.
  async #verify(file) {
    const { sha256, checksum } = file;
    if (!sha256 && !checksum) return;
    const scratch = new Uint8Array(1 << 16);
    while ((await file.reader.read(scratch)) > 0) this.#throwIfAborted();
    const digest = sha256?.hexDigest();
    const sum = checksum?.hexDigest();
    const index = this.files.indexOf(file);
    const count = this.files.length;
    const which = index < 0 ? `${this.tokenizer.name}: ` : count > 1 ? `file ${index + 1} of ${count}: ` : '';
    if (file.wantSha256 && digest !== file.wantSha256) {
      throw new LoadError(`${which}the file's sha256 is ${digest}, not the expected ${file.wantSha256}`, {
        code: 'sha256_mismatch',
      });
    }
    if (file.from === 'cache' && sum !== file.meta.checksum) {
      const recorded = file.meta.checksum;
      throw new LoadError(`${which}the cached copy is damaged: its checksum is ${sum}, not the recorded ${recorded}`, {
        code: 'bad_file',
      });
    }
    if (file.writer) {
      file.meta = { url: file.description.url, size: file.loaded, sha256: digest, checksum: sum, savedAt: Date.now() };
    }
  }

  // Progress over all the model's files: {phase, loaded, total} (total
  // undefined while a file's size is unknown).
  #progress(phase) {
    if (!this.reporting) return;
    const loaded = this.files.reduce((sum, f) => sum + f.loaded, 0);
    const known = this.files.every((f) => f.size !== UNKNOWN_SIZE);
    const total = known ? this.files.reduce((sum, f) => sum + f.size, 0) : undefined;
    if (phase) this.onProgress({ phase, loaded: total ?? loaded, total: total ?? loaded });
    else this.onProgress({ phase: PHASE[loadedFrom(this.files)], loaded, total });
  }

  #check(status) {
    try {
      checkStatus(status);
    } catch (error) {
      throw new LoadError(`cannot load the model: ${error.message}`, { code: error.code, cause: error });
    }
  }

  #throwIfAborted() {
    if (this.signal.aborted) throw new AbortError('loading was aborted');
  }

  async #close() {
    for (const file of this.#allFiles()) {
      file.sha256?.delete();
      file.checksum?.delete();
      await file.reader.close();
    }
    if (this.tokenizer) this.module.WasmEngine.free(this.tokenizer.ptr);
  }
}

// The sha256 the first file is checked against.
function firstSha256(sha256) {
  return Array.isArray(sha256) ? sha256[0] : sha256;
}

// 'network' if any file was downloaded, else 'cache' if any came from it, else 'local'.
function loadedFrom(files) {
  const from = new Set(files.map((f) => f.from));
  return from.has('network') ? 'network' : from.has('cache') ? 'cache' : 'local';
}

// Runs tasks (each given a stop signal) at once; when one fails, the others
// are told to stop, and once all have settled the first failure is thrown.
async function allOrStop(tasks) {
  const stop = { aborted: false };
  const results = await Promise.allSettled(tasks.map((task) => task(stop).catch((error) => {
    stop.aborted = true;
    throw error;
  })));
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
}

// A reader of a source the caller handed over (bytes, a Blob, a stream):
// if it fails, say so with code 'io' (the caller's stream errored, a File
// changed on disk).
export function callerSourceReader(reader) {
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

// `prefix` extended to `want` bytes, or shorter if the reader ends first.
async function readMore(reader, prefix, want) {
  if (want <= prefix.length) return prefix;
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
