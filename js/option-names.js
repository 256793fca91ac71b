// The options each call takes (js/option-table.js declares them), and the
// check that rejects any other: a misspelt option (`max_tokens` for
// maxTokens) would otherwise be ignored without a word.
import { optionNames } from './option-table.js';

export const LOAD_OPTIONS = optionNames('load');
export const GENERATE_OPTIONS = optionNames('generate');
// chat() and chatStream() take generate()'s and these (js/tool-calls.js).
export const TOOL_OPTIONS = optionNames('tools');
export const CHAT_OPTIONS = Object.freeze([...GENERATE_OPTIONS, ...TOOL_OPTIONS]);
export const STATE_OPTIONS = optionNames('state');
export const SESSION_OPTIONS = optionNames('session');

export const TOKENIZE_OPTIONS = optionNames('tokenize');
export const FORMAT_CHAT_OPTIONS = optionNames('formatChat');
export const BENCH_OPTIONS = optionNames('bench');
export const EMBED_OPTIONS = optionNames('embed');
export const RANK_OPTIONS = optionNames('rank');

// The OpenAI-style requests' parameters (js/openai.js), index.d.ts's
// CompletionRequestBase and then ChatCompletionRequest's or CompletionRequest's own.
const COMPLETION_COMMON = [
  'model', 'stream', 'stream_options', 'max_tokens', 'stop', 'seed', 'temperature', 'top_p', 'top_k', 'min_p',
  'repetition_penalty', 'frequency_penalty', 'presence_penalty', 'n', 'logprobs', 'top_logprobs', 'logit_bias', 'user',
];
export const CHAT_COMPLETION_PARAMETERS = Object.freeze([
  ...COMPLETION_COMMON, 'messages', 'max_completion_tokens', 'response_format', 'tools', 'tool_choice',
  'parallel_tool_calls', 'store', 'metadata', 'service_tier', 'modalities', 'audio', 'prediction', 'reasoning_effort',
  'web_search_options', 'functions', 'function_call',
]);
export const COMPLETION_PARAMETERS = Object.freeze([...COMPLETION_COMMON, 'prompt', 'echo', 'suffix', 'best_of']);
// index.d.ts's EmbeddingRequest.
export const EMBEDDING_PARAMETERS = Object.freeze(['input', 'model', 'encoding_format', 'dimensions', 'user']);

// What other libraries (llama.cpp, transformers, wllama) call some of them,
// by normalized name (see normalize).
const OTHER_NAMES = {
  npredict: 'maxTokens', maxnewtokens: 'maxTokens', ntokens: 'maxTokens', temp: 'temperature',
  repetitionpenalty: 'repeatPenalty', penaltylastn: 'repeatLastN', nctx: 'contextSize', contextlength: 'contextSize',
  nthreads: 'threads', abortsignal: 'signal', stopstrings: 'stop', addbos: 'addSpecial',
  responseformat: 'format', jsonschema: 'format', reusecache: 'cachePrompt', promptcache: 'cachePrompt',
};

// Throws a TypeError naming the first option of `options` that is not in
// `known`, with the option meant if it looks like a misspelling of one.
// kind: what the message calls the options, e.g. 'generate' (chat() and
// stream() take generate()'s).
export function checkOptionNames(options, known, kind) {
  if (options === undefined) return;
  if (options === null || typeof options !== 'object') throw new TypeError(`${kind} options must be an object`);
  for (const name of Object.keys(options)) {
    if (known.includes(name)) continue;
    const meant = optionMeant(name, known);
    throw new TypeError(`unknown ${kind} option '${name}'${meant ? ` (did you mean '${meant}'?)` : ''}`);
  }
}

// The known option `name` probably stands for, or undefined: the same name
// in another case or spelling (max_tokens), another library's name for it
// (n_predict), or a typo of up to two letters (temprature).
function optionMeant(name, known) {
  const wanted = normalize(name);
  const alias = OTHER_NAMES[wanted];
  if (alias && known.includes(alias)) return alias;
  let best;
  let bestDistance = 3;
  for (const option of known) {
    const distance = editDistance(wanted, normalize(option));
    if (distance < bestDistance) [best, bestDistance] = [option, distance];
  }
  return best;
}

function normalize(name) {
  return name.toLowerCase().replace(/[_\-\s]/g, '');
}

// Levenshtein distance: the fewest letter insertions, deletions and substitutions from a to b.
function editDistance(a, b) {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[b.length];
}
