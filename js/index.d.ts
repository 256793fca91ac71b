// Types of the wasm-llm API: the same in Node (js/index.js) and in browsers (js/browser.js).
// Where the two differ, the comment says so.

export interface LoadProgress {
  /**
   * 'download': bytes from the network; 'cache': from the download cache (OPFS in
   * browsers, a folder in Node); 'read': from a file, bytes or a stream;
   * 'init': all bytes are in, the engine is setting up; 'done'.
   */
  phase: 'download' | 'cache' | 'read' | 'init' | 'done';
  /** File bytes received so far (of all its files, for a split model). */
  loaded: number;
  /** File size in bytes (all files together), when known. */
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
   * (and its bytes still match the checksum recorded with it). A split model: one per file,
   * in order.
   */
  sha256?: string | readonly string[];
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
  /**
   * The tokenizer file of a llama2.c checkpoint (llama2.c's `tokenizer.bin` format), as any
   * ModelSource: a URL, a path in Node, bytes, a Blob. Absent: a file named `tokenizer.bin` or
   * `tok<vocabulary size>.bin` beside the checkpoint (same folder or URL path), the first that
   * holds exactly the model's tokens. A GGUF model has its own tokenizer: giving one is an error.
   */
  tokenizer?: ModelSource;
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

/**
 * Output valid against a JSON Schema, in the shape of OpenAI's Chat Completions
 * `response_format`: the schema (absent: any JSON value) inside `json_schema`.
 */
export interface ResponseJsonSchemaFormat {
  type: 'json_schema';
  json_schema: {
    /** Informational, as are description and strict (the schema is always enforced). */
    name?: string;
    description?: string;
    schema?: JsonSchema;
    strict?: boolean | null;
  };
}

export interface GenerateOptions {
  /**
   * Tokens to generate at most (default 256). Integer options are range-checked: anything else
   * is a RangeError naming the range.
   */
  maxTokens?: number;
  /** <= 0: greedy. Default 0.8. */
  temperature?: number;
  /** An integer from -2^31 to 2^31 − 1 (any C int, as llama.cpp takes); <= 0: disabled. Default 40. */
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
  /**
   * The draws are a pure function of the seed: an integer from 0 to 2^53 − 1. Default: a new
   * random seed for each call, reported in the stats (`stats.seed`) to repeat a result.
   */
  seed?: number;
  /** Generation ends before any of these strings; they are not part of the output. */
  stop?: string | string[];
  /** Add BOS etc. as the vocabulary asks (default true). */
  addSpecial?: boolean;
  /** Control-token text in the prompt becomes control tokens (default true). */
  parseSpecial?: boolean;
  /**
   * Constrain the output to JSON: 'json' any JSON value, 'json_object' (or OpenAI's
   * `{ type: 'json_object' }`) a JSON object, or a value valid against a JSON Schema (given
   * directly, or in OpenAI's `response_format` shape). Tokens that cannot continue it are never sampled, the
   * end of generation only where the value is complete, and generation ends when nothing can
   * follow. Output cut short by maxTokens is incomplete (stopReason 'max_tokens'). A schema
   * the engine cannot enforce rejects the call before generating, with a GenerationError that
   * names the keyword and where it is in the schema.
   */
  format?: 'json' | 'json_object' | { type: 'json_object' } | JsonSchemaFormat | ResponseJsonSchemaFormat;
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
  /** End the prompt where the assistant's reply begins (default true; always, with tools). */
  addGenerationPrompt?: boolean;
  /** The prompt chat() writes for these tools (ToolOptions). */
  tools?: readonly Tool[];
  toolChoice?: ToolChoice;
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
  role: 'system' | 'user' | 'assistant' | 'tool' | (string & {});
  content: string;
  /** An assistant's tool calls (a ChatReply's); its content may then be ''. */
  toolCalls?: readonly ToolCall[];
  /** A tool message: the id of the call whose result `content` is. */
  toolCallId?: string;
  /** A tool message: the tool's name (found from toolCallId when absent). */
  name?: string;
}

/** A function the model may call: its name, what it does, and a JSON Schema of its arguments. */
export interface FunctionTool {
  /** Letters, digits and punctuation other than quotes, brackets, '=' and ','. */
  name: string;
  description?: string;
  /** An object schema (default: no arguments). The arguments the model writes always validate against it. */
  parameters?: JsonSchema;
}

/** A tool: OpenAI's shape `{ type: 'function', function }`, or the function alone. */
export type Tool = FunctionTool | { type: 'function'; function: FunctionTool };

/**
 * Whether the model may call tools: 'auto' (default: it writes text or calls), 'none' (the
 * tools are described but no call is made or read), 'required' (one or more calls), or
 * exactly one call of this tool (whatever parallelToolCalls says).
 */
export type ToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } } | { name: string };

export interface ToolCall {
  /** The model's id where its format has one (Mistral), else a new one. */
  id: string;
  name: string;
  /** The arguments, valid against the tool's parameters schema. */
  arguments: Record<string, unknown>;
}

/** What chat() resolves to: the assistant's message, to push onto the conversation. */
export interface ChatReply {
  role: 'assistant';
  /**
   * The reply's text: with tools, the text besides the calls ('' when there is none). A call
   * cut short (stopReason 'max_tokens') is in neither content nor toolCalls.
   */
  content: string;
  /** The calls the model made: [] without tools. */
  toolCalls: ToolCall[];
}

/** chat()'s and chatStream()'s options besides generate()'s. */
export interface ToolOptions {
  /**
   * Tools the model may call. They are passed to the model's chat template (`tools`), and the
   * reply is generated under a grammar that allows plain text or calls in the template's
   * format (Qwen/Hermes `<tool_call>`, Llama 3 JSON and `<|python_tag|>`, Mistral
   * `[TOOL_CALLS]`, LFM2, Qwen3-Coder XML, Gemma 4, Granite; templates without tools are told a
   * Hermes-style format), with arguments valid against each tool's schema. Excludes format and
   * grammar.
   */
  tools?: readonly Tool[];
  toolChoice?: ToolChoice;
  /** Allow several calls in one reply, where the format has them (default true). */
  parallelToolCalls?: boolean;
}

export type ChatOptions = GenerateOptions & ToolOptions;

/** chat()'s options with tools given. */
export interface ToolChatOptions extends GenerateOptions, ToolOptions {
  tools: readonly Tool[];
}

/** chatStream()'s return value: the stats and the reply's calls. */
export type ToolChatStats = GenerationStats & { toolCalls: ToolCall[] };

/**
 * What stream() returns: the text as it is produced, for `for await`. Leaving the loop early
 * aborts the generation. The iterator's return value (the `value` of its last result,
 * `done: true`) is the stats.
 */
export interface GenerationStream extends AsyncGenerator<string, GenerationStats, undefined> {
  /**
   * The stats, once the loop has run the generation to its end; rejects as the loop does (an
   * error, or AbortError when the loop is left early). Unobserved, it never reports an
   * unhandled rejection.
   */
  readonly stats: Promise<GenerationStats>;
}

/**
 * What chatStream() returns: the reply's text as it is produced (a tool call's text is not
 * yielded). The iterator returns the stats with the reply's toolCalls.
 */
export interface ChatStream extends AsyncGenerator<string, ToolChatStats, undefined> {
  /** As GenerationStream's. */
  readonly stats: Promise<GenerationStats>;
  /** The whole reply, as chat() resolves to it, once the loop has run the generation to its end. */
  readonly reply: Promise<ChatReply>;
}

/**
 * llm.chat: chat() itself, and `llm.chat.completions.create()`, the OpenAI SDK's and WebLLM's
 * spelling of createChatCompletion().
 */
export interface ChatFunction {
  /**
   * The assistant's reply to the conversation, formatted with the model's chat template:
   * `{ role: 'assistant', content, toolCalls }` (toolCalls [] unless `tools` let the model call some).
   */
  (messages: readonly ChatMessage[], options?: ChatOptions): Promise<ChatReply>;
  readonly completions: { create: LLM['createChatCompletion'] };
}

/** The figures of one generation: `onStats`, a stream's `stats`, or the value a stream returns. */
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
  /** The seed the generation sampled with (the `seed` option, else a random one): pass it to repeat the text. */
  seed: number;
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

export interface EmbedOptions {
  /** L2-normalise each embedding (default true), so a dot product is the cosine similarity. */
  normalize?: boolean;
  /**
   * How the hidden states of a text's tokens make its embedding: their mean, the first
   * token's ([CLS]), the last token's, or a reranker's classification head ('rank': its
   * raw scores). Default: what the model file says (`info.pooling`).
   */
  pooling?: 'mean' | 'cls' | 'last' | 'rank';
  signal?: AbortSignal;
}

export interface RankOptions {
  signal?: AbortSignal;
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
  /** An embedding model with no output layer (BERT and its kin): embed() and rank() only. */
  encoder: boolean;
  /** How embed() pools by default: the file's pooling_type, else 'last' (decoders) or 'mean'. */
  pooling: 'mean' | 'cls' | 'last' | 'rank';
  /** Whether the model has a classification head, so rank() can score documents. */
  reranker: boolean;
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
 * The model: a GGUF file; the first file of a split GGUF model (`NAME-00001-of-00003.gguf`,
 * from a URL or a path: the others are fetched from beside it, in parallel); or a llama2.c
 * checkpoint (`.bin`, with its tokenizer: LoadOptions.tokenizer).
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
  /**
   * Loads a model (a GGUF file, a split GGUF model or a llama2.c checkpoint: ModelSource).
   * Rejects with LoadError or AbortError; a bad argument is a TypeError or RangeError.
   */
  static load(source: ModelSource, options?: LoadOptions): Promise<LLM>;
  /** The download cache: a folder in Node, the origin private file system (OPFS) in browsers. */
  static readonly cache: ModelCache;
  readonly info: Readonly<ModelInfo>;
  /**
   * The continuation of `prompt`. Rejects with AbortError or GenerationError; a bad argument
   * (an unknown option, a value of the wrong type) is a TypeError or RangeError.
   */
  generate(prompt: string, options?: GenerateOptions): Promise<string>;
  /** The continuation as it is produced, with its stats (`stream.stats`). */
  stream(prompt: string, options?: GenerateOptions): GenerationStream;
  /**
   * The assistant's reply to the conversation, formatted with the model's chat template: a
   * ChatReply (with `tools`, onToken gets the content's pieces only).
   */
  readonly chat: ChatFunction;
  /** chat()'s reply as it is produced, with `stream.stats` and `stream.reply`. */
  chatStream(messages: readonly ChatMessage[], options?: ChatOptions): ChatStream;
  /**
   * An OpenAI-style chat completion (OpenAI's API, WebLLM): the ChatCompletion, or with
   * `stream: true` an async iterable of chunks. Rejects with code 'unsupported' for a
   * parameter it has no equivalent for (n > 1, logprobs, ...).
   */
  createChatCompletion(
    request: ChatCompletionRequest & { stream: true }, options?: RequestOptions,
  ): Promise<AsyncIterable<ChatCompletionChunk>>;
  createChatCompletion(
    request: ChatCompletionRequest & { stream?: false | null }, options?: RequestOptions,
  ): Promise<ChatCompletion>;
  createChatCompletion(
    request: ChatCompletionRequest, options?: RequestOptions,
  ): Promise<ChatCompletion | AsyncIterable<ChatCompletionChunk>>;
  /** An OpenAI-style (legacy) text completion of `prompt`, or its chunks with `stream: true`. */
  createCompletion(request: CompletionRequest & { stream: true }, options?: RequestOptions): Promise<AsyncIterable<Completion>>;
  createCompletion(request: CompletionRequest & { stream?: false | null }, options?: RequestOptions): Promise<Completion>;
  createCompletion(request: CompletionRequest, options?: RequestOptions): Promise<Completion | AsyncIterable<Completion>>;
  /** `llm.completions.create()`: createCompletion() as the OpenAI SDK and WebLLM spell it. */
  readonly completions: { create: LLM['createCompletion'] };
  /**
   * OpenAI-style embeddings of `input` (one text or several), pooled and L2-normalized as
   * embed() does by default; `usage` counts each text's tokens as the model evaluated them.
   */
  createEmbedding(request: EmbeddingRequest, options?: RequestOptions): Promise<EmbeddingResponse>;
  /** `llm.embeddings.create()`: createEmbedding() as the OpenAI SDK and WebLLM spell it. */
  readonly embeddings: { create: LLM['createEmbedding'] };
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
  /**
   * The embedding of `input`, or of each text of an array (texts that fit the context
   * share a forward pass). Rejects with AbortError or GenerationError ('context_full' for a
   * text longer than the context).
   */
  embed(input: string, options?: EmbedOptions): Promise<Float32Array>;
  embed(input: readonly string[], options?: EmbedOptions): Promise<Float32Array[]>;
  /**
   * How relevant each document is to `query`, from a reranker (`info.reranker`): a
   * probability in [0, 1] per document, in their order.
   */
  rank(query: string, documents: readonly string[], options?: RankOptions): Promise<number[]>;
  /** Stops the engine worker and frees its memory; pending requests reject. */
  dispose(): Promise<void>;
}

// ---- The OpenAI-style API (createChatCompletion, createCompletion, createEmbedding) ----
// The shapes of OpenAI's Chat Completions and Completions APIs, as WebLLM also
// takes and returns them. A parameter typed `null` here is accepted only as
// null (or absent): any other value rejects with code 'unsupported'.

/** The second argument of the create calls, as the OpenAI SDK's request options. */
export interface RequestOptions {
  /** Aborts the request: it rejects (or the stream throws) with AbortError. */
  signal?: AbortSignal;
}

export interface ChatCompletionContentPartText {
  type: 'text';
  text: string;
}

export type ChatCompletionMessageParam =
  | { role: 'system' | 'developer'; content: string | ChatCompletionContentPartText[] }
  | { role: 'user'; content: string | ChatCompletionContentPartText[] }
  | {
      role: 'assistant';
      content?: string | ChatCompletionContentPartText[] | null;
      tool_calls?: ChatCompletionMessageToolCall[];
      refusal?: null;
    }
  | { role: 'tool'; content: string | ChatCompletionContentPartText[]; tool_call_id: string; name?: string };

export interface ChatCompletionMessageToolCall {
  id: string;
  type: 'function';
  /** arguments: the arguments as JSON text. */
  function: { name: string; arguments: string };
}

export interface ChatCompletionTool {
  type: 'function';
  function: FunctionTool & { strict?: boolean | null };
}

export type ChatCompletionToolChoiceOption =
  | 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };

export type ResponseFormat =
  | { type: 'text' }
  /** WebLLM's spelling of a schema: `schema` as JSON text (or an object). */
  | { type: 'json_object'; schema?: string | JsonSchema }
  | ResponseJsonSchemaFormat
  /** WebLLM's: a GBNF grammar. */
  | { type: 'grammar'; grammar: string };

/** What both kinds of request take. Absent limits and seed differ from generate()'s defaults (below). */
interface CompletionRequestBase {
  /** Informational: the loaded model answers (the response names it). */
  model?: string | null;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean | null } | null;
  /** Default: as many tokens as the context holds. */
  max_tokens?: number | null;
  stop?: string | string[] | null;
  /** Default: a new random seed for each request (OpenAI's behaviour); give one to repeat a result. */
  seed?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  /** llama.cpp's and WebLLM's additions. */
  top_k?: number | null;
  min_p?: number | null;
  repetition_penalty?: number | null;
  frequency_penalty?: number | null;
  presence_penalty?: number | null;
  /** Only 1. */
  n?: 1 | null;
  /** Not supported: only false. */
  logprobs?: false | null;
  top_logprobs?: 0 | null;
  /** Not supported: only an empty object. */
  logit_bias?: Record<string, never> | null;
  /** Informational, not used. */
  user?: string | null;
}

export interface ChatCompletionRequest extends CompletionRequestBase {
  messages: ChatCompletionMessageParam[];
  /** The newer name of max_tokens (give one of them). */
  max_completion_tokens?: number | null;
  /** JSON output (GenerateOptions.format) or a grammar; not with tools. */
  response_format?: ResponseFormat | null;
  tools?: ChatCompletionTool[] | null;
  tool_choice?: ChatCompletionToolChoiceOption | null;
  parallel_tool_calls?: boolean | null;
  /** Not supported: only false. */
  store?: false | null;
  /** Not supported. */
  metadata?: null;
  service_tier?: null;
  modalities?: null;
  audio?: null;
  prediction?: null;
  reasoning_effort?: null;
  web_search_options?: null;
  /** The deprecated form of tools and tool_choice: use those. */
  functions?: null;
  function_call?: null;
}

export interface CompletionRequest extends CompletionRequestBase {
  /** The text to continue (one string, or a list of one). */
  prompt: string | [string];
  /** Not supported: only false, '' and 1. */
  echo?: false | null;
  suffix?: '' | null;
  best_of?: 1 | null;
}

export interface CompletionUsage {
  /** The prompt's tokens, as the engine evaluated them (the template's BOS included). */
  prompt_tokens: number;
  /** The tokens generated (the end-of-generation token not counted). */
  completion_tokens: number;
  total_tokens: number;
}

/** 'stop': the model or a stop string ended it; 'length': max_tokens or the context did; 'tool_calls': it called tools. */
export type FinishReason = 'stop' | 'length' | 'tool_calls';

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  /** Seconds since the epoch. */
  created: number;
  /** The loaded model's name (general.name), or its architecture. */
  model: string;
  choices: [{
    index: 0;
    message: { role: 'assistant'; content: string | null; tool_calls?: ChatCompletionMessageToolCall[] };
    logprobs: null;
    finish_reason: FinishReason;
  }];
  usage: CompletionUsage;
}

/**
 * A streamed chat completion's chunks: the role, the content's pieces, the tool calls (each
 * whole, once the reply is complete), a last chunk with the finish reason, then with
 * `stream_options.include_usage` one with no choices and the usage (null in the others).
 */
export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: {
    index: 0;
    delta: { role?: 'assistant'; content?: string; tool_calls?: (ChatCompletionMessageToolCall & { index: number })[] };
    logprobs: null;
    finish_reason: FinishReason | null;
  }[];
  usage?: CompletionUsage | null;
}

/** A text completion, and each chunk of a streamed one (its text a piece, the last with the finish reason). */
export interface Completion {
  id: string;
  object: 'text_completion';
  created: number;
  model: string;
  choices: { index: 0; text: string; logprobs: null; finish_reason: FinishReason | null }[];
  usage?: CompletionUsage | null;
}

export interface EmbeddingRequest {
  /** The text, or texts, to embed (token-id arrays are not taken). */
  input: string | readonly string[];
  /** Ignored: the loaded model answers. */
  model?: string | null;
  /** 'float' (default): arrays of numbers; 'base64': each vector's float32 bytes, little-endian. */
  encoding_format?: 'float' | 'base64' | null;
  /** Only the model's own embedding size (info.embeddingSize); another is 'unsupported'. */
  dimensions?: number | null;
  user?: string | null;
}

export interface EmbeddingResponse {
  object: 'list';
  data: { object: 'embedding'; index: number; embedding: number[] | string }[];
  /** The loaded model's name (general.name), or its architecture. */
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
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
   * The assistant's reply to `message` (a string is the user's) after the conversation so far,
   * as llm.chat() resolves to it. Turns run one after another, in call order; the message and
   * the reply join the conversation when the reply is complete (a failed or aborted turn
   * leaves it as it was). With `tools`, the reply joins with its calls; send each call's
   * result back as `{ role: 'tool', toolCallId, content }`.
   */
  chat(message: string | ChatMessage, options?: ChatOptions): Promise<ChatReply>;
  /** chat() as llm.chatStream() streams it, with `stream.stats` and `stream.reply`. */
  chatStream(message: string | ChatMessage, options?: ChatOptions): ChatStream;
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
 * - `unsupported`: a valid file whose architecture, tensor type or version the engine lacks; or
 *   an OpenAI-style request parameter it has no equivalent for (n > 1, logprobs, ...).
 * - `sha256_mismatch`: the bytes are not the file the expected sha256 names.
 * - `out_of_memory`: the model and its context do not fit the memory (the 4 GB wasm
 *   memory, or `memoryLimit`).
 * - `context_full`: the prompt does not fit the context.
 * - `bad_state`: loadState() got bytes that are no state of this model fitting its context:
 *   another model's, damaged or truncated ones, or more tokens than the context holds.
 * - `aborted`: the AbortSignal fired, or the consumer of a stream left its loop.
 * - `disposed`: the model was disposed before or while the call ran.
 * - `worker_failed`: the engine worker could not start (its script or the wasm binary did
 *   not load), or it died, or the engine crashed (a wasm trap): that call and every later
 *   one on the model fail this way; load the model again.
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
 * The codes a GenerationError carries (it is also what tokenize, detokenize, bench, embed,
 * rank, saveState and loadState reject with; 'unsupported': generate on an embedding model,
 * rank on a model that is no reranker, an OpenAI-style parameter this engine cannot honour).
 */
export type GenerationErrorCode =
  | 'invalid_argument' | 'context_full' | 'unsupported' | 'bad_state' | 'disposed' | 'worker_failed' | 'internal';

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
