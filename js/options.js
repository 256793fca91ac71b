// The public options: checked and given their defaults in one place, before
// anything crosses to the worker. Undefined generation options are dropped so
// the engine keeps its own defaults. The names and ranges are
// js/option-table.js's.

import { OPTION_TABLE, optionRange } from './option-table.js';

// The numeric generation options, and the integer ones' ranges (the
// engine's; it checks the other numbers itself).
const GENERATE_NUMBERS = OPTION_TABLE.generate.filter((o) => o.type === 'integer' || o.type === 'number');
const GENERATE_INTEGERS = Object.fromEntries(GENERATE_NUMBERS.filter((o) => o.range).map((o) => [o.name, o.range]));

// Throws RangeError unless `value` is an integer in [min, max].
export function checkInteger(name, value, [min, max]) {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
}

// What the worker needs of LLM.generate's options (signal and onToken stay
// here). Without a seed each call draws its own, so sampled text differs
// from call to call; the stats report it, to reproduce one.
export function generateOptions(options) {
  const out = {};
  for (const { name: key } of GENERATE_NUMBERS) {
    if (options[key] === undefined) continue;
    if (typeof options[key] !== 'number' || !Number.isFinite(options[key])) {
      throw new TypeError(`${key} must be a finite number`);
    }
    if (GENERATE_INTEGERS[key]) checkInteger(key, options[key], GENERATE_INTEGERS[key]);
    out[key] = options[key];
  }
  out.seed ??= randomSeed();
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

// A seed from the whole range the engine takes, [0, 2^53 − 1]. Math.random
// where there is no Web Crypto (Node 18 without a flag): a seed is no secret.
export function randomSeed() {
  const [high, low] = globalThis.crypto?.getRandomValues
    ? globalThis.crypto.getRandomValues(new Uint32Array(2))
    : [Math.random() * 2 ** 32, Math.random() * 2 ** 32].map(Math.floor);
  return (high % 2 ** 21) * 2 ** 32 + low;
}

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
  if (format?.type === 'json_object' && Object.keys(format).length === 1) return { kind: 'json_object', text: '' };
  if (format === null || typeof format !== 'object' || format.type !== 'json_schema') {
    throw new TypeError("format must be 'json', 'json_object', { type: 'json_object' }, { type: 'json_schema', schema } "
      + "or OpenAI's { type: 'json_schema', json_schema: { name, schema, strict } }");
  }
  return { kind: 'json_schema', text: schemaText(jsonSchemaFormat(format)) };
}

// {schema, name, strict} of a json_schema format: the schema given directly
// ({type, schema, name, strict}: OpenAI's Responses API shape) or in
// `json_schema` ({type, json_schema: {name, schema, strict, description}}:
// OpenAI's Chat Completions response_format, whose schema may be absent: any JSON).
function jsonSchemaFormat(format) {
  const openAi = 'json_schema' in format;
  const [where, spec, keys] = openAi
    ? ['format.json_schema', format.json_schema, ['name', 'schema', 'strict', 'description']]
    : ['format', format, ['type', 'schema', 'name', 'strict']];
  if (openAi) {
    const other = Object.keys(format).find((key) => key !== 'type' && key !== 'json_schema');
    if (other !== undefined) throw new TypeError(`format has an unknown key '${other}' beside json_schema (it takes type and json_schema)`);
    if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) {
      throw new TypeError('format.json_schema must be { name, schema, strict }');
    }
  }
  for (const key of Object.keys(spec)) {
    if (!keys.includes(key)) throw new TypeError(`${where} has an unknown key '${key}' (it takes ${keys.join(', ')})`);
  }
  const { schema = openAi ? true : undefined, name, strict, description } = spec;
  if (typeof schema !== 'boolean' && (schema === null || typeof schema !== 'object' || Array.isArray(schema))) {
    throw new TypeError(`${where}.schema must be a JSON schema: an object or a boolean`);
  }
  if (name !== undefined && typeof name !== 'string') throw new TypeError(`${where}.name must be a string`);
  if (description !== undefined && typeof description !== 'string') throw new TypeError(`${where}.description must be a string`);
  // OpenAI's null: not given.
  if (strict != null && typeof strict !== 'boolean') throw new TypeError(`${where}.strict must be a boolean`);
  return { schema, where };
}

function schemaText({ schema, where }) {
  try {
    return JSON.stringify(schema);
  } catch (error) {
    throw new TypeError(`${where}.schema cannot be written as JSON: ${error.message}`, { cause: error });
  }
}

// LLM.load's options with defaults applied. defaultThreads: the platform's.
export function loadOptions(options, defaultThreads) {
  const {
    threads = defaultThreads, contextSize = 0, memoryLimit = 0, sha256, cache = true, relaxedSimd = true,
  } = options;
  for (const [name, value] of Object.entries({ threads, contextSize, memoryLimit })) {
    checkInteger(name, value, optionRange('load', name));
  }
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
