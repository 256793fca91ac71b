// Types of the CommonJS entry (js/index.cjs): the whole API, as Node 20.19,
// 22.12 and later give it to require() (require of an ES module). The types
// live in the ES module index.d.ts; on an older Node, only LLM.load and api()
// are there (index.cjs).
import type * as Esm from './index.js' with { 'resolution-mode': 'import' };

export type {
  BenchOptions, BenchResult, CacheEntry, ChatMessage, ChatSession, ChatStream, EmbedOptions, ErrorCode,
  FormatChatOptions, GenerateOptions, GenerationErrorCode, GenerationStats, GenerationStream, JsonSchema,
  JsonSchemaFormat, LoadErrorCode, ResponseJsonSchemaFormat, ToolChatOptions, LoadOptions, LoadProgress, MemoryInfo, ModelCache, ModelInfo, ModelSource, RankOptions,
  RegistryModel, SessionOptions, StateBytes, StateOptions, TokenizeOptions,
  ChatFunction, ChatOptions, ChatReply, FunctionTool, Tool, ToolCall, ToolChatStats, ToolChoice, ToolOptions,
  ChatCompletion, ChatCompletionChunk, ChatCompletionContentPartText, ChatCompletionMessageParam,
  ChatCompletionMessageToolCall, ChatCompletionRequest, ChatCompletionTool, ChatCompletionToolChoiceOption, Completion,
  CompletionRequest, CompletionUsage, EmbeddingRequest, EmbeddingResponse, FinishReason, RequestOptions, ResponseFormat,
  /** What LLM.load resolves to (also the type `LLM`). */
  LLM as LLMInstance,
} from './index.js' with { 'resolution-mode': 'import' };

// The classes and constants: each a value and, for the classes, the type of its instances.
export declare const LLM: typeof Esm.LLM;
export type LLM = Esm.LLM;
export declare const LLMError: typeof Esm.LLMError;
export type LLMError = Esm.LLMError;
export declare const LoadError: typeof Esm.LoadError;
export type LoadError = Esm.LoadError;
export declare const GenerationError: typeof Esm.GenerationError;
export type GenerationError = Esm.GenerationError;
export declare const AbortError: typeof Esm.AbortError;
export type AbortError = Esm.AbortError;
export declare const MODELS: typeof Esm.MODELS;
export declare const DEFAULT_MODEL: typeof Esm.DEFAULT_MODEL;

/** The ES module API, through import(): what a Node older than 20.19 (22.12 in 22.x) reaches the API by. */
export declare function api(): Promise<typeof import('./index.js', { with: { 'resolution-mode': 'import' } })>;
