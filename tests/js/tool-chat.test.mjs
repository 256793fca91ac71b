// Tool calls generated through the package in Node: on stories260K (no chat
// template: the generic format) and on synthetic models with real chat
// templates (tests/js/chat-templates/) and real vocabularies, one per
// format, many seeds each: with toolChoice 'required' every finished reply
// must be one or more calls of the given tools whose arguments validate
// against the tool's schema (ajv); with 'auto', every call that is read must
// too. Then: a conversation that goes on after a call's result, control
// tokens the format needs (preserved), chatStream(), and the errors.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Ajv from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LLM } from '../../js/index.js';
import { cached, runCli, sharedModels } from '../reference/reference.mjs';
import { modelPath, repoRoot, tinyVocabGguf } from './helpers.mjs';
import { SCHEMAS, TOOLS } from './tool-cases.mjs';

const MESSAGES = [{ role: 'system', content: 'You are a helpful assistant.' }, { role: 'user', content: 'What is the weather in Paris?' }];
const SAMPLING = { temperature: 1, topK: 40, topP: 0.95, minP: 0.05 };
const SEEDS = Number(process.env.WASM_LLM_TOOL_SEEDS ?? 0);  // 0: each model's own count

// A small synthetic model over a real vocabulary, with a real chat template.
function templatedModel(vocab, template) {
  const name = `tools-64x2-${vocab}-${template.replace(/\.jinja$/, '')}.gguf`;
  return cached(name, (file) => runCli(['synth', '--shape', '64x2', '--type', 'q8_0', '--seed', '3', '--ctx', '2048',
    '--vocab', path.join(sharedModels, 'vocab', `ggml-vocab-${vocab}.gguf`),
    '--chat-template', path.join(repoRoot, 'tests/js/chat-templates', template), '-o', file]));
}


describe.each([
  { model: 'stories260K (generic)', file: () => modelPath, seeds: 12, maxTokens: 160 },
  { model: 'Qwen3 template, qwen2 vocab (hermes)', file: () => templatedModel('qwen2', 'Qwen-Qwen3-0.6B.jinja') },
  { model: 'Llama 3.2 template, llama-bpe vocab (llama3)', file: () => templatedModel('llama-bpe', 'meta-llama-Llama-3.2-3B-Instruct.jinja') },
  { model: 'Mistral Nemo template, llama-spm vocab (mistral)', file: () => templatedModel('llama-spm', 'mistralai-Mistral-Nemo-Instruct-2407.jinja') },
  { model: 'Mistral Small 3.2 template, llama-spm vocab (mistral [ARGS])', file: () => templatedModel('llama-spm', 'Mistral-Small-3.2-24B-Instruct-2506.jinja') },
  { model: 'LFM2 template, starcoder vocab (lfm2)', file: () => templatedModel('starcoder', 'LFM2-8B-A1B.jinja') },
  { model: 'Qwen3-Coder template, qwen2 vocab (qwen-xml)', file: () => templatedModel('qwen2', 'Qwen3-Coder.jinja') },
  { model: 'Gemma 4 template, llama-spm vocab (gemma4)', file: () => templatedModel('llama-spm', 'gemma-4.jinja') },
  { model: 'Granite 3.3 template, llama-bpe vocab (granite)', file: () => templatedModel('llama-bpe', 'ibm-granite-granite-3.3-2B-Instruct.jinja') },
])('$model', ({ model, file, seeds = 8, maxTokens = 128 }) => {
  let llm;
  const ajv = new Ajv({ strict: true });
  beforeAll(async () => {
    llm = await LLM.load(await file(), { threads: 1 });
  });
  afterAll(() => llm?.dispose());

  // Every call is of a given tool, its arguments valid; returns their count.
  function expectValidCalls(reply, seed) {
    for (const call of reply.toolCalls) {
      expect(Object.keys(SCHEMAS), `seed ${seed}`).toContain(call.name);
      expect(ajv.validate(SCHEMAS[call.name], call.arguments), `seed ${seed}: ${JSON.stringify(call)} ${ajv.errorsText()}`).toBe(true);
      expect(call.id).toMatch(/^\w+$/);
    }
    return reply.toolCalls.length;
  }

  // 'required' with one call per reply, so that replies end; 'auto' with any number.
  it.each(['required', 'auto'])('toolChoice %s: every call has valid arguments', async (toolChoice) => {
    const total = SEEDS || (toolChoice === 'required' ? seeds : seeds / 2);
    const parallelToolCalls = toolChoice === 'auto';
    let finished = 0;
    let calls = 0;
    for (let seed = 0; seed < total; seed += 1) {
      let stats;
      const options = { tools: TOOLS, toolChoice, parallelToolCalls, ...SAMPLING, seed, maxTokens, onStats: (s) => (stats = s) };
      const reply = await llm.chat(MESSAGES, options);
      expect(reply.role).toBe('assistant');
      calls += expectValidCalls(reply, seed);
      if (stats.stopReason === 'end_of_generation') {
        finished += 1;
        if (toolChoice === 'required') {
          expect(reply.toolCalls, `seed ${seed}: ${JSON.stringify(reply)}`).toHaveLength(1);
          expect(reply.content, `seed ${seed}`).toBe('');
        }
      } else {
        expect(stats.stopReason).toBe('max_tokens');
      }
    }
    console.log(`${model} | ${toolChoice} | ${finished}/${total} finished, ${calls} calls, all valid`);
    // Required calls must finish (or the check checks nothing).
    if (toolChoice === 'required') expect(finished).toBeGreaterThan(total / 4);
  });

  // Forced calls with parallel calls allowed: a random model goes on calling
  // until maxTokens cuts a call short. The reply is the whole calls and
  // nothing else: the cut one is neither content nor a call. A named tool
  // is called once, and then the reply ends.
  it.each([
    ['required', 'required'],
    ['a named tool', { type: 'function', function: { name: 'get_weather' } }],
  ])('toolChoice %s, parallel calls allowed: no call, whole or cut, in the content', async (_, toolChoice) => {
    const total = SEEDS || seeds;
    let cut = 0;
    for (let seed = 0; seed < total; seed += 1) {
      let stats;
      // A different length each seed, to cut calls at different points.
      const options = { tools: TOOLS, toolChoice, ...SAMPLING, seed, maxTokens: 24 + 13 * seed, onStats: (s) => (stats = s) };
      const reply = await llm.chat(MESSAGES, options);
      expectValidCalls(reply, seed);
      expect(reply.content, `seed ${seed}: ${JSON.stringify(reply)}`).toBe('');
      if (typeof toolChoice === 'object') {
        expect(reply.toolCalls.length, `seed ${seed}`).toBeLessThanOrEqual(1);
        for (const call of reply.toolCalls) expect(call.name).toBe('get_weather');
        if (stats.stopReason === 'end_of_generation') expect(reply.toolCalls, `seed ${seed}`).toHaveLength(1);
      }
      if (stats.stopReason === 'max_tokens') cut += 1;
      else expect(stats.stopReason).toBe('end_of_generation');
    }
    // Some replies must be cut (or the check checks nothing).
    expect(cut).toBeGreaterThan(0);
  });
});

describe('conversations and streams (stories260K)', () => {
  let llm;
  beforeAll(async () => {
    llm = await LLM.load(modelPath, { threads: 1 });
  });
  afterAll(() => llm?.dispose());

  it('a call\'s result goes back in, and the next reply builds on it', async () => {
    const messages = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = await llm.chat(messages, { tools: TOOLS, toolChoice: { name: 'get_weather' }, parallelToolCalls: false, seed: 1, maxTokens: 160 });
    expect(first.toolCalls).toHaveLength(1);
    expect(first.toolCalls[0].name).toBe('get_weather');
    messages.push(first, { role: 'tool', toolCallId: first.toolCalls[0].id, content: '{"temp": 21}' });
    const prompt = llm.formatChat(messages, { tools: TOOLS });
    expect(prompt).toContain(`<tool_call>\n${JSON.stringify({ name: 'get_weather', arguments: first.toolCalls[0].arguments })}\n</tool_call>`);
    expect(prompt).toContain('<tool_response>\n{"temp": 21}\n</tool_response>');
    let stats;
    const second = await llm.chat(messages, { tools: TOOLS, toolChoice: 'none', seed: 1, maxTokens: 20, onStats: (s) => (stats = s) });
    expect(second.toolCalls).toEqual([]);
    expect(second.content.length).toBeGreaterThan(0);
    // The prompt is formatChat()'s: its tokens are the ones evaluated.
    expect(stats.promptTokens).toBe((await llm.tokenize(prompt)).length);
  });


  it('a session keeps a reply\'s calls and the tool\'s result, and replies as chat() does to the same messages', async () => {
    const call = { tools: TOOLS, toolChoice: { name: 'get_weather' }, parallelToolCalls: false, seed: 1, maxTokens: 160 };
    const session = llm.session();
    const first = await session.chat('Weather in Paris?', call);
    const again = await llm.chat([{ role: 'user', content: 'Weather in Paris?' }], call);
    const withoutIds = (reply) => ({ ...reply, toolCalls: reply.toolCalls.map(({ id, ...rest }) => rest) });  // ids are random
    expect(withoutIds(first)).toEqual(withoutIds(again));
    expect(first.toolCalls).toHaveLength(1);
    expect(session.messages).toEqual([{ role: 'user', content: 'Weather in Paris?' }, first]);
    const result = { role: 'tool', toolCallId: first.toolCalls[0].id, content: '{"temp": 21}' };
    const answer = { tools: TOOLS, toolChoice: 'none', seed: 1, maxTokens: 20 };
    const stream = session.chatStream(result, answer);
    const pieces = [];
    let r;
    for (r = await stream.next(); !r.done; r = await stream.next()) pieces.push(r.value);
    expect(r.value.toolCalls).toEqual([]);
    const history = session.messages;
    expect(history.slice(0, 3)).toEqual([{ role: 'user', content: 'Weather in Paris?' }, first, result]);
    expect(history[3]).toEqual({ role: 'assistant', content: pieces.join(''), toolCalls: [] });
    expect(history[3]).toEqual(await llm.chat(history.slice(0, 3), answer));
  });
  it('chatStream() yields the content only and returns the calls; chat()\'s onToken gets the same pieces', async () => {
    const options = { tools: TOOLS, ...SAMPLING, maxTokens: 96 };
    for (let seed = 0; seed < 6; seed += 1) {
      const streamed = [];
      const stream = llm.chatStream(MESSAGES, { ...options, seed });
      let result;
      for (let r = await stream.next(); ; r = await stream.next()) {
        if (r.done) {
          result = r.value;
          break;
        }
        streamed.push(r.value);
      }
      const pieces = [];
      const reply = await llm.chat(MESSAGES, { ...options, seed, onToken: (p) => pieces.push(p) });
      expect(result.toolCalls.map(({ name, arguments: a }) => ({ name, a })), `seed ${seed}`)
        .toEqual(reply.toolCalls.map(({ name, arguments: a }) => ({ name, a })));
      expect(pieces).toEqual(streamed);
      if (reply.toolCalls.length > 0) {
        expect(streamed.join('').trim()).toBe(reply.content);
        expect(streamed.join('')).not.toContain('<tool_call>');
      } else {
        expect(streamed.join('')).toBe(reply.content);
      }
    }
  });

  it('refuses malformed tool options before generating, and tools with format or grammar', async () => {
    const call = (options) => llm.chat(MESSAGES, options).catch((e) => e);
    expect(await call({ tools: [{ name: 'a b' }] })).toMatchObject({ name: 'TypeError', code: 'invalid_argument' });
    expect(await call({ toolChoice: 'auto' })).toMatchObject({ code: 'invalid_argument', message: 'toolChoice and parallelToolCalls need tools' });
    expect(await call({ tools: TOOLS, format: 'json' })).toMatchObject({ code: 'invalid_argument', message: 'tools exclude format and grammar' });
    expect(await call({ tools: TOOLS, toolz: 1 })).toMatchObject({ code: 'invalid_argument', message: "unknown chat option 'toolz' (did you mean 'tools'?)" });
    // A schema the engine cannot enforce names the tool's schema.
    const bad = await call({ tools: [{ name: 'f', parameters: { type: 'object', properties: { n: { type: 'number', multipleOf: 2 } } } }] });
    expect(bad).toMatchObject({ name: 'GenerationError', code: 'invalid_argument' });
    expect(bad.message).toContain("tool 'f': JSON schema at /properties/n: 'multipleOf' is not supported");
  });
});

describe('control tokens a format needs', () => {
  let scratch;
  beforeAll(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-tools-'));
  });
  afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

  it('[TOOL_CALLS] and [ARGS] as control tokens are written out, the only way to write them, and start a call in free text', async () => {
    // A vocabulary with the two control tokens, lower-case letters, digits and
    // JSON punctuation, but no '[' and no capitals: only the control tokens
    // can write the call's markers.
    const normal = [...'abcdefghijklmnopqrstuvwxyz0123456789{}":,._', '\u2581'];
    const tokens = ['<unk>', '<s>', '</s>', '[TOOL_CALLS]', '[ARGS]', ...normal];
    const vocab = path.join(scratch, 'vocab.gguf');
    fs.writeFileSync(vocab, tinyVocabGguf(tokens, [2, 3, 3, 3, 3, ...normal.map(() => 1)]));
    const template = path.join(scratch, 'template.jinja');
    fs.writeFileSync(template, "{#- Calls: [TOOL_CALLS]name[ARGS]{...} -#}{% for m in messages %}{{ m.content }}{% endfor %}" +
      '{% if tools %}{{ tools | length }}{% endif %}');
    const file = path.join(scratch, 'tiny.gguf');
    await runCli(['synth', '--shape', '64x1', '--type', 'f32', '--vocab', vocab, '--chat-template', template, '-o', file]);
    const llm = await LLM.load(file, { threads: 1 });
    try {
      const tool = { name: 'get_time', parameters: { type: 'object', properties: { n: { type: 'integer', minimum: 0, maximum: 99 } }, required: ['n'] } };
      let finished = 0;
      for (let seed = 0; seed < 20; seed += 1) {
        let stats;
        const reply = await llm.chat([{ role: 'user', content: 'time' }], {
          tools: [tool], toolChoice: 'required', parallelToolCalls: false, seed, maxTokens: 40, onStats: (s) => (stats = s),
        });
        if (stats.stopReason !== 'end_of_generation') continue;
        finished += 1;
        expect(reply).toMatchObject({ content: '', toolCalls: [{ name: 'get_time', arguments: { n: expect.any(Number) } }] });
      }
      // Each call was read from "[TOOL_CALLS]get_time[ARGS]{...}": text only the control tokens can write.
      expect(finished).toBeGreaterThan(15);
      // 'auto': free text until the model happens to write [TOOL_CALLS] (hot
      // sampling makes that likely), a well-formed call from there.
      let lazy = 0;
      const hot = { temperature: 3, topK: 0, topP: 1, minP: 0 };
      for (let seed = 0; seed < 30; seed += 1) {
        const reply = await llm.chat([{ role: 'user', content: 'time' }], { tools: [tool], parallelToolCalls: false, ...hot, seed, maxTokens: 80 });
        if (reply.toolCalls.length === 0) continue;
        expect(reply.toolCalls[0]).toMatchObject({ name: 'get_time', arguments: { n: expect.any(Number) } });
        if (reply.content !== '') lazy += 1;
      }
      expect(lazy).toBeGreaterThan(2);
    } finally {
      await llm.dispose();
    }
  });
});
