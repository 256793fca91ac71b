// The LLM class, the same in Node and in browsers. What differs — how the
// worker starts, what a source can be, where downloads are cached — is the
// `platform` an entry point (index.js for Node, browser.js) attaches:
//   { defaultThreads(), threadsSupported(), startWorker(variant, threads, relaxedSimd) → port,
//     resolveSource(source, options) → {description, transfer}, cache }
import { ChatFormatter } from './chat.js';
import { WorkerClient } from './client.js';
import { AbortError, asInvalidArgument } from './errors.js';
import {
  BENCH_OPTIONS, FORMAT_CHAT_OPTIONS, GENERATE_OPTIONS, LOAD_OPTIONS, SESSION_OPTIONS, STATE_OPTIONS, TOKENIZE_OPTIONS,
  checkOptionNames,
} from './option-names.js';
import { INT_MAX, checkInteger, generateOptions, loadOptions } from './options.js';
import { ChatSession } from './session.js';
import { streamOf } from './stream-of.js';

export class LLM {
  // Loads a GGUF model (see index.d.ts for the sources and options).
  static async load(source, options = {}) {
    const platform = this.platform;
    const opts = checkArguments(() => {
      checkOptionNames(options, LOAD_OPTIONS, 'load');
      return loadOptions(options, platform.defaultThreads());
    });
    const { signal, onProgress } = options;
    throwIfAborted(signal);
    // More than one thread needs the pthreads build (and, in a browser, cross-origin isolation).
    const threads = platform.threadsSupported() ? opts.threads : 1;
    let resolved;
    try {
      resolved = await platform.resolveSource(source, { ...options, ...opts });
    } catch (error) {
      throw asInvalidArgument(error);  // a source of no kind LLM.load takes is a TypeError
    }
    // A registry name brings its own sha256.
    const { description, transfer, sha256 } = resolved;
    throwIfAborted(signal);
    const variant = threads > 1 ? 'mt' : 'st';
    const client = await WorkerClient.start(await platform.startWorker(variant, threads, opts.relaxedSimd), { signal });
    try {
      const info = await client.request(
        'load',
        {
          source: description,
          options: { contextSize: opts.contextSize, memoryLimit: opts.memoryLimit, sha256: opts.sha256 ?? sha256 },
        },
        { signal, kind: 'load', transfer, onEvent: (msg) => onProgress?.(msg.progress) },
      );
      return new this(client, info);
    } catch (error) {
      client.terminate();
      throw error;
    }
  }

  constructor(client, info) {
    this.client = client;
    this.info = Object.freeze(info);
    this.chatFormatter = new ChatFormatter(info);
  }

  // Generates a continuation of `prompt` and resolves with its text.
  async generate(prompt, options = {}) {
    return (await this.#generate(prompt, options)).text;
  }

  // Like generate(), as an async iterator of text pieces; it returns the
  // generation's stats. Leaving the loop early aborts the generation.
  stream(prompt, options = {}) {
    const run = async (onToken, signal) => (await this.#generate(prompt, { ...options, onToken, signal })).stats;
    return streamOf(run, options.signal);
  }

  // Runs one generation: {text, stats}. options.onStats gets the stats
  // before the call resolves.
  async #generate(prompt, options) {
    const engineOptions = checkArguments(() => {
      if (typeof prompt !== 'string') throw new TypeError('prompt must be a string');
      checkOptionNames(options, GENERATE_OPTIONS, 'generate');
      return generateOptions(options);
    });
    const { signal, onToken, onStats } = options;
    let text = '';
    const stats = await this.client.request('generate', { prompt, options: engineOptions }, {
      signal,
      onEvent: (msg) => {
        text += msg.text;
        onToken?.(msg.text);
      },
    });
    onStats?.(stats);
    return { text, stats };
  }

  // The conversation `messages` ([{role, content}]) formatted with the
  // model's chat template, ready for generate() or stream().
  formatChat(messages, options = {}) {
    return checkArguments(() => {
      checkOptionNames(options, FORMAT_CHAT_OPTIONS, 'formatChat');
      return this.chatFormatter.format(messages, { addGenerationPrompt: options.addGenerationPrompt ?? true });
    });
  }

  // The assistant's reply to `messages`; options as generate()'s.
  chat(messages, options = {}) {
    return this.generate(...this.#chatPrompt(messages, options));
  }

  // The reply as an async iterator of text pieces, returning the stats.
  chatStream(messages, options = {}) {
    return this.stream(...this.#chatPrompt(messages, options));
  }

  #chatPrompt(messages, options) {
    const prompt = this.formatChat(messages);
    const { stopStrings } = this.chatFormatter;
    const stop = options.stop === undefined ? [] : [options.stop].flat();
    return [prompt, {
      // Templates that write BOS themselves must not get a second one.
      addSpecial: !this.chatFormatter.startsWithBos(prompt),
      parseSpecial: true,
      ...options,
      ...(stopStrings.length + stop.length > 0 ? { stop: [...stop, ...stopStrings] } : {}),
    }];
  }

  // A conversation that keeps its messages; options.messages: where it
  // starts (e.g. a system message). See session.js.
  session(options = {}) {
    return checkArguments(() => {
      checkOptionNames(options, SESSION_OPTIONS, 'session');
      return new ChatSession(this, options.messages ?? []);
    });
  }

  // The tokens the engine's cache holds and their state, as bytes that
  // loadState() restores, here or in any other build (cpp/engine/state_file.h).
  async saveState(options = {}) {
    checkArguments(() => checkOptionNames(options, STATE_OPTIONS, 'saveState'));
    return this.client.request('saveState', {}, { signal: options.signal });
  }

  // Restores a state saveState() made, of this model: bytes (an ArrayBuffer
  // or a view of one) or a Blob. Rejects with code 'bad_state' if it is not
  // such a state (the cache then holds what it held, or nothing: engine.h).
  async loadState(state, options = {}) {
    checkArguments(() => {
      checkOptionNames(options, STATE_OPTIONS, 'loadState');
      if (!(state instanceof ArrayBuffer || ArrayBuffer.isView(state) || isBlob(state))) {
        throw new TypeError('state must be the bytes saveState() returned: an ArrayBuffer, a view of one, or a Blob');
      }
    });
    const bytes = isBlob(state) ? new Uint8Array(await state.arrayBuffer())
      : state instanceof ArrayBuffer ? new Uint8Array(state)
        : new Uint8Array(state.buffer, state.byteOffset, state.byteLength);
    await this.client.request('loadState', { bytes }, { signal: options.signal });
  }

  // Token ids of `text`. addSpecial: add BOS etc. as the vocabulary asks;
  // parseSpecial: control-token text becomes control tokens.
  async tokenize(text, options = {}) {
    checkArguments(() => {
      if (typeof text !== 'string') throw new TypeError('text must be a string');
      checkOptionNames(options, TOKENIZE_OPTIONS, 'tokenize');
    });
    const { addSpecial = true, parseSpecial = true } = options;
    return this.client.request('tokenize', { text, addSpecial, parseSpecial });
  }

  async detokenize(ids) {
    checkArguments(() => {
      if (!Array.isArray(ids) && !ArrayBuffer.isView(ids)) throw new TypeError('ids must be an array of token ids');
    });
    return this.client.request('detokenize', { ids: Array.from(ids) });
  }

  // The speed benchmark, timed inside the engine as `wasm-llm bench` times it:
  // a prefill of `promptTokens` pseudo-random tokens, then `generateTokens`
  // greedy decode steps (they must fit the context), after a warm-up and
  // repeated while short. Resolves to {promptTokens, generatedTokens,
  // prefillSeconds, decodeSeconds (the median run's), runs, threadsUsed}.
  async bench(options = {}) {
    const { promptTokens, generateTokens } = checkArguments(() => {
      checkOptionNames(options, BENCH_OPTIONS, 'bench');
      for (const name of BENCH_OPTIONS) checkInteger(name, options[name], [1, INT_MAX]);
      return options;
    });
    return this.client.request('bench', { promptTokens, generateTokens });
  }

  // Stops the worker and frees its memory; pending requests reject, later calls fail.
  async dispose() {
    await this.client.terminate();
  }
}

// The value of check(), which checks a call's arguments; a TypeError or
// RangeError it throws gets the code 'invalid_argument'.
function checkArguments(check) {
  try {
    return check();
  } catch (error) {
    throw asInvalidArgument(error);
  }
}

function throwIfAborted(signal) {
  if (signal?.aborted) throw new AbortError('loading was aborted', { cause: signal.reason });
}

function isBlob(value) {
  return typeof Blob !== 'undefined' && value instanceof Blob;
}
