// Types of the wasm-llm API: the same in Node (js/index.js) and in browsers (js/browser.js).
// Where the two differ, the comment says so.

export interface LoadProgress {
  /**
   * 'download': bytes from the network; 'cache': from the download cache (OPFS in
   * browsers, a folder in Node); 'read': from a file, bytes or a stream;
   * 'init': all bytes are in, the engine is setting up; 'done'.
   */
  phase: 'download' | 'cache' | 'read' | 'init' | 'done';
  /** File bytes received so far. */
  loaded: number;
  /** File size in bytes, when known. */
  total?: number;
}

export interface LoadOptions {
  /**
   * Engine threads, 1 to 256. Default: min(4, available cores) in Node; in browsers the
   * same where threads can run, else 1. More than 1 uses the pthreads build.
   * Browsers: threads need a cross-origin isolated page with SharedArrayBuffer and shared
   * WebAssembly memory (WebKit reports isolation without them); elsewhere the page and
   * the worker get the single-thread build and 1 thread, whatever is asked.
   */
  threads?: number;
  /** KV cache positions (an integer up to 2^31 − 1); 0 or absent: min(training context, 4096). */
  contextSize?: number;
  /**
   * Bytes the model may use in all (weights + KV cache + buffers), an integer; 0: what the
   * 4 GB wasm memory has left.
   */
  memoryLimit?: number;
  /**
   * Expected sha256 of the file (hex); checked while it streams in. Registry models bring their
   * own. A cached copy is used only if the sha256 recorded when it was downloaded is this one
   * (and its bytes still match the checksum recorded with it).
   */
  sha256?: string;
  /**
   * Cache downloads (default true): OPFS in browsers, a folder in Node. Browsers without
   * usable OPFS (some private modes) load without caching.
   */
  cache?: boolean;
  /**
   * Use the relaxed-SIMD build where the JS engine runs it (default true): browsers that
   * validate relaxed SIMD (Chromium 114+) and Node 22 and later. It gives the same results,
   * faster (q4_0, q4_K and q6_K weights). false: always the plain SIMD128 build.
   */
  relaxedSimd?: boolean;
  /** Node: the download cache folder (default $WASM_LLM_CACHE, else ~/.cache/wasm-llm). */
  cacheDir?: string;
  /** Node: a folder where registry models are looked for first (default $WASM_LLM_MODELS). */
  modelsDir?: string;
  /** Length of a ReadableStream source, if known (checked against the header). */
  size?: number;
  /** If it throws, the load stops and rejects with what it threw. */
  onProgress?: (progress: LoadProgress) => void;
  /**
   * Aborts the load at any stage (the engine worker's start, which fetches and compiles the wasm
   * binary; the download; reading into memory): load() then rejects with AbortError.
   */
  signal?: AbortSignal;
}

/**
 * A JSON Schema: an object, or a boolean (true: any value). Supported keywords (anything else
 * is an error, never ignored): type, enum, const; properties, required, additionalProperties
 * (absent means false when properties are given); items, minItems, maxItems; minLength,
 * maxLength, pattern, format (date, time, date-time, uuid); minimum, maximum,
 * exclusiveMinimum, exclusiveMaximum; anyOf, oneOf (with alternatives that differ by type or
 * by const/enum values); $ref into the schema itself ("#/$defs/name"); annotations such as
 * title and description.
 */
export type JsonSchema = boolean | { [keyword: string]: unknown };

/** Output valid against a JSON Schema (the shape of OpenAI's Responses API `text.format`). */
export interface JsonSchemaFormat {
  type: 'json_schema';
  schema: JsonSchema;
  /** A name for the schema; informational. */
  name?: string;
  /** Accepted for compatibility: the schema is always enforced. */
  strict?: boolean;
}

export interface GenerateOptions {
  /**
   * Tokens to generate at most (default 256). Integer options are range-checked: anything else
   * is a RangeError naming the range.
   */
  maxTokens?: number;
  /** <= 0: greedy. Default 0.8. */
  temperature?: number;
  /** An integer; <= 0: disabled. Default 40. */
  topK?: number;
  /** 1: disabled. Default 0.95. */
  topP?: number;
  /** <= 0: disabled. Default 0.05. */
  minP?: number;
  /** 1: disabled (default). */
  repeatPenalty?: number;
  /** Tokens the penalties look back over: 0 to 2^20 (default 64). */
  repeatLastN?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  /** The draws are a pure function of the seed: an integer from 0 to 2^53 − 1 (default 0). */
  seed?: number;
  /** Generation ends before any of these strings; they are not part of the output. */
  stop?: string | string[];
  /** Add BOS etc. as the vocabulary asks (default true). */
  addSpecial?: boolean;
  /** Control-token text in the prompt becomes control tokens (default true). */
  parseSpecial?: boolean;
  /**
   * Constrain the output to JSON: 'json' any JSON value, 'json_object' a JSON object, or a
   * value valid against a JSON Schema. Tokens that cannot continue it are never sampled, the
   * end of generation only where the value is complete, and generation ends when nothing can
   * follow. Output cut short by maxTokens is incomplete (stopReason 'max_tokens'). A schema
   * the engine cannot enforce rejects the call before generating, with a GenerationError that
   * names the keyword and where it is in the schema.
   */
  format?: 'json' | 'json_object' | JsonSchemaFormat;
  /**
   * A GBNF grammar (llama.cpp's format, grammars/README.md): the output must match its `root`
   * rule. Token references (<[id]>, <text>) are not supported. Excludes `format`. A bad
   * grammar rejects the call before generating, naming the line and column.
   */
  grammar?: string;
  /**
   * Reuse the engine's KV cache (default true): the engine keeps the tokens its cache holds,
   * and a prompt that starts with some of them evaluates only the rest (a conversation's new
   * turn, a prompt restored by loadState()). The output is the same, bit for bit, either way;
   * false evaluates the whole prompt (to measure, say). `stats.cachedTokens` says how many
   * prompt tokens were reused.
   */
  cachePrompt?: boolean;
  signal?: AbortSignal;
  /**
   * Called with each piece of text as it is produced. If it throws, the generation stops and
   * rejects with what it threw.
   */
  onToken?: (piece: string) => void;
  /**
   * Called once with the generation's stats when it has finished, before the call resolves
   * (not when it fails or is aborted).
   */
  onStats?: (stats: GenerationStats) => void;
}

export interface TokenizeOptions {
  /** Add BOS etc. as the vocabulary asks (default true). */
  addSpecial?: boolean;
  /** Control-token text becomes control tokens (default true). */
  parseSpecial?: boolean;
}

export interface FormatChatOptions {
  /** End the prompt where the assistant's reply begins (default true). */
  addGenerationPrompt?: boolean;
}

export interface SessionOptions {
  /** The conversation to start from, e.g. a system message (copied). Default: none. */
  messages?: readonly ChatMessage[];
}

export interface StateOptions {
  signal?: AbortSignal;
}

/**
 * A saved state: a Uint8Array over an ArrayBuffer of its own (Uint8Array<ArrayBuffer> in
 * TypeScript 5.7 and later), so it goes wherever bytes go: a file, OPFS, IndexedDB, fetch().
 */
export type StateBytes = ReturnType<Uint8Array['slice']>;

export interface BenchOptions {
  /** Prompt tokens to prefill (pseudo-random ids). */
  promptTokens: number;
  /** Greedy decode steps after the prefill; both must fit the context. */
  generateTokens: number;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | (string & {});
  content: string;
}

/** The figures of one generation: `onStats`, or the value a stream returns. */
export interface GenerationStats {
  promptTokens: number;
  /**
   * Of the prompt's tokens, those the engine's KV cache held already and did not evaluate
   * again (see `cachePrompt`); prefillSeconds is the time of the others.
   */
  cachedTokens: number;
  generatedTokens: number;
  prefillSeconds: number;
  decodeSeconds: number;
  /** Seconds spent masking tokens with the grammar or schema (part of decodeSeconds). */
  grammarSeconds: number;
  /** 'end_of_generation': the model ended, or the grammar or schema was complete. */
  stopReason: 'max_tokens' | 'end_of_generation' | 'stop_string' | 'context_full';
  /** Engine threads that ran work during the generation (each counts its own tasks). */
  threadsUsed: number;
}

export interface BenchResult {
  promptTokens: number;
  generatedTokens: number;
  /** The median of `runs` measured runs, as are decodeSeconds. */
  prefillSeconds: number;
  decodeSeconds: number;
  /** Measured runs: 1 to 5, more while they take under a second in all. */
  runs: number;
  /** Engine threads that ran work during the benchmark. */
  threadsUsed: number;
}

export interface MemoryInfo {
  weights: number;
  /** Sliding-window layers keep only their window (plus a batch) of positions here. */
  kvCache: number;
  buffers: number;
  total: number;
}

export interface ModelInfo {
  /** The GGUF architecture as the engine reports it: 'llama', 'qwen2', 'qwen3', 'gemma3', ... */
  architecture: string;
  name: string;
  vocabSize: number;
  embeddingSize: number;
  layers: number;
  heads: number;
  kvHeads: number;
  headSize: number;
  feedForwardSize: number;
  trainingContext: number;
  /** Positions the sliding-window layers see (Gemma 2 and 3), or 0 when every layer sees the whole context. */
  slidingWindow: number;
  contextSize: number;
  threads: number;
  /** Tensor count per type, e.g. { f32: 9, q8_0: 48 }. */
  tensorTypes: Record<string, number>;
  memory: MemoryInfo;
  /** Whether the pthreads build runs the model (in browsers: only on cross-origin isolated pages). */
  threaded: boolean;
  /**
   * The engine's kernels: 'relaxed' for the relaxed-SIMD build (browsers that run relaxed
   * SIMD and Node 22 and later, unless `relaxedSimd: false`), else 'simd128'. Same results
   * either way.
   */
  kernels: 'relaxed' | 'simd128';
  /** The model's Jinja chat template, or null (then ChatML is used). */
  chatTemplate: string | null;
  bosToken: string;
  eosToken: string;
  /** Where the bytes came from: a download, the download cache, or a local file, bytes or stream. */
  loadedFrom: 'network' | 'cache' | 'local';
}

/**
 * A model name from the registry, a URL (http(s), or 'hf:owner/repo/path/file.gguf'),
 * bytes, a Blob/File, a ReadableStream, or (Node) a file path. In browsers any other
 * string is a URL relative to the page (`new URL(source, location.href)`).
 */
export type ModelSource = string | URL | ArrayBuffer | ArrayBufferView | Blob | ReadableStream<Uint8Array>;

export interface CacheEntry {
  url: string;
  size: number;
  sha256: string;
  /**
   * A fast checksum of the file's bytes (16 hex digits), recorded with sha256 when the
   * entry was written and checked on every load from the cache: a copy whose bytes
   * changed is deleted and downloaded again.
   */
  checksum: string;
  /** Milliseconds since the epoch. */
  savedAt: number;
  /** Node: the file's path. */
  file?: string;
}

export interface ModelCache {
  list(): Promise<CacheEntry[]>;
  /** Resolves to whether there was an entry. */
  delete(url: string): Promise<boolean>;
  clear(): Promise<void>;
}

export class LLM {
  /** Loads a GGUF model. Rejects with LoadError or AbortError; a bad argument is a TypeError or RangeError. */
  static load(source: ModelSource, options?: LoadOptions): Promise<LLM>;
  /** The download cache: a folder in Node, the origin private file system (OPFS) in browsers. */
  static readonly cache: ModelCache;
  readonly info: Readonly<ModelInfo>;
  /**
   * The continuation of `prompt`. Rejects with AbortError or GenerationError; a bad argument
   * (an unknown option, a value of the wrong type) is a TypeError or RangeError.
   */
  generate(prompt: string, options?: GenerateOptions): Promise<string>;
  /**
   * The continuation as it is produced; leaving the loop early aborts the generation. The
   * iterator's return value (the `value` of its last result, `done: true`) is the stats.
   */
  stream(prompt: string, options?: GenerateOptions): AsyncGenerator<string, GenerationStats, undefined>;
  /** The assistant's reply to the conversation, formatted with the model's chat template. */
  chat(messages: readonly ChatMessage[], options?: GenerateOptions): Promise<string>;
  /** chat() as an async iterator of text pieces, returning the stats as stream() does. */
  chatStream(
    messages: readonly ChatMessage[], options?: GenerateOptions,
  ): AsyncGenerator<string, GenerationStats, undefined>;
  /** The prompt text chat() generates from. */
  formatChat(messages: readonly ChatMessage[], options?: FormatChatOptions): string;
  /**
   * A conversation that remembers its messages: each turn costs only its new tokens, as the
   * engine reuses the KV cache of the turns before. Sessions share the model's one cache: a
   * turn after another session's reuses the prefix the two conversations share.
   */
  session(options?: SessionOptions): ChatSession;
  /**
   * The tokens the engine's KV cache holds and their state, as bytes: keep them (a file,
   * OPFS, IndexedDB) and loadState() them later, here or in another build of wasm-llm (native
   * CLI `--prompt-cache` files are the same format), to continue without evaluating those
   * tokens again, with exactly the same results.
   */
  saveState(options?: StateOptions): Promise<StateBytes>;
  /**
   * Restores a state saveState() (or the CLI's `--prompt-cache`) saved from this model. A state
   * of another model, one whose tokens do not fit the context, or damaged or truncated bytes
   * reject with code 'bad_state'; the cache then holds what it held (or, when the damage is
   * found past the state's header, nothing).
   */
  loadState(state: ArrayBuffer | ArrayBufferView | Blob, options?: StateOptions): Promise<void>;
  tokenize(text: string, options?: TokenizeOptions): Promise<number[]>;
  detokenize(ids: readonly number[] | Int32Array | Uint32Array): Promise<string>;
  /**
   * Speed benchmark, timed in the engine as the CLI's `bench` times it: a prefill of
   * `promptTokens` pseudo-random tokens, then `generateTokens` greedy decode steps,
   * after an untimed warm-up, repeated while short (the median run is reported).
   */
  bench(options: BenchOptions): Promise<BenchResult>;
  /** Stops the engine worker and frees its memory; pending requests reject. */
  dispose(): Promise<void>;
}

export interface RegistryModel {
  file: string;
  url: string;
  size: number;
  sha256: string;
  description: string;
}

/** A conversation (LLM.session()). */
export interface ChatSession {
  /** The conversation so far (a copy). */
  readonly messages: ChatMessage[];
  /**
   * The assistant's reply to `message` (a string is the user's) after the conversation so far.
   * Turns run one after another, in call order; the message and the reply join the
   * conversation when the reply is complete (a failed or aborted turn leaves it as it was).
   */
  chat(message: string | ChatMessage, options?: GenerateOptions): Promise<string>;
  /** chat() as an async iterator of text pieces, returning the stats as stream() does. */
  chatStream(
    message: string | ChatMessage, options?: GenerateOptions,
  ): AsyncGenerator<string, GenerationStats, undefined>;
}

/** Models known by name. */
export const MODELS: Readonly<Record<string, RegistryModel>>;
export const DEFAULT_MODEL: string;

/**
 * What went wrong, for code to branch on (`error.code`); the message says it for people.
 * - `invalid_argument`: an argument or option is invalid. Found in JS: a TypeError or
 *   RangeError with this code; found by the engine (e.g. topP above 1, a context larger
 *   than the model's training context): an LLMError.
 * - `not_found`: HTTP 404 or 410, a file that does not exist, a name that is no model.
 * - `http_error`: any other HTTP error status; `status` has it.
 * - `network`: the request failed, or the download broke off and could not be resumed.
 * - `io`: a local file, or a stream or Blob given as the source, could not be read.
 * - `bad_file`: not a GGUF file, or truncated, or inconsistent.
 * - `unsupported`: a valid file whose architecture, tensor type or version the engine lacks.
 * - `sha256_mismatch`: the bytes are not the file the expected sha256 names.
 * - `out_of_memory`: the model and its context do not fit the memory (the 4 GB wasm
 *   memory, or `memoryLimit`).
 * - `context_full`: the prompt does not fit the context.
 * - `bad_state`: loadState() got bytes that are no state of this model fitting its context:
 *   another model's, damaged or truncated ones, or more tokens than the context holds.
 * - `aborted`: the AbortSignal fired, or the consumer of a stream left its loop.
 * - `disposed`: the model was disposed before or while the call ran.
 * - `worker_failed`: the engine worker could not start (its script or the wasm binary did
 *   not load), or it died.
 * - `internal`: a bug in wasm-llm; please report it.
 */
export type ErrorCode =
  | 'invalid_argument'
  | 'not_found'
  | 'http_error'
  | 'network'
  | 'io'
  | 'bad_file'
  | 'unsupported'
  | 'sha256_mismatch'
  | 'out_of_memory'
  | 'context_full'
  | 'bad_state'
  | 'aborted'
  | 'disposed'
  | 'worker_failed'
  | 'internal';

/** The codes a LoadError carries: all but those of a running model, and AbortError's. */
export type LoadErrorCode = Exclude<ErrorCode, 'context_full' | 'bad_state' | 'disposed' | 'aborted'>;

/**
 * The codes a GenerationError carries (it is also what tokenize, detokenize, bench, saveState
 * and loadState reject with).
 */
export type GenerationErrorCode =
  'invalid_argument' | 'context_full' | 'bad_state' | 'disposed' | 'worker_failed' | 'internal';

/** Base class of the errors wasm-llm rejects with. */
export class LLMError extends Error {
  name: 'LLMError' | 'LoadError' | 'AbortError' | 'GenerationError';
  readonly code: ErrorCode;
  /** The underlying error, when there is one (a fetch failure, the engine's status, the abort reason). */
  readonly cause?: unknown;
}

/** Loading failed. `status` is the HTTP status, if there was one. */
export class LoadError extends LLMError {
  name: 'LoadError';
  readonly code: LoadErrorCode;
  readonly status?: number;
}

/**
 * The request was aborted: its AbortSignal fired (`cause` is the signal's reason), or the
 * consumer of a stream left its loop. Named like fetch's AbortError.
 */
export class AbortError extends LLMError {
  name: 'AbortError';
  readonly code: 'aborted';
}

/** A generation, or another request on a loaded model, failed. */
export class GenerationError extends LLMError {
  name: 'GenerationError';
  readonly code: GenerationErrorCode;
}
