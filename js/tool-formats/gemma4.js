// Gemma 4's calls: a name and an object whose keys are bare and whose
// strings are quoted by the <|"|> token,
//   <|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3}<tool_call|>
// Its template takes a call's results on the assistant message that made
// it (tool_responses), not as messages of role 'tool'.
import { literal } from '../gbnf.js';
import { repeatCalls } from './grammar.js';
import { parseTagged } from './hermes.js';
import { closing, readJson, skipSpace } from './scan.js';

const OPEN = '<|tool_call>call:';
const CLOSE = '<tool_call|>';
const QUOTE = '<|"|>';
// Keywords that only annotate a schema.
const ANNOTATIONS = new Set(['title', 'description', 'default', 'examples', '$comment', 'deprecated', '$schema', '$id',
  '$defs', 'definitions', 'readOnly', 'writeOnly']);
const NUMBER_KEYWORDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'];

export const gemma4 = {
  name: 'gemma4',
  detect: (source) => source.includes("'<|tool_call>call:'"),
  triggers: ['<|tool_call>'],
  startTriggers: [],
  preservedTokens: ['<|tool_call>', CLOSE, QUOTE],
  parallel: true,

  grammar(g, tools, { parallel }) {
    const calls = tools.map((tool) => {
      const values = new GemmaValues(g, tool);
      return g.rule('call', `${literal(tool.name)} ${values.rule(tool.parameters, '')}`);
    });
    return repeatCalls(g.rule('tagged', `${literal(OPEN)} ( ${calls.join(' | ')} ) ${literal(CLOSE)}`), parallel);
  },

  parse: (text) => parseTagged(text, OPEN, (at) => {
    const name = /^[^{\s]+/.exec(text.slice(at, at + 200));
    const args = name && readValue(text, at + name[0].length);
    if (!args || args.value === null || typeof args.value !== 'object' || Array.isArray(args.value)) return null;
    const end = closing(text, args.end, CLOSE);
    return end < 0 ? null : { calls: [{ name: name[0], arguments: args.value }], end };
  }),

  write: (calls) => calls.map((c) => `${OPEN}${c.name}${writeValue(c.arguments)}${CLOSE}`).join(''),

  // Each assistant message's calls get the results that follow it.
  adaptMessages(messages) {
    const out = [];
    for (const m of messages) {
      const last = out.at(-1);
      if (m.role === 'tool' && last?.tool_calls) {
        const call = last.tool_calls[last.tool_responses?.length ?? 0];
        const response = { name: m.name ?? call?.function.name ?? 'unknown', response: parsedOrText(m.content) };
        last.tool_responses = [...(last.tool_responses ?? []), response];
      } else {
        out.push({ ...m });
      }
    }
    return out;
  },
};

// Grammar rules for Gemma 4 values valid against a tool's schemas: the
// types, enum and const, properties and required, items with minItems and
// maxItems, anyOf/oneOf and $ref into the tool's parameters; numbers go to
// the engine's JSON schema compiler (same syntax, bounds included). Strings
// are written raw: one with minLength or maxLength is counted without '<'
// in it (stricter than the schema, never looser); pattern and format cannot
// be enforced on raw text, and are refused, never ignored.
class GemmaValues {
  #refs = new Map();

  constructor(g, tool) {
    this.g = g;
    this.tool = tool;
  }

  // A rule for values valid against `schema` (at JSON pointer `where`).
  rule(schema, where) {
    if (schema === true || schema === undefined) return this.#any();
    const fail = (what) => {
      throw new TypeError(`tool '${this.tool.name}': the schema at ${where || 'the root'}: ${what} (Gemma 4 writes its own syntax)`);
    };
    if (schema === false || schema === null || typeof schema !== 'object' || Array.isArray(schema)) fail('must be an object');
    if (schema.$ref !== undefined) return this.#ref(schema.$ref, fail);
    const alternatives = schema.anyOf ?? schema.oneOf;
    if (alternatives) return this.g.rule('alt', alternatives.map((s, i) => this.rule(s, `${where}/anyOf/${i}`)).join(' | '));
    const values = schema.enum ?? ('const' in schema ? [schema.const] : null);
    if (values) return this.g.rule('enum', values.map((v) => literal(writeValue(v))).join(' | '));
    const keys = Object.keys(schema).filter((k) => !ANNOTATIONS.has(k));
    if (keys.length === 0) return this.#any();
    const types = [schema.type ?? inferType(schema)].flat();
    return this.g.rule('value', types.map((type) => this.#typed(type, schema, where, fail)).join(' | '));
  }

  #typed(type, schema, where, fail) {
    switch (type) {
      case 'string': {
        const unsupported = ['pattern', 'format'].find((k) => k in schema);
        if (unsupported) fail(`'${unsupported}' cannot be enforced on a raw string`);
        if (schema.minLength === undefined && schema.maxLength === undefined) return this.#string();
        const count = `{${schema.minLength ?? 0},${schema.maxLength ?? ''}}`;
        return this.g.rule('string', `${literal(QUOTE)} [^<]${count} ${literal(QUOTE)}`);
      }
      case 'number':
      case 'integer': {
        const bounds = Object.fromEntries(NUMBER_KEYWORDS.filter((k) => k in schema).map((k) => [k, schema[k]]));
        return this.g.schema('number', { type, ...bounds }, `tool '${this.tool.name}'`);
      }
      case 'boolean': return '( "true" | "false" )';
      case 'null': return '"null"';
      case 'array': {
        const item = this.rule(schema.items, `${where}/items`);
        const min = schema.minItems ?? 0;
        const max = schema.maxItems;
        if (max === 0) return '"[]"';
        const more = `( "," ${item} )${max === undefined ? `{${Math.max(min - 1, 0)},}` : `{${Math.max(min - 1, 0)},${max - 1}}`}`;
        const items = `${item} ${more}`;
        return `"[" ${min > 0 ? items : `( ${items} )?`} "]"`;
      }
      case 'object': {
        const required = new Set(schema.required ?? []);
        const items = Object.entries(schema.properties ?? {}).map(([key, s]) => ({
          expr: this.g.rule('member', `${literal(`${key}:`)} ${this.rule(s, `${where}/properties/${key}`)}`),
          required: required.has(key),
        }));
        return `"{" ${this.g.subsequence(items, '","')} "}"`;
      }
      default: return fail(`type '${type}' is not one of JSON Schema's`);
    }
  }

  #ref(ref, fail) {
    const match = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(ref);
    const target = match && this.tool.parameters[match[1]]?.[match[2]];
    if (!target) fail(`'$ref' ${JSON.stringify(ref)} names nothing in the schema's $defs`);
    if (!this.#refs.has(ref)) {
      // Named before it is built, so a recursive schema refers to itself.
      const name = this.g.name('ref');
      this.#refs.set(ref, name);
      this.g.define(name, this.rule(target, ref.slice(1)));
    }
    return this.#refs.get(ref);
  }

  #string() {
    return this.g.rule('string', `${literal(QUOTE)} ${this.g.textWithout('text', QUOTE)} ${literal(QUOTE)}`);
  }

  // Any value: strings, numbers, booleans, null, lists and objects of them.
  #any() {
    this.anyRule ??= (() => {
      const name = this.g.name('any');
      const key = '[A-Za-z_] [A-Za-z0-9_]*';
      const number = this.g.schema('number', { type: 'number' });
      this.g.define(name, `${this.#string()} | ${number} | "true" | "false" | "null" | ` +
        `"[" ( ${name} ( "," ${name} )* )? "]" | "{" ( ${key} ":" ${name} ( "," ${key} ":" ${name} )* )? "}"`);
      return name;
    })();
    return this.anyRule;
  }
}

// The type a schema's keywords imply, when it names none.
function inferType(schema) {
  if ('properties' in schema || 'required' in schema) return 'object';
  if ('items' in schema || 'minItems' in schema || 'maxItems' in schema) return 'array';
  if (NUMBER_KEYWORDS.some((k) => k in schema)) return 'number';
  return 'string';
}

// A value in Gemma 4's syntax.
function writeValue(value) {
  if (typeof value === 'string') return `${QUOTE}${value}${QUOTE}`;
  if (Array.isArray(value)) return `[${value.map(writeValue).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value).map(([k, v]) => `${k}:${writeValue(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

// The value at text[i] in Gemma 4's syntax: {value, end}, or null.
function readValue(text, i) {
  let at = skipSpace(text, i);
  if (text.startsWith(QUOTE, at)) {
    const end = text.indexOf(QUOTE, at + QUOTE.length);
    return end < 0 ? null : { value: text.slice(at + QUOTE.length, end), end: end + QUOTE.length };
  }
  const open = text[at];
  if (open !== '{' && open !== '[') return readJson(text, at);
  const value = open === '{' ? {} : [];
  at = skipSpace(text, at + 1);
  if (text[at] === (open === '{' ? '}' : ']')) return { value, end: at + 1 };
  for (;;) {
    let key;
    if (open === '{') {
      const k = /^([^:}\s]+)\s*:/.exec(text.slice(at, at + 300));
      if (!k) return null;
      key = k[1];
      at += k[0].length;
    }
    const item = readValue(text, at);
    if (!item) return null;
    if (open === '{') value[key] = item.value;
    else value.push(item.value);
    at = skipSpace(text, item.end);
    if (text[at] === (open === '{' ? '}' : ']')) return { value, end: at + 1 };
    if (text[at] !== ',') return null;
    at += 1;
  }
}

function parsedOrText(content) {
  try {
    return JSON.parse(content);
  } catch {
    return content;
  }
}
