// wasm-llm for Node: the public API. The engine runs as WebAssembly in a
// worker thread (node-worker.js), so no call blocks the caller's event loop.
import os from 'node:os';
import { AbortError, GenerationError, LoadError } from './errors.js';
import { describeSource } from './source-description.js';
import { WorkerClient } from './worker-client.js';

export { AbortError, GenerationError, LoadError };

const MAX_DEFAULT_THREADS = 4;

function defaultThreads() {
  const cores = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
  return Math.max(1, Math.min(MAX_DEFAULT_THREADS, cores));
}

export class LLM {
  // source: a file path, an http(s) URL (string or URL), a Buffer /
  // Uint8Array / ArrayBuffer, or a web ReadableStream of bytes.
  // options: {threads, contextSize, memoryLimit, size (of a stream),
  // onProgress({phase, loaded, total}), signal}.
  static async load(source, options = {}) {
    const { threads = defaultThreads(), contextSize = 0, memoryLimit = 0, onProgress, signal } = options;
    if (!Number.isInteger(threads) || threads < 1 || threads > 256) {
      throw new RangeError('threads must be an integer from 1 to 256');
    }
    if (signal?.aborted) throw new AbortError('loading was aborted');
    const { description, transfer } = describeSource(source, options);
    // More than one thread needs the pthreads build (Node always has SharedArrayBuffer).
    const client = await WorkerClient.start(threads > 1 ? 'mt' : 'st', threads);
    try {
      const info = await client.request(
        'load',
        { source: description, options: { contextSize, memoryLimit } },
        { signal, kind: 'load', transfer, onEvent: (msg) => onProgress?.(msg.progress) },
      );
      return new LLM(client, info);
    } catch (error) {
      client.terminate();
      throw error;
    }
  }

  constructor(client, info) {
    this.client = client;
    this.info = Object.freeze(info);
  }

  // Generates a continuation of `prompt` and resolves with its text.
  // options: {maxTokens, temperature, topK, topP, minP, repeatPenalty,
  // repeatLastN, frequencyPenalty, presencePenalty, seed, stop, signal,
  // onToken(piece)}.
  async generate(prompt, options = {}) {
    if (typeof prompt !== 'string') throw new TypeError('prompt must be a string');
    const { signal, onToken, ...rest } = options;
    const generateOptions = normalizeGenerateOptions(rest);
    let text = '';
    await this.client.request(
      'generate',
      { prompt, options: generateOptions },
      {
        signal,
        onEvent: (msg) => {
          text += msg.text;
          onToken?.(msg.text);
        },
      },
    );
    return text;
  }

  // Like generate(), as an async iterator of text pieces. Leaving the loop
  // early aborts the generation.
  async *stream(prompt, options = {}) {
    const pieces = [];
    let wake = null;
    let finished = false;
    let failure = null;
    const stop = new AbortController();
    const signal = options.signal ? anySignal(options.signal, stop.signal) : stop.signal;
    const notify = () => {
      wake?.();
      wake = null;
    };
    const done = this.generate(prompt, {
      ...options,
      signal,
      onToken: (piece) => {
        pieces.push(piece);
        notify();
      },
    }).then(
      () => {
        finished = true;
        notify();
      },
      (error) => {
        finished = true;
        failure = error;
        notify();
      },
    );
    try {
      for (;;) {
        if (pieces.length > 0) yield pieces.shift();
        else if (finished) break;
        else await new Promise((resolve) => (wake = resolve));
      }
      if (failure) throw failure;
    } finally {
      if (!finished) {
        stop.abort();
        await done;
      }
    }
  }

  // Token ids of `text`. addSpecial: add BOS etc. as the vocabulary asks;
  // parseSpecial: control-token text becomes control tokens.
  tokenize(text, { addSpecial = true, parseSpecial = true } = {}) {
    if (typeof text !== 'string') return Promise.reject(new TypeError('text must be a string'));
    return this.client.request('tokenize', { text, addSpecial, parseSpecial });
  }

  detokenize(ids) {
    if (!Array.isArray(ids) && !ArrayBuffer.isView(ids)) {
      return Promise.reject(new TypeError('ids must be an array of token ids'));
    }
    return this.client.request('detokenize', { ids: Array.from(ids) });
  }

  // Stops the worker; pending requests reject, later calls fail.
  async dispose() {
    await this.client.terminate();
  }
}

// Checks the numeric options and drops undefined ones (the engine keeps its defaults).
function normalizeGenerateOptions(options) {
  const numeric = [
    'maxTokens', 'temperature', 'topK', 'topP', 'minP', 'repeatPenalty', 'repeatLastN',
    'frequencyPenalty', 'presencePenalty', 'seed',
  ];
  const out = {};
  for (const key of numeric) {
    if (options[key] === undefined) continue;
    if (typeof options[key] !== 'number' || !Number.isFinite(options[key])) {
      throw new TypeError(`${key} must be a finite number`);
    }
    out[key] = options[key];
  }
  if (options.stop !== undefined) {
    const stop = typeof options.stop === 'string' ? [options.stop] : options.stop;
    if (!Array.isArray(stop) || !stop.every((s) => typeof s === 'string')) {
      throw new TypeError('stop must be a string or an array of strings');
    }
    out.stop = stop;
  }
  for (const key of ['addSpecial', 'parseSpecial']) {
    if (options[key] !== undefined) out[key] = Boolean(options[key]);
  }
  return out;
}

// An AbortSignal that fires when either signal does (AbortSignal.any needs Node 20).
function anySignal(a, b) {
  const controller = new AbortController();
  for (const s of [a, b]) {
    if (s.aborted) controller.abort(s.reason);
    else s.addEventListener('abort', () => controller.abort(s.reason), { once: true });
  }
  return controller.signal;
}
