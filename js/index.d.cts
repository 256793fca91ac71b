// Types of the CommonJS entry (js/index.cjs). The API's types live in the ES
// module index.d.ts, which CommonJS reaches through import(), as index.cjs does.
import type { LLM as EsmLLM, LoadOptions, ModelSource } from './index.js' with { 'resolution-mode': 'import' };

// The API's types, for annotations. The classes are ES module values: reach
// them through api(); `error.code` needs no class.
export type {
  AbortError, BenchOptions, BenchResult, CacheEntry, ChatMessage, ChatSession, EmbedOptions, ErrorCode,
  FormatChatOptions, GenerateOptions,
  GenerationError, GenerationErrorCode, GenerationStats, JsonSchema, JsonSchemaFormat, LLMError, LoadError, LoadErrorCode,
  LoadOptions, LoadProgress, MemoryInfo, ModelCache, ModelInfo, ModelSource, RankOptions, RegistryModel,
  SessionOptions, StateBytes, StateOptions, TokenizeOptions,
  ChatFunction, ChatOptions, ChatReply, FunctionTool, Tool, ToolCall, ToolChatStats, ToolChoice, ToolOptions,
  ChatCompletion, ChatCompletionChunk, ChatCompletionContentPartText, ChatCompletionMessageParam,
  ChatCompletionMessageToolCall, ChatCompletionRequest, ChatCompletionTool, ChatCompletionToolChoiceOption, Completion,
  CompletionRequest, CompletionUsage, EmbeddingRequest, EmbeddingResponse, FinishReason, RequestOptions, ResponseFormat,
  /** What LLM.load resolves to. */
  LLM as LLMInstance,
} from './index.js' with { 'resolution-mode': 'import' };

/** The full ES module API. */
export declare function api(): Promise<typeof import('./index.js', { with: { 'resolution-mode': 'import' } })>;
export declare const LLM: {
  load(source: ModelSource, options?: LoadOptions): Promise<EsmLLM>;
};
