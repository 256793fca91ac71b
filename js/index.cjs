// CommonJS entry. The package is ES modules. A Node that can require() an ES
// module (20.19 and later, 22.12 and later: process.features.require_module)
// gets the whole API here, the same objects `import` gives:
//   const { LLM, LLMError } = require('wasm-llm');
// An older Node gets LLM.load, which reaches the API through import(), and
// api(), which resolves to all of it; the other names then say so when used.
'use strict';

const api = () => import('./index.js');

if (process.features?.require_module) {
  module.exports = { ...require('./index.js'), api };
} else {
  exports.api = api;
  const needsApi = (name) => () => {
    throw new Error(`wasm-llm: require('wasm-llm').${name} needs Node 20.19, 22.12 or later (require() of an ES module); `
      + `on Node ${process.versions.node}, use (await require('wasm-llm').api()).${name}, or import('wasm-llm')`);
  };
  exports.LLM = Object.freeze(Object.defineProperty({
    load: (source, options) => api().then((m) => m.LLM.load(source, options)),
  }, 'cache', { get: needsApi('LLM.cache') }));
  // Not enumerable: code that lists the exports never trips over them.
  for (const name of ['LLMError', 'LoadError', 'GenerationError', 'AbortError', 'MODELS', 'DEFAULT_MODEL']) {
    Object.defineProperty(exports, name, { get: needsApi(name) });
  }
}
