// Worker side: one wasm instance and the engine in it. Streams a model file
// into the wasm heap (header first, then the tensor data straight into the
// engine's arena) and runs generation step by step, yielding to the event
// loop between steps so an abort message is seen promptly.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { AbortError, ErrorCode, EngineError, GenerationError, LoadError, checkStatus } from './errors.js';
import { openReader } from './sources.js';

const FIRST_PREFIX_BYTES = 1 << 20;  // most GGUF headers fit in 1 MiB
const CHUNK_BYTES = 4 << 20;         // bytes per read into the heap
const UNKNOWN_SIZE = Number.MAX_SAFE_INTEGER;

const require = createRequire(import.meta.url);
const wasmDir = new URL('../dist/wasm/', import.meta.url);

export class EngineHost {
  // variant: 'mt' (pthreads, `threads` workers in the pool) or 'st'.
  static async create(variant, threads) {
    const name = `wasm-llm-${variant}`;
    const factory = require(fileURLToPath(new URL(`${name}.js`, wasmDir)));
    // Node needs the binary passed in: the 3.1.6 glue would fetch() a file path.
    const wasmBinary = fs.readFileSync(new URL(`${name}.wasm`, wasmDir));
    const module = await factory({ wasmBinary, nThreads: threads, printErr: () => {} });
    return new EngineHost(module, threads);
  }

  constructor(module, threads) {
    this.module = module;
    this.threads = threads;
    this.engine = new module.WasmEngine();
    this.loaded = false;
  }

  // Loads the model from `source` (see sources.js). options: {contextSize,
  // memoryLimit}; onProgress({phase, loaded, total}); signal: AbortSignal.
  async load(source, options, onProgress, signal) {
    const reader = await openReader(source, signal);
    try {
      const prefix = await this.#beginLoad(reader, options, onProgress, signal);
      await this.#readData(reader, prefix, onProgress, signal);
      this.#check(this.engine.finishLoad());
      this.loaded = true;
      onProgress({ phase: 'done', loaded: this.#fileEnd(), total: reader.size ?? this.#fileEnd() });
      return this.info();
    } catch (error) {
      if (signal.aborted) throw new AbortError('loading was aborted');
      throw error;
    } finally {
      await reader.close();
    }
  }

  // Grows the header prefix until the engine stops asking for more; returns it.
  async #beginLoad(reader, options, onProgress, signal) {
    const fileSize = reader.size ?? UNKNOWN_SIZE;
    let prefix = new Uint8Array(0);
    let want = Math.min(fileSize, FIRST_PREFIX_BYTES);
    for (;;) {
      prefix = await readMore(reader, prefix, want);
      throwIfAborted(signal);
      onProgress({ phase: 'header', loaded: prefix.length, total: reader.size });
      // A reader that ended early tells the parser the true size, so its
      // message says where the file is truncated.
      const ended = prefix.length < want;
      const status = this.#beginLoadWith(prefix, ended ? prefix.length : fileSize, options);
      if (status.code === ErrorCode.NEED_MORE_DATA && !ended && status.neededBytes > want) {
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
  async #readData(reader, prefix, onProgress, signal) {
    const { WasmEngine } = this.module;
    const offset = this.engine.dataOffset();
    const size = this.engine.dataSize();
    const dest = this.engine.dataDestination();
    const total = reader.size ?? offset + size;
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
        );
      }
      written += n;
      onProgress({ phase: 'weights', loaded: offset + written, total });
    }
  }

  #fileEnd() {
    return this.engine.dataOffset() + this.engine.dataSize();
  }

  #check(status) {
    try {
      checkStatus(status);
    } catch (error) {
      throw new LoadError(`cannot load the model: ${error.message}`, { cause: error });
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
    for (;;) {
      if (signal.aborted) {
        const { text } = this.engine.cancel();
        if (text) onText(text);
        throw new AbortError('generation was aborted');
      }
      const { more, text, stats } = this.engine.step();
      if (text) onText(text);
      if (!more) return stats;
      await yieldToEventLoop();
    }
  }
}

function checkRequest(status) {
  try {
    return checkStatus(status);
  } catch (error) {
    if (error instanceof EngineError) throw new GenerationError(error.message, { cause: error });
    throw error;
  }
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
    if (n === 0) throw new LoadError('the file ends before its tensor data');
    bytes -= n;
  }
}
