// Worker side: one wasm instance and the engine in it. Loads a model (its
// files streamed into the wasm heap by model-loader.js) and runs generation
// step by step, yielding to the event loop between steps so an abort message
// is seen promptly. The same code runs in Node's worker_threads worker and in
// the browser's Web Worker; what differs is passed in: the wasm module,
// readers for platform sources (files, OPFS) and the download cache.
import { AbortError, GenerationError, checkStatus } from '../js/errors.js';
import { DownloadRestartError } from '../js/readers.js';
import { CachedCopyError, ModelLoad } from './model-loader.js';
import { heapAlloc } from './wasm-heap.js';

const MAX_DOWNLOAD_RESTARTS = 2;  // a file that keeps changing fails instead
const STATE_CHUNK_BYTES = 4 << 20;  // bytes of a saved state copied into the heap at a time

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
  // {contextSize, memoryLimit, sha256, tokenizer}; onProgress({phase, loaded,
  // total}); signal: AbortSignal. A cached copy that fails to load or to
  // verify is deleted and the model is downloaded again; a download whose
  // file changed on the server starts over (a few times at most).
  async load(source, options, onProgress, signal) {
    let useCachedCopy = true;
    let restarts = 0;
    try {
      for (;;) {
        try {
          const load = new ModelLoad(this.module, this.engine, this.platform, this.threads, signal, useCachedCopy);
          const loadedFrom = await load.run(source, options, onProgress);
          this.loaded = true;
          return { ...this.info(), loadedFrom };
        } catch (error) {
          if (error instanceof CachedCopyError && useCachedCopy) {
            for (const { cache, url } of error.cached) await cache.delete(url);
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

  // The embeddings of `texts` (Float32Array each); options {pooling, normalize}.
  // A batch of texts takes one forward pass, or several; an abort is seen
  // between passes.
  embed(texts, options, signal) {
    return this.#runEmbeddingJob(() => this.engine.startEmbedding(texts, options), signal);
  }

  // The relevance of each of `documents` to `query` (a reranker): numbers in [0, 1].
  async rank(query, documents, signal) {
    const results = await this.#runEmbeddingJob(() => this.engine.startRanking(query, documents), signal);
    return results.map((scores) => scores[0]);
  }

  async #runEmbeddingJob(start, signal) {
    checkRequest(start());
    for (;;) {
      if (signal.aborted) throw new AbortError('the request was aborted');
      if (!checkRequest(this.engine.embeddingStep()).more) return this.engine.embeddingResults();
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
    const chunk = Math.min(bytes.length, STATE_CHUNK_BYTES);
    const ptr = heapAlloc(WasmEngine, chunk);  // first: failing here leaves the cache as it was
    try {
      checkRequest(this.engine.beginLoadState(bytes.length));
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

function checkRequest(status) {
  try {
    return checkStatus(status);
  } catch (error) {
    throw new GenerationError(error.message, { code: error.code, cause: error });
  }
}
