// CommonJS entry. The package is ES modules; CommonJS code reaches them
// through import(), so LLM.load works the same and the rest of the API is one
// `await wasmLlm.api()` away:
//   const { LLM } = require('wasm-llm');
//   const llm = await LLM.load('stories260K');
'use strict';

const api = () => import('./index.js');

exports.api = api;
exports.LLM = Object.freeze({
  load: (source, options) => api().then((m) => m.LLM.load(source, options)),
});
