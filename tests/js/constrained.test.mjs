// Constrained output through the package in Node: for every case (9 JSON
// schemas, the two JSON modes, 3 GBNF grammars), 100 seeded generations on
// stories260K and on a synthetic model with a 49k-token BPE vocabulary; every
// finished output (the grammar or schema complete, stopReason
// 'end_of_generation') must parse and validate (ajv for schemas), and the
// text must be the native CLI's, byte for byte. The native CLI runs once per
// seed, so it checks the first seeds of each case. npm test runs 30 seeds of
// each case, npm run test:full all 100 and the native CLI on every one. Also:
// the options' errors, and chat()/stream().
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Ajv from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LLM } from '../../js/index.js';
import { fullMatrix, runCli } from '../reference/reference.mjs';
import { PROMPT, SAMPLING, SAMPLING_FLAGS, bpeModel, constrainedCases } from './constrained-cases.mjs';
import { modelPath, nativeContinuation, tinyVocabGguf } from './helpers.mjs';

const SEEDS = fullMatrix ? 100 : 30;
const NATIVE_SEEDS = fullMatrix ? SEEDS : 8;

let scratch;
const counts = [];  // {model, case, finished, total}
beforeAll(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-constrained-'));
});
afterAll(() => {
  fs.rmSync(scratch, { recursive: true, force: true });
  console.log(counts.map((c) => `${c.model} | ${c.case} | ${c.finished}/${c.total} finished, all valid`).join('\n'));
});

// stories260K's 512 tokens are short: a JSON object takes 40 to 100 of them.
// rarelyDone: cases whose outputs seldom finish within maxTokens, so their
// check may see none finished (stories260K writes whole stories into the
// keys of a free JSON object, and into 'schema extras'' free properties: 4
// of its 100 seeds finish, none of the first 30).
describe.each([
  {
    model: 'stories260K', file: () => modelPath, maxTokens: 128,
    rarelyDone: ['json_object', ...(fullMatrix ? [] : ['schema extras'])],
  },
  { model: 'synthetic 49k BPE', file: bpeModel, maxTokens: 64, rarelyDone: [] },
])('$model', ({ model, file, maxTokens, rarelyDone }) => {
  let llm;
  let modelFile;
  const ajv = new Ajv({ strict: true });
  beforeAll(async () => {
    modelFile = await file();
    llm = await LLM.load(modelFile, { threads: 1 });
  });
  afterAll(() => llm?.dispose());

  it.each(constrainedCases())(`$name: every finished output of ${SEEDS} seeds is valid, and the native CLI's`, async (c) => {
    let finished = 0;
    for (let seed = 0; seed < SEEDS; seed += 1) {
      let stats;
      const text = await llm.generate(PROMPT, { ...c.options, ...SAMPLING, seed, maxTokens, onStats: (s) => (stats = s) });
      const { stopReason, generatedTokens } = stats;
      if (stopReason === 'end_of_generation') {
        finished += 1;
        expect(() => c.validate(text, ajv), `seed ${seed}: ${JSON.stringify(text)}`).not.toThrow();
      } else {
        expect(stopReason).toBe('max_tokens');
        expect(generatedTokens).toBe(maxTokens);
      }
      if (seed < NATIVE_SEEDS) {
        const flags = [...c.flags(scratch), ...SAMPLING_FLAGS, '--seed', String(seed), '-n', String(maxTokens), '-t', '1'];
        expect(text, `seed ${seed}`).toBe(await nativeContinuation(PROMPT, flags, modelFile));
      }
    }
    counts.push({ model, case: c.name, finished, total: SEEDS });
    // A grammar that never let the model finish would check nothing.
    if (!rarelyDone.includes(c.name)) expect(finished).toBeGreaterThan(0);
  });
});

describe('errors and other entry points', () => {
  let llm;
  beforeAll(async () => {
    llm = await LLM.load(modelPath, { threads: 1 });
  });
  afterAll(() => llm?.dispose());

  it('rejects bad options before anything reaches the engine', async () => {
    await expect(llm.generate(PROMPT, { format: 'yaml' })).rejects.toThrow(TypeError);
    await expect(llm.generate(PROMPT, { format: 'json', grammar: 'root ::= "a"' })).rejects.toThrow(
      'format and grammar exclude each other');
    await expect(llm.generate(PROMPT, { grammar: '' })).rejects.toThrow('grammar must be a non-empty string');
    await expect(llm.generate(PROMPT, { format: { type: 'json_schema', schema: 'string' } })).rejects.toThrow(
      'format.schema must be a JSON schema');
    await expect(llm.generate(PROMPT, { format: { type: 'json_schema', schema: {}, json_schema: {} } })).rejects.toThrow(
      "format has an unknown key 'schema' beside json_schema");
    await expect(llm.generate(PROMPT, { format: { type: 'json_schema', json_schema: { schemas: {} } } })).rejects.toThrow(
      "format.json_schema has an unknown key 'schemas'");
    await expect(llm.generate(PROMPT, { format: { type: 'json_schema', json_schema: { schema: 'string' } } })).rejects.toThrow(
      'format.json_schema.schema must be a JSON schema');
    await expect(llm.generate(PROMPT, { format: { type: 'json_object', schema: {} } })).rejects.toThrow(TypeError);
    const cyclic = { type: 'object' };
    cyclic.properties = { self: cyclic };
    await expect(llm.generate(PROMPT, { format: { type: 'json_schema', schema: cyclic } })).rejects.toThrow(
      'format.schema cannot be written as JSON');
  });

  it('takes OpenAI\'s response_format shapes as the format, with the same output', async () => {
    const schema = { type: 'object', properties: { a: { type: 'integer', minimum: 0, maximum: 9 } }, required: ['a'] };
    const sampled = { seed: 5, maxTokens: 40, temperature: 0.8 };
    const direct = await llm.generate(PROMPT, { ...sampled, format: { type: 'json_schema', schema } });
    expect(await llm.generate(PROMPT, {
      ...sampled, format: { type: 'json_schema', json_schema: { name: 'digit', description: 'a digit', schema, strict: true } },
    })).toBe(direct);
    expect(await llm.generate(PROMPT, { ...sampled, format: { type: 'json_object' } }))
      .toBe(await llm.generate(PROMPT, { ...sampled, format: 'json_object' }));
    // No schema: any JSON value, as OpenAI's json_schema without one.
    expect(await llm.generate(PROMPT, { ...sampled, format: { type: 'json_schema', json_schema: { name: 'any' } } }))
      .toBe(await llm.generate(PROMPT, { ...sampled, format: { type: 'json_schema', schema: true } }));
  });

  it('a bad grammar or an unsupported schema keyword rejects before generating, naming where', async () => {
    const grammar = await llm.generate(PROMPT, { grammar: 'root ::= "a" item\n' }).catch((e) => e);
    expect(grammar).toMatchObject({ name: 'GenerationError', code: 'invalid_argument' });
    expect(grammar.message).toContain("grammar: line 1, column 14: rule 'item' is used but never defined");
    const schema = await llm
      .generate(PROMPT, { format: { type: 'json_schema', schema: { properties: { n: { type: 'number', multipleOf: 3 } } } } })
      .catch((e) => e);
    expect(schema).toMatchObject({ name: 'GenerationError', code: 'invalid_argument' });
    expect(schema.message).toContain("JSON schema at /properties/n: 'multipleOf' is not supported");
    // The model is still usable.
    let stats;
    const options = { grammar: 'root ::= "The end."', maxTokens: 20, onStats: (s) => (stats = s) };
    expect(await llm.generate(PROMPT, options)).toBe('The end.');
    expect(stats.stopReason).toBe('end_of_generation');
  });

  it('a grammar no token of the vocabulary can continue fails the generation midway with a clear error', async () => {
    // A model whose vocabulary has "a" and "b" but no "c" (and no byte tokens).
    const vocab = path.join(scratch, 'tiny-vocab.gguf');
    fs.writeFileSync(vocab, tinyVocabGguf(['<unk>', '<s>', '</s>', 'a', 'b'], [2, 3, 3, 1, 1]));
    const model = path.join(scratch, 'tiny.gguf');
    await runCli(['synth', '--shape', '64x1', '--type', 'f32', '--vocab', vocab, '-o', model]);
    const tiny = await LLM.load(model, { threads: 1 });
    try {
      const error = await tiny.generate('ab', { grammar: 'root ::= "ab" "c"+', maxTokens: 20 }).catch((e) => e);
      expect(error.name).toBe('GenerationError');
      expect(error.message).toContain('grammar: no token of the vocabulary can continue the output after 2 generated tokens');
    } finally {
      await tiny.dispose();
    }
  });

  it('chat() and stream() take the same options', async () => {
    const schema = { type: 'object', properties: { a: { type: 'integer', minimum: 0, maximum: 9 } }, required: ['a'] };
    const format = { type: 'json_schema', schema, name: 'digit', strict: true };
    let stats;
    const onStats = (s) => (stats = s);
    const { content: reply } = await llm.chat([{ role: 'user', content: 'A digit?' }], { format, seed: 3, maxTokens: 40, onStats });
    expect(stats.stopReason).toBe('end_of_generation');
    expect(JSON.parse(reply).a).toBeGreaterThanOrEqual(0);
    let streamed = '';
    for await (const piece of llm.stream(PROMPT, { grammar: 'root ::= [0-9]{3} " apples"', seed: 1, onStats })) {
      streamed += piece;
    }
    expect(streamed).toMatch(/^[0-9]{3} apples$/);
    expect(stats.grammarSeconds).toBeGreaterThan(0);
    expect(stats.grammarSeconds).toBeLessThan(stats.decodeSeconds);
  });
});
