// Types of the CommonJS entry (js/index.cjs).
import type { LLM as EsmLLM, LoadOptions, ModelSource } from './index.js';

/** The full ES module API. */
export declare function api(): Promise<typeof import('./index.js')>;
export declare const LLM: {
  load(source: ModelSource, options?: LoadOptions): Promise<EsmLLM>;
};
export type { GenerateOptions, JsonSchema, JsonSchemaFormat } from './index.js';
