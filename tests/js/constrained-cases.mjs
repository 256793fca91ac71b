// The constrained-output cases shared by the Node and browser tests: JSON
// schemas (checked with ajv), JSON modes, and GBNF grammars (each with a
// checker of its own), with the options that pass them to generate() and
// the flags that pass them to the native CLI.
import fs from 'node:fs';
import path from 'node:path';
import { cached, runCli, sharedModels } from '../reference/reference.mjs';

export const PROMPT = 'Once upon a time';

// A small model over the 49k-token StarCoder vocabulary (byte-level BPE).
export function bpeModel() {
  return cached('constrained-64x2-starcoder-q8_0.gguf', (file) =>
    runCli(['synth', '--shape', '64x2', '--type', 'q8_0', '--seed', '5', '--ctx', '256',
      '--vocab', path.join(sharedModels, 'vocab', 'ggml-vocab-starcoder.gguf'), '-o', file]));
}
// Sampling with a seed, as a user would; short outputs keep the suite fast.
export const SAMPLING = { temperature: 1, topK: 40, topP: 0.95, minP: 0.05 };
export const SAMPLING_FLAGS = ['--temp', '1', '--top-k', '40', '--top-p', '0.95', '--min-p', '0.05'];

export const SCHEMAS = {
  person: {
    type: 'object',
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 12 },
      age: { type: 'integer', minimum: 0, maximum: 120 },
      email: { type: 'string', pattern: '^[a-z]{1,8}@[a-z]{1,8}\\.(com|org)$' },
    },
    required: ['name', 'age'],
    additionalProperties: false,
  },
  colors: {
    type: 'array',
    items: { enum: ['red', 'green', 'blue'] },
    minItems: 1,
    maxItems: 4,
  },
  bounds: {
    type: 'object',
    properties: {
      x: { type: 'number', minimum: -1, maximum: 1 },
      y: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 0.5 },
      n: { type: 'integer', minimum: 10, maximum: 99 },
    },
    required: ['x', 'y', 'n'],
  },
  shape: {
    oneOf: [
      {
        type: 'object',
        properties: { kind: { const: 'circle' }, r: { type: 'number', minimum: 0, maximum: 100 } },
        required: ['kind', 'r'],
        additionalProperties: false,
      },
      {
        type: 'object',
        properties: { kind: { const: 'square' }, side: { type: 'integer', minimum: 1, maximum: 9 } },
        required: ['kind', 'side'],
        additionalProperties: false,
      },
    ],
  },
  tree: {
    $ref: '#/$defs/node',
    $defs: {
      node: {
        type: 'object',
        properties: {
          value: { type: 'integer', minimum: 0, maximum: 9 },
          children: { type: 'array', items: { $ref: '#/$defs/node' }, maxItems: 2 },
        },
        required: ['value'],
        additionalProperties: false,
      },
    },
  },
  strings: {
    type: 'object',
    properties: {
      code: { type: 'string', pattern: '^[A-Z]{3}-[0-9]{2,4}$' },
      tag: { type: 'string', minLength: 1, maxLength: 5 },
      note: { type: ['string', 'null'], maxLength: 10 },
    },
    required: ['code', 'tag', 'note'],
    additionalProperties: false,
  },
  extras: {
    type: 'object',
    properties: { id: { type: 'integer', minimum: 1, maximum: 1000 } },
    required: ['id'],
    additionalProperties: { type: 'boolean' },
  },
  flags: {
    type: 'object',
    properties: {
      ok: { type: 'boolean' },
      nothing: { type: 'null' },
      version: { const: 2 },
      level: { enum: ['low', 'high', 3, null] },
    },
    required: ['ok', 'nothing', 'version', 'level'],
    additionalProperties: false,
  },
  mixed: {
    type: 'array',
    items: { anyOf: [{ type: 'integer', minimum: -5, maximum: 5 }, { type: 'string', maxLength: 3 }] },
    maxItems: 5,
  },
};

// A small recursive-descent check for the arithmetic grammar.
function isExpression(text) {
  let i = 0;
  const factor = () => {
    if (text[i] === '(') {
      i += 1;
      if (!expr() || text[i] !== ')') return false;
      i += 1;
      return true;
    }
    const m = /^[0-9]{1,3}/.exec(text.slice(i));
    if (!m) return false;
    i += m[0].length;
    return true;
  };
  const chain = (operand, ops) => {
    if (!operand()) return false;
    while (ops.includes(text[i])) {
      i += 1;
      if (!operand()) return false;
    }
    return true;
  };
  const term = () => chain(factor, '*/');
  const expr = () => chain(term, '+-');
  return expr() && text.slice(i) === '.';
}

export const GRAMMARS = {
  arithmetic: {
    gbnf: [
      'root ::= expr "."',
      'expr ::= term (("+" | "-") term)*',
      'term ::= factor (("*" | "/") factor)*',
      'factor ::= [0-9]{1,3} | "(" expr ")"',
    ].join('\n'),
    check: isExpression,
  },
  list: {
    gbnf: [
      '# a short bulleted list',
      'root ::= ("- " item "\\n"){1,3}',
      'item ::= [a-z] [a-z ]{0,9}',
    ].join('\n'),
    check: (text) => /^(- [a-z][a-z ]{0,9}\n){1,3}$/.test(text),
  },
  record: {
    gbnf: [
      'root ::= "Name: " [A-Z] [a-zé]{1,8} "\\nAge: " [1-9] [0-9]? "\\nMood: " mood "."',
      'mood ::= "happy" | "sad" | "ça va"',
    ].join('\n'),
    check: (text) => /^Name: [A-Z][a-zé]{1,8}\nAge: [1-9][0-9]?\nMood: (happy|sad|ça va)\.$/u.test(text),
  },
};

// Every case: {name, options (for generate), flags(dir) (for the native CLI), validate(text, ajv)}.
export function constrainedCases() {
  const cases = [];
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    cases.push({
      name: `schema ${name}`,
      options: { format: { type: 'json_schema', schema } },
      flags: (dir) => ['--json-schema', writeFile(dir, `${name}.schema.json`, JSON.stringify(schema))],
      validate: (text, ajv) => {
        const validate = ajv.getSchema(name) ?? (ajv.addSchema(schema, name), ajv.getSchema(name));
        const value = JSON.parse(text);
        if (!validate(value)) throw new Error(`${JSON.stringify(value)}: ${ajv.errorsText(validate.errors)}`);
      },
    });
  }
  cases.push({
    name: 'json',
    options: { format: 'json' },
    flags: () => ['--json'],
    validate: (text) => JSON.parse(text),
  });
  cases.push({
    name: 'json_object',
    options: { format: 'json_object' },
    flags: () => ['--json-object'],
    validate: (text) => {
      const value = JSON.parse(text);
      if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`not an object: ${text}`);
    },
  });
  for (const [name, grammar] of Object.entries(GRAMMARS)) {
    cases.push({
      name: `grammar ${name}`,
      options: { grammar: grammar.gbnf },
      flags: (dir) => ['--grammar', writeFile(dir, `${name}.gbnf`, grammar.gbnf)],
      validate: (text) => {
        if (!grammar.check(text)) throw new Error(`does not match the grammar: ${JSON.stringify(text)}`);
      },
    });
  }
  return cases;
}

function writeFile(dir, name, text) {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}
