// The arguments of llm.embed() and llm.rank(), checked and put in the form
// the engine worker takes (worker/engine-host.js runs each request a forward
// pass at a time, so an abort is seen between passes).
import { EMBED_OPTIONS, RANK_OPTIONS, checkOptionNames } from './option-names.js';

const POOLINGS = ['mean', 'cls', 'last', 'rank'];

// embed(input, {normalize, pooling, signal}): {texts, single, engineOptions, signal}.
export function embedArguments(input, options) {
  checkOptionNames(options, EMBED_OPTIONS, 'embed');
  const single = typeof input === 'string';
  const texts = single ? [input] : input;
  checkStrings(texts, 'input must be a string or an array of strings');
  const { normalize = true, pooling, signal } = options;
  if (typeof normalize !== 'boolean') throw new TypeError('normalize must be a boolean');
  if (pooling !== undefined && !POOLINGS.includes(pooling)) {
    throw new TypeError(`pooling must be one of ${POOLINGS.map((p) => `'${p}'`).join(', ')}`);
  }
  return { texts: [...texts], single, engineOptions: { normalize, pooling }, signal };
}

// rank(query, documents, {signal}): {query, documents, signal}.
export function rankArguments(query, documents, options) {
  checkOptionNames(options, RANK_OPTIONS, 'rank');
  if (typeof query !== 'string') throw new TypeError('query must be a string');
  checkStrings(documents, 'documents must be an array of strings');
  return { query, documents: [...documents], signal: options.signal };
}

function checkStrings(value, message) {
  if (!Array.isArray(value) || !value.every((s) => typeof s === 'string')) throw new TypeError(message);
}
