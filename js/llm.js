// The LLM class, the same in Node and in browsers. What differs — how the
// worker starts, what a source can be, where downloads are cached — is the
// `platform` an entry point (index.js for Node, browser.js) attaches:
//   { defaultThreads(), threadsSupported(), startWorker(variant, threads, relaxedSimd) → port,
//     resolveSource(source, options) → {description, transfer}, cache }
import { ChatFormatter } from './chat.js';
import { WorkerClient } from './client.js';
import { embedArguments, rankArguments } from './embed.js';
import { AbortError, asInvalidArgument, checkArguments } from './errors.js';
import {
  BENCH_OPTIONS, CHAT_OPTIONS, FORMAT_CHAT_OPTIONS, GENERATE_OPTIONS, LOAD_OPTIONS, SESSION_OPTIONS, STATE_OPTIONS,
  TOKENIZE_OPTIONS, checkOptionNames,
} from './option-names.js';
import { optionRange } from './option-table.js';
import { checkInteger, generateOptions, loadOptions } from './options.js';
import { createChatCompletion, createCompletion, createEmbedding } from './openai.js';
import { ChatSession } from './session.js';
import { streamOf } from './stream-of.js';
import { ToolChat } from './tool-calls.js';

export class LLM {
  // Loads a model: a GGUF file, the first file of a split GGUF model, or a
  // llama2.c checkpoint (see index.d.ts for the sources and options).
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
    let tokenizer;  // a llama2.c checkpoint's tokenizer file, a source like the model's
    try {
      resolved = await platform.resolveSource(source, { ...options, ...opts });
      if (options.tokenizer !== undefined) {
        tokenizer = await platform.resolveSource(options.tokenizer, { ...options, ...opts, size: undefined });
      }
    } catch (error) {
      throw asInvalidArgument(error);  // a source of no kind LLM.load takes is a TypeError
    }
    // A registry name brings its own sha256.
    const { description, sha256 } = resolved;
    const transfer = [...resolved.transfer, ...(tokenizer?.transfer ?? [])];
    throwIfAborted(signal);
    const variant = threads > 1 ? 'mt' : 'st';
    const client = await startEngineWorker(platform, [variant, threads, opts.relaxedSimd], signal);
    try {
      const info = await client.request(
        'load',
        {
          source: description,
          options: {
            contextSize: opts.contextSize, memoryLimit: opts.memoryLimit, sha256: opts.sha256 ?? sha256,
            tokenizer: tokenizer?.description,
          },
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
    // The OpenAI SDK's and WebLLM's spelling of the OpenAI-style calls.
    this.chat = Object.assign(this.chat.bind(this), {
      completions: { create: (request, options) => this.createChatCompletion(request, options) },
    });
    this.completions = { create: (request, options) => this.createCompletion(request, options) };
    this.embeddings = { create: (request, options) => this.createEmbedding(request, options) };
  }

  // Generates a continuation of `prompt` and resolves with its text.
  async generate(prompt, options = {}) {
    return (await this.#generate(prompt, options)).text;
  }

  // Like generate(), as an async iterator of text pieces; it returns the
  // generation's stats, which stream.stats (a promise) also gives a plain
  // `for await` loop. Leaving the loop early aborts the generation.
  stream(prompt, options = {}) {
    const run = async (onToken, signal) => {
      const { stats } = await this.#generate(prompt, { ...options, onToken, signal });
      return { returns: stats, stats };
    };
    return streamOf(run, options.signal);
  }

  // Runs one generation: {text, stats}. options.onStats gets the stats
  // before the call resolves. constraint: the engine's output constraint
  // for a tool call's grammar (js/tool-calls.js), instead of format/grammar.
  async #generate(prompt, options, constraint = null) {
    const engineOptions = checkArguments(() => {
      if (typeof prompt !== 'string') throw new TypeError('prompt must be a string');
      checkOptionNames(options, GENERATE_OPTIONS, 'generate');
      const engine = generateOptions(options);
      if (constraint && engine.constraint) throw new TypeError('tools exclude format and grammar');
      return constraint ? { ...engine, constraint } : engine;
    });
    const { signal, onToken, onStats } = options;
    let text = '';
    const engineStats = await this.client.request('generate', { prompt, options: engineOptions }, {
      signal,
      onEvent: (msg) => {
        text += msg.text;
        onToken?.(msg.text);
      },
    });
    const stats = { ...engineStats, seed: engineOptions.seed };
    onStats?.(stats);
    return { text, stats };
  }

  // The conversation `messages` ([{role, content}]) formatted with the
  // model's chat template, ready for generate() or stream().
  formatChat(messages, options = {}) {
    return checkArguments(() => {
      checkOptionNames(options, FORMAT_CHAT_OPTIONS, 'formatChat');
      const { tools, toolChoice, addGenerationPrompt = true } = options;
      if (tools !== undefined || toolChoice !== undefined) {
        return new ToolChat(this.chatFormatter, messages, { tools, toolChoice, addGenerationPrompt }).prompt;
      }
      return this.chatFormatter.format(messages, { addGenerationPrompt });
    });
  }

  // The assistant's reply to `messages`, a message to push onto them:
  // {role: 'assistant', content, toolCalls}, toolCalls [] unless `tools`
  // let the model call some (js/tool-calls.js). Options as generate()'s.
  chat(messages, options = {}) {
    return this.#chatTurn(messages, options)(options.onToken, options.signal).then(({ reply }) => reply);
  }

  // The reply's content as an async iterator of text pieces (a tool call's
  // text is not yielded); stream.stats and stream.reply (promises) give the
  // stats and the reply message, and the iterator returns the stats with
  // the reply's toolCalls.
  chatStream(messages, options = {}) {
    const turn = this.#chatTurn(messages, options);
    const run = async (onContent, signal) => {
      const { reply, stats } = await turn(onContent, signal);
      return { returns: { ...stats, toolCalls: reply.toolCalls }, stats, reply };
    };
    return streamOf(run, options.signal, ['stats', 'reply']);
  }

  // A chat turn, to run: (onContent, signal) => Promise<{reply, stats}>.
  // Without tools the prompt is formatted now, so bad messages throw at the
  // call; with tools, when it runs.
  #chatTurn(messages, options) {
    if (usesTools(options)) {
      return (onContent, signal) => this.#toolChat(messages, { ...options, onToken: onContent, signal });
    }
    const [prompt, generate] = this.#chatPrompt(messages, options);
    return async (onToken, signal) => {
      const { text, stats } = await this.#generate(prompt, { ...generate, onToken, signal });
      return { reply: { role: 'assistant', content: text, toolCalls: [] }, stats };
    };
  }

  // A chat turn with tools: {reply, stats}; options.onToken gets the
  // reply's content as it streams.
  async #toolChat(messages, options) {
    const { tools, toolChoice, parallelToolCalls, ...rest } = options;
    const chat = checkArguments(() => {
      checkOptionNames(options, CHAT_OPTIONS, 'chat');
      if (tools === undefined) throw new TypeError('toolChoice and parallelToolCalls need tools');
      return new ToolChat(this.chatFormatter, messages, { tools, toolChoice, parallelToolCalls });
    });
    const filter = chat.contentFilter((piece) => rest.onToken?.(piece));
    const [prompt, generate] = this.#chatPrompt(messages, { ...rest, onToken: (piece) => filter.push(piece) }, chat.prompt);
    const { text, stats } = await this.#generate(prompt, generate, chat.constraint).catch((e) => {
      throw chat.explainError(e);
    });
    return { reply: filter.finish(text), stats };
  }

  #chatPrompt(messages, options, prompt = this.formatChat(messages)) {
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

  // OpenAI-style chat and text completions (js/openai.js): the response
  // object, or with `stream: true` an async iterable of chunks.
  createChatCompletion(request, options) {
    return createChatCompletion(this, request, options);
  }

  createCompletion(request, options) {
    return createCompletion(this, request, options);
  }

  // OpenAI-style embeddings (js/openai.js): {object: 'list', data, model, usage}.
  createEmbedding(request, options) {
    return createEmbedding(this, request, options);
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
      for (const name of BENCH_OPTIONS) checkInteger(name, options[name], optionRange('bench', name));
      return options;
    });
    return this.client.request('bench', { promptTokens, generateTokens });
  }

  // The embedding of a text (a Float32Array), or of each of an array of
  // texts (an array of them). Texts that fit share a forward pass.
  async embed(input, options = {}) {
    const { texts, single, engineOptions, signal } = checkArguments(() => embedArguments(input, options));
    if (texts.length === 0) return [];
    const embeddings = await this.client.request('embed', { texts, options: engineOptions }, { signal });
    return single ? embeddings[0] : embeddings;
  }

  // How relevant each of `documents` is to `query`: numbers in [0, 1] from
  // a reranker, in the documents' order.
  async rank(query, documents, options = {}) {
    const request = checkArguments(() => rankArguments(query, documents, options));
    if (request.documents.length === 0) return [];
    return this.client.request('rank', { query: request.query, documents: request.documents }, { signal: request.signal });
  }

  // Stops the worker and frees its memory; pending requests reject, later calls fail.
  async dispose() {
    await this.client.terminate();
  }
}

// Starts an engine worker (platform.startWorker(...workerArguments)) and
// resolves to the first that is ready. Firefox now and then leaves a worker
// stuck creating its threads' workers, and a slow machine can stall there as
// long (js/client.js), so a stalled worker is not ended: once every worker
// started has stalled, another starts beside them, WORKER_STARTS in all, and
// the first ready is used, the others ended (with a warning if one started
// before it was still stalled). When all WORKER_STARTS have stalled, the load
// fails with that LoadError (code worker_failed); any other error of a worker
// fails it at once.
const WORKER_STARTS = 3;
function startEngineWorker(platform, workerArguments, signal) {
  return new Promise((resolve, reject) => {
    const starts = [];  // {stop: AbortController, stall: ThreadStartError | null}
    let done = false;
    const finish = (winner, settle) => {
      done = true;
      signal?.removeEventListener('abort', onAbort);
      for (const start of starts) if (start !== winner) start.stop.abort();
      // Those started before the winner and stalled still are what the load waited for in vain.
      const stalled = winner ? starts.slice(0, starts.indexOf(winner)).filter((start) => start.stall).length : 0;
      if (stalled > 0) {
        console.warn(`wasm-llm: ended ${stalled} engine worker${stalled === 1 ? '' : 's'} that stalled creating thread workers; `
          + `using another started beside ${stalled === 1 ? 'it' : 'them'}`);
      }
      settle();
    };
    // A worker stalled: if every one has, start another, or give up.
    const onStall = (stall) => {
      if (done || !starts.every((start) => start.stall)) return;
      if (starts.length < WORKER_STARTS) {
        startWorker();
      } else {
        stall.message += ` (tried ${WORKER_STARTS} times)`;
        finish(null, () => reject(stall));
      }
    };
    const startWorker = async () => {
      const start = { stop: new AbortController(), stall: null };
      starts.push(start);
      try {
        const port = await platform.startWorker(...workerArguments);
        const client = await WorkerClient.start(port, {
          signal: start.stop.signal,
          onStall: (stall) => {
            start.stall = stall;
            if (stall) onStall(stall);
          },
        });
        if (done) client.terminate();  // another one was ready in the same turn
        else finish(start, () => resolve(client));
      } catch (error) {
        if (!done) finish(null, () => reject(error));
      }
    };
    const onAbort = () => finish(null, () => reject(new AbortError('loading was aborted', { cause: signal.reason })));
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    else startWorker();
  });
}

// Whether a chat() call asks for tool calls.
function usesTools(options) {
  return options.tools !== undefined || options.toolChoice !== undefined || options.parallelToolCalls !== undefined;
}

function throwIfAborted(signal) {
  if (signal?.aborted) throw new AbortError('loading was aborted', { cause: signal.reason });
}

function isBlob(value) {
  return typeof Blob !== 'undefined' && value instanceof Blob;
}
