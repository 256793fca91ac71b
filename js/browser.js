// wasm-llm for browsers: the public API, the same as in Node (js/index.js).
// The engine runs as WebAssembly in a module Web Worker
// (worker/browser-worker.js), threaded when the page is cross-origin
// isolated; downloads are cached in OPFS. package.json's "browser" export
// condition points bundlers here.
import { LLM as BaseLLM } from './llm.js';
import { browserPlatform } from './browser/platform.js';

export { AbortError, GenerationError, LLMError, LoadError } from './errors.js';
export { DEFAULT_MODEL, MODELS } from './registry.js';

export class LLM extends BaseLLM {
  static platform = browserPlatform;

  // The download cache in OPFS: {list(), delete(url), clear()}.
  static get cache() {
    return browserPlatform.cache;
  }
}
