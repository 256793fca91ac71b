// The public options: checked and given their defaults in one place, before
// anything crosses to the worker. Undefined generation options are dropped so
// the engine keeps its own defaults (documented in index.d.ts).

export const INT_MAX = 2 ** 31 - 1;  // the engine's counts are C ints

// The integer generation options and their ranges in the engine.
const GENERATE_INTEGERS = {
  maxTokens: [0, INT_MAX],
  topK: [-INT_MAX - 1, INT_MAX],  // <= 0: disabled
  repeatLastN: [0, 1 << 20],      // Sampler::kMaxPenaltyLastN
  seed: [0, Number.MAX_SAFE_INTEGER],
};
const GENERATE_NUMBERS = [
  ...Object.keys(GENERATE_INTEGERS), 'temperature', 'topP', 'minP', 'repeatPenalty', 'frequencyPenalty', 'presencePenalty',
];

// Throws RangeError unless `value` is an integer in [min, max].
export function checkInteger(name, value, [min, max]) {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
}

// What the worker needs of LLM.generate's options (signal and onToken stay here).
export function generateOptions(options) {
  const out = {};
  for (const key of GENERATE_NUMBERS) {
    if (options[key] === undefined) continue;
    if (typeof options[key] !== 'number' || !Number.isFinite(options[key])) {
      throw new TypeError(`${key} must be a finite number`);
    }
    if (GENERATE_INTEGERS[key]) checkInteger(key, options[key], GENERATE_INTEGERS[key]);
    out[key] = options[key];
  }
  if (options.stop !== undefined) {
    const stop = typeof options.stop === 'string' ? [options.stop] : options.stop;
    if (!Array.isArray(stop) || !stop.every((s) => typeof s === 'string')) {
      throw new TypeError('stop must be a string or an array of strings');
    }
    out.stop = stop;
  }
  for (const key of ['addSpecial', 'parseSpecial', 'cachePrompt']) {
    if (options[key] !== undefined) out[key] = Boolean(options[key]);
  }
  const constraint = outputConstraint(options.format, options.grammar);
  if (constraint) out.constraint = constraint;
  return out;
}

const FORMAT_KEYS = new Set(['type', 'schema', 'name', 'strict']);

// The engine's output constraint {kind, text} for the `format` and `grammar`
// options (the engine compiles it, and names a bad rule or schema keyword).
function outputConstraint(format, grammar) {
  if (format !== undefined && grammar !== undefined) throw new TypeError('format and grammar exclude each other');
  if (grammar !== undefined) {
    if (typeof grammar !== 'string' || grammar.trim() === '') {
      throw new TypeError('grammar must be a non-empty string of GBNF rules');
    }
    return { kind: 'grammar', text: grammar };
  }
  if (format === undefined) return undefined;
  if (format === 'json' || format === 'json_object') return { kind: format, text: '' };
  if (format === null || typeof format !== 'object' || format.type !== 'json_schema') {
    throw new TypeError("format must be 'json', 'json_object' or { type: 'json_schema', schema }");
  }
  for (const key of Object.keys(format)) {
    if (!FORMAT_KEYS.has(key)) {
      throw new TypeError(`format has an unknown key '${key}' (it takes type, schema, name and strict)`);
    }
  }
  const { schema, name, strict } = format;
  if (typeof schema !== 'boolean' && (schema === null || typeof schema !== 'object' || Array.isArray(schema))) {
    throw new TypeError('format.schema must be a JSON schema: an object or a boolean');
  }
  if (name !== undefined && typeof name !== 'string') throw new TypeError('format.name must be a string');
  if (strict !== undefined && typeof strict !== 'boolean') throw new TypeError('format.strict must be a boolean');
  let text;
  try {
    text = JSON.stringify(schema);
  } catch (error) {
    throw new TypeError(`format.schema cannot be written as JSON: ${error.message}`, { cause: error });
  }
  return { kind: 'json_schema', text };
}

// LLM.load's options with defaults applied. defaultThreads: the platform's.
export function loadOptions(options, defaultThreads) {
  const {
    threads = defaultThreads, contextSize = 0, memoryLimit = 0, sha256, cache = true, relaxedSimd = true,
  } = options;
  checkInteger('threads', threads, [1, 256]);
  checkInteger('contextSize', contextSize, [0, INT_MAX]);
  checkInteger('memoryLimit', memoryLimit, [0, Number.MAX_SAFE_INTEGER]);
  // One hash, or one per file of a split model.
  const hashes = sha256 === undefined ? [] : Array.isArray(sha256) ? sha256 : [sha256];
  if (hashes.length === 0 && sha256 !== undefined) throw new TypeError('sha256 must not be an empty array');
  if (!hashes.every((h) => typeof h === 'string' && /^[0-9a-fA-F]{64}$/.test(h))) {
    throw new TypeError('sha256 must be 64 hexadecimal digits (or an array of them, one per file of a split model)');
  }
  if (typeof relaxedSimd !== 'boolean') throw new TypeError('relaxedSimd must be a boolean');
  const lower = hashes.map((h) => h.toLowerCase());
  return {
    threads, contextSize, memoryLimit, sha256: Array.isArray(sha256) ? lower : lower[0],
    cache: cache !== false && cache !== 'none', relaxedSimd,
  };
}
