// wasm-llm for Node: the public API. The engine runs as WebAssembly in a
// worker_threads worker (worker/node-worker.js), so no call blocks the
// caller's event loop. Browsers get js/browser.js (package.json "exports").
import { LLM as BaseLLM } from './llm.js';
import { nodePlatform } from './node/platform.js';

export { AbortError, GenerationError, LLMError, LoadError } from './errors.js';
export { DEFAULT_MODEL, MODELS } from './registry.js';

export class LLM extends BaseLLM {
  static platform = nodePlatform;

  // The download cache: {dir, list(), delete(url), clear()}.
  static get cache() {
    return nodePlatform.cache;
  }
}
