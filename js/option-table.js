// Every public option, declared once: for each call, its options in the
// order index.d.ts lists them. js/option-names.js takes the names from here
// and js/options.js the integer ranges; tests/js/options.test.mjs checks
// index.d.ts, the engine's bindings (cpp/wasm/bindings.cpp), the CLI's
// generate flags (cpp/cli/cmd_generate.cpp) and docs/api.md against it.
//
// An option is {name, type, range, default, engine, cli, doc}:
// - type: 'integer', 'number', 'boolean', 'string', 'strings' (a string or
//   an array of them), 'enum' (one of `values`), 'function', 'signal' (an
//   AbortSignal) or 'object' (anything structured; index.d.ts has its shape);
// - range: [min, max] of an integer, checked before anything reaches the
//   engine (a RangeError naming it); numbers the engine checks itself, and
//   doc says what it takes;
// - default: the value when absent, where it is one value;
// - engine: the key the engine's bindings read it by, where they do;
// - cli: the native CLI's flags for it (`wasm-llm generate`), same range.

export const INT_MIN = -(2 ** 31);
export const INT_MAX = 2 ** 31 - 1;  // the engine's counts are C ints
const SAFE_MAX = Number.MAX_SAFE_INTEGER;  // 2^53 - 1: JS numbers are exact integers up to here
const MAX_PENALTY_LAST_N = 2 ** 20;  // Sampler::kMaxPenaltyLastN

const signal = (doc) => ({ name: 'signal', type: 'signal', doc });
const ADD_SPECIAL = { name: 'addSpecial', type: 'boolean', default: true, engine: 'addSpecial', doc: 'add BOS etc. as the vocabulary asks' };
const PARSE_SPECIAL = { name: 'parseSpecial', type: 'boolean', default: true, engine: 'parseSpecial', doc: 'control-token text becomes control tokens' };
const TOOLS = { name: 'tools', type: 'object', doc: 'tools the model may call, described to it by its chat template' };
const TOOL_CHOICE = { name: 'toolChoice', type: 'object', default: 'auto', doc: "'auto', 'none', 'required' or one named tool" };

export const OPTION_TABLE = Object.freeze({
  load: [
    { name: 'threads', type: 'integer', range: [1, 256], engine: 'threads', doc: 'engine threads; default min(4, cores)' },
    { name: 'contextSize', type: 'integer', range: [0, INT_MAX], default: 0, engine: 'contextSize', doc: 'KV cache positions; 0: min(training context, 4096)' },
    { name: 'memoryLimit', type: 'integer', range: [0, SAFE_MAX], default: 0, engine: 'memoryLimit', doc: 'bytes the model may use in all; 0: what wasm memory has left' },
    { name: 'sha256', type: 'strings', doc: 'the file\'s expected sha256, or one per file of a split model' },
    { name: 'cache', type: 'boolean', default: true, doc: 'keep downloads in the download cache' },
    { name: 'relaxedSimd', type: 'boolean', default: true, doc: 'use the relaxed-SIMD build where the JS engine runs it' },
    { name: 'cacheDir', type: 'string', doc: 'Node: the download cache folder' },
    { name: 'modelsDir', type: 'string', doc: 'Node: where model names are looked for first' },
    { name: 'size', type: 'integer', doc: 'the length of a ReadableStream source' },
    { name: 'tokenizer', type: 'object', doc: 'a llama2.c checkpoint\'s tokenizer file, as any model source' },
    { name: 'onProgress', type: 'function', doc: 'called with the load\'s progress' },
    signal('aborts the load at any stage'),
  ],
  generate: [
    { name: 'maxTokens', type: 'integer', range: [0, INT_MAX], default: 256, engine: 'maxTokens', cli: ['-n', '--n-predict'], doc: 'tokens to generate at most' },
    { name: 'temperature', type: 'number', default: 0.8, engine: 'temperature', cli: ['--temp'], doc: 'a finite number; 0 or less: greedy' },
    // Any C int, as the sampler (and llama.cpp's) takes: 0 or less turns top-k off.
    { name: 'topK', type: 'integer', range: [INT_MIN, INT_MAX], default: 40, engine: 'topK', cli: ['--top-k'], doc: '0 or less: off' },
    { name: 'topP', type: 'number', default: 0.95, engine: 'topP', cli: ['--top-p'], doc: 'in (0, 1]; 1: off' },
    { name: 'minP', type: 'number', default: 0.05, engine: 'minP', cli: ['--min-p'], doc: 'at most 1; 0 or less: off' },
    { name: 'repeatPenalty', type: 'number', default: 1, engine: 'repeatPenalty', cli: ['--repeat-penalty'], doc: 'above 0; 1: off' },
    { name: 'repeatLastN', type: 'integer', range: [0, MAX_PENALTY_LAST_N], default: 64, engine: 'repeatLastN', cli: ['--repeat-last-n'], doc: 'tokens the penalties look back over' },
    { name: 'frequencyPenalty', type: 'number', default: 0, engine: 'frequencyPenalty', cli: ['--frequency-penalty'], doc: 'subtracted once per earlier use of a token' },
    { name: 'presencePenalty', type: 'number', default: 0, engine: 'presencePenalty', cli: ['--presence-penalty'], doc: 'subtracted from tokens used before' },
    { name: 'seed', type: 'integer', range: [0, SAFE_MAX], engine: 'seed', cli: ['--seed'], doc: 'the draws are a pure function of it; default: a new one per call' },
    { name: 'stop', type: 'strings', engine: 'stop', cli: ['--stop'], doc: 'generation ends before one of these' },
    ADD_SPECIAL,
    PARSE_SPECIAL,
    { name: 'format', type: 'object', engine: 'constraint', doc: 'JSON output, any or valid against a JSON Schema' },
    { name: 'grammar', type: 'string', engine: 'constraint', doc: 'a GBNF grammar the output must match' },
    { name: 'cachePrompt', type: 'boolean', default: true, engine: 'cachePrompt', doc: 'reuse the tokens the KV cache holds' },
    signal('aborts the generation'),
    { name: 'onToken', type: 'function', doc: 'called with each piece of text' },
    { name: 'onStats', type: 'function', doc: 'called once with the generation\'s stats' },
  ],
  // chat()'s and chatStream()'s besides generate()'s.
  tools: [
    TOOLS,
    TOOL_CHOICE,
    { name: 'parallelToolCalls', type: 'boolean', default: true, doc: 'allow several calls in one reply' },
  ],
  tokenize: [ADD_SPECIAL, PARSE_SPECIAL],
  formatChat: [
    { name: 'addGenerationPrompt', type: 'boolean', default: true, doc: 'end the prompt where the reply begins' },
    TOOLS,
    TOOL_CHOICE,
  ],
  bench: [
    { name: 'promptTokens', type: 'integer', range: [1, INT_MAX], engine: 'promptTokens', doc: 'prompt tokens to prefill' },
    { name: 'generateTokens', type: 'integer', range: [1, INT_MAX], engine: 'generateTokens', doc: 'greedy decode steps' },
  ],
  embed: [
    { name: 'normalize', type: 'boolean', default: true, engine: 'normalize', doc: 'L2-normalise each embedding' },
    { name: 'pooling', type: 'enum', values: ['mean', 'cls', 'last', 'rank'], engine: 'pooling', doc: 'how token states make the embedding' },
    signal('aborts between forward passes'),
  ],
  rank: [signal('aborts between forward passes')],
  state: [signal('aborts saving or restoring')],
  session: [{ name: 'messages', type: 'object', doc: 'the conversation to start from' }],
});

// The names of a call's options, in order.
export function optionNames(call) {
  return Object.freeze(OPTION_TABLE[call].map((o) => o.name));
}

// The [min, max] of a call's integer option.
export function optionRange(call, name) {
  const option = OPTION_TABLE[call].find((o) => o.name === name);
  if (!option?.range) throw new Error(`${call} has no integer option ${name}`);
  return option.range;
}
