// Types of the wasm-llm Node API (js/index.js).

export interface LoadProgress {
  /** 'header': reading the GGUF header; 'weights': copying tensor data; 'done'. */
  phase: 'header' | 'weights' | 'done';
  /** File bytes received so far. */
  loaded: number;
  /** File size in bytes, when known. */
  total?: number;
}

export interface LoadOptions {
  /** Engine threads; default min(4, available cores). More than 1 uses the pthreads build. */
  threads?: number;
  /** KV cache positions; 0 or absent: min(training context, 4096). */
  contextSize?: number;
  /** Bytes the model may use in all (weights + KV cache + buffers); 0: no limit. */
  memoryLimit?: number;
  /** Length of a ReadableStream source, if known (checked against the header). */
  size?: number;
  onProgress?: (progress: LoadProgress) => void;
  signal?: AbortSignal;
}

export interface GenerateOptions {
  /** Tokens to generate at most (default 256). */
  maxTokens?: number;
  /** <= 0: greedy. Default 0.8. */
  temperature?: number;
  /** <= 0: disabled. Default 40. */
  topK?: number;
  /** 1: disabled. Default 0.95. */
  topP?: number;
  /** <= 0: disabled. Default 0.05. */
  minP?: number;
  /** 1: disabled (default). */
  repeatPenalty?: number;
  /** Tokens the penalties look back over (default 64). */
  repeatLastN?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  /** The draws are a pure function of the seed (default 0). */
  seed?: number;
  /** Generation ends before any of these strings; they are not part of the output. */
  stop?: string | string[];
  /** Add BOS etc. as the vocabulary asks (default true). */
  addSpecial?: boolean;
  /** Control-token text in the prompt becomes control tokens (default true). */
  parseSpecial?: boolean;
  signal?: AbortSignal;
  /** Called with each piece of text as it is produced. */
  onToken?: (piece: string) => void;
}

export interface MemoryInfo {
  weights: number;
  kvCache: number;
  buffers: number;
  total: number;
}

export interface ModelInfo {
  architecture: 'llama' | 'qwen2';
  name: string;
  vocabSize: number;
  embeddingSize: number;
  layers: number;
  heads: number;
  kvHeads: number;
  headSize: number;
  feedForwardSize: number;
  trainingContext: number;
  contextSize: number;
  threads: number;
  /** Tensor count per type, e.g. { f32: 9, q8_0: 48 }. */
  tensorTypes: Record<string, number>;
  memory: MemoryInfo;
  /** Whether the pthreads build runs the model. */
  threaded: boolean;
}

export type ModelSource = string | URL | ArrayBuffer | ArrayBufferView | ReadableStream<Uint8Array>;

export class LLM {
  /** Loads a GGUF model from a path, an http(s) URL, bytes or a ReadableStream. Rejects with LoadError or AbortError. */
  static load(source: ModelSource, options?: LoadOptions): Promise<LLM>;
  readonly info: Readonly<ModelInfo>;
  /** The continuation of `prompt`. Rejects with AbortError or GenerationError. */
  generate(prompt: string, options?: GenerateOptions): Promise<string>;
  /** The continuation as it is produced; leaving the loop early aborts the generation. */
  stream(prompt: string, options?: GenerateOptions): AsyncGenerator<string, void, undefined>;
  tokenize(text: string, options?: { addSpecial?: boolean; parseSpecial?: boolean }): Promise<number[]>;
  detokenize(ids: readonly number[] | Int32Array | Uint32Array): Promise<string>;
  /** Stops the engine worker; pending requests reject. */
  dispose(): Promise<void>;
}

/** Loading failed; `cause` holds the underlying error, `status` the HTTP status if any. */
export class LoadError extends Error {
  name: 'LoadError';
  status?: number;
}

export class AbortError extends Error {
  name: 'AbortError';
  code: 'ABORT_ERR';
}

export class GenerationError extends Error {
  name: 'GenerationError';
}
