// The OpenAI-style API on stories260K: the response objects and stream
// chunks an app written for OpenAI's API or WebLLM reads, their text the
// same as chat()'s and generate()'s for the same seed, usage counts equal
// to the tokens really evaluated and generated, tool calls, JSON output,
// and every parameter it cannot honour refused with a code. Embeddings on a
// small BERT model: embed()'s vectors, as numbers or base64.
import Ajv from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LLM } from '../../js/index.js';
import { CHAT_COMPLETION_PARAMETERS, COMPLETION_PARAMETERS, EMBEDDING_PARAMETERS } from '../../js/option-names.js';
import { embeddingModel, embeddingModels, texts } from '../reference/embeddings.mjs';
import { interfaceMembers } from './declarations.mjs';
import { modelPath } from './helpers.mjs';
import { SCHEMAS, TOOLS } from './tool-cases.mjs';

let llm;
beforeAll(async () => {
  llm = await LLM.load(modelPath, { threads: 1 });
});
afterAll(() => llm?.dispose());

const MESSAGES = [{ role: 'system', content: 'Tell a story.' }, { role: 'user', content: 'Once upon a time' }];

async function collect(iterable) {
  const chunks = [];
  for await (const chunk of iterable) chunks.push(chunk);
  return chunks;
}

describe('chat completions', () => {
  it('the response: text as chat() gives it, and usage as the tokens the engine evaluated and generated', async () => {
    const before = Math.floor(Date.now() / 1000);
    const completion = await llm.createChatCompletion({ messages: MESSAGES, max_tokens: 40, seed: 7, temperature: 0.8 });
    expect(completion).toEqual({
      id: expect.stringMatching(/^chatcmpl-\w+$/),
      object: 'chat.completion',
      created: expect.any(Number),
      model: llm.info.name,
      choices: [{ index: 0, message: { role: 'assistant', content: expect.any(String) }, logprobs: null, finish_reason: expect.any(String) }],
      usage: { prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number), total_tokens: expect.any(Number) },
    });
    expect(completion.created).toBeGreaterThanOrEqual(before);
    let stats;
    const { content: text } = await llm.chat(MESSAGES, { maxTokens: 40, seed: 7, temperature: 0.8, onStats: (s) => (stats = s) });
    expect(completion.choices[0].message.content).toBe(text);
    const { usage } = completion;
    expect(usage.prompt_tokens).toBe((await llm.tokenize(llm.formatChat(MESSAGES))).length);
    expect(usage.completion_tokens).toBe(stats.generatedTokens);
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
    expect(completion.choices[0].finish_reason).toBe(stats.stopReason === 'max_tokens' ? 'length' : 'stop');
  });

  it('max_tokens ends with finish_reason length; no limit runs to the model\'s end or the context', async () => {
    const short = await llm.createChatCompletion({ messages: MESSAGES, max_completion_tokens: 5, seed: 1 });
    expect(short.choices[0].finish_reason).toBe('length');
    expect(short.usage.completion_tokens).toBe(5);
    const stopped = await llm.createChatCompletion({ messages: MESSAGES, temperature: 0, stop: [' the'] });
    expect(stopped.choices[0].finish_reason).toBe('stop');
    expect(stopped.choices[0].message.content).not.toContain(' the');
  });

  it('the stream: role, content pieces, finish reason, then the usage chunk; the same text and counts', async () => {
    const request = { messages: MESSAGES, max_tokens: 30, seed: 3 };
    const whole = await llm.createChatCompletion(request);
    const chunks = await collect(await llm.createChatCompletion({ ...request, stream: true, stream_options: { include_usage: true } }));
    for (const c of chunks) {
      expect(c).toMatchObject({ id: expect.stringMatching(/^chatcmpl-/), object: 'chat.completion.chunk', model: llm.info.name });
      expect(c.id).toBe(chunks[0].id);
    }
    expect(chunks[0].choices[0]).toEqual({ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null });
    const usageChunk = chunks.at(-1);
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage).toEqual(whole.usage);
    const last = chunks.at(-2);
    expect(last.choices[0]).toMatchObject({ delta: {}, finish_reason: whole.choices[0].finish_reason });
    const pieces = chunks.slice(1, -2);
    expect(pieces.every((c) => c.usage === null && c.choices[0].finish_reason === null)).toBe(true);
    expect(pieces.map((c) => c.choices[0].delta.content).join('')).toBe(whole.choices[0].message.content);
    // stories260K writes one piece per token: one chunk each.
    expect(pieces).toHaveLength(whole.usage.completion_tokens);
    // Without include_usage there is no usage anywhere.
    const plain = await collect(await llm.chat.completions.create({ ...request, stream: true }));
    expect(plain.some((c) => 'usage' in c)).toBe(false);
    expect(plain.at(-1).choices[0].finish_reason).toBe(whole.choices[0].finish_reason);
  });

  it('tool calls: arguments as JSON text valid against the schema, finish_reason tool_calls, streamed too', async () => {
    const ajv = new Ajv({ strict: true });
    const request = {
      messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: TOOLS, tool_choice: 'required', parallel_tool_calls: false,
      max_tokens: 200, seed: 4,
    };
    const completion = await llm.createChatCompletion(request);
    const { message, finish_reason: finish } = completion.choices[0];
    expect(finish).toBe('tool_calls');
    expect(message.content).toBeNull();
    expect(message.tool_calls.length).toBeGreaterThan(0);
    for (const call of message.tool_calls) {
      expect(call).toEqual({ id: expect.stringMatching(/^call_\w{24}$/), type: 'function', function: { name: expect.any(String), arguments: expect.any(String) } });
      expect(ajv.validate(SCHEMAS[call.function.name], JSON.parse(call.function.arguments))).toBe(true);
    }
    const chunks = await collect(await llm.createChatCompletion({ ...request, stream: true }));
    const calls = chunks.flatMap((c) => c.choices[0].delta.tool_calls ?? []);
    expect(calls.map(({ index, function: f }) => ({ index, f }))).toEqual(message.tool_calls.map((c, index) => ({ index, f: c.function })));
    expect(chunks.at(-1).choices[0].finish_reason).toBe('tool_calls');
    expect(chunks.some((c) => (c.choices[0].delta.content ?? '').includes('<tool_call>'))).toBe(false);

    // The calls and their results go back, as OpenAI apps send them.
    const next = await llm.createChatCompletion({
      messages: [...request.messages, message, ...message.tool_calls.map((c) => ({ role: 'tool', tool_call_id: c.id, content: '{"ok": true}' }))],
      tools: TOOLS, tool_choice: 'none', max_tokens: 10, seed: 4,
    });
    expect(next.choices[0].message.tool_calls).toBeUndefined();
    expect(next.usage.prompt_tokens).toBeGreaterThan(completion.usage.prompt_tokens);
  });

  it('response_format: JSON, a JSON schema, and WebLLM\'s schema text and grammar', async () => {
    const schema = { type: 'object', properties: { n: { type: 'integer', minimum: 0, maximum: 9 } }, required: ['n'] };
    const run = async (format) => (await llm.createChatCompletion({ messages: MESSAGES, response_format: format, max_tokens: 60, seed: 2 }))
      .choices[0].message.content;
    expect(JSON.parse(await run({ type: 'json_schema', json_schema: { name: 'n', schema, strict: true } })).n).toBeLessThan(10);
    expect(JSON.parse(await run({ type: 'json_object', schema: JSON.stringify(schema) })).n).toBeGreaterThanOrEqual(0);
    expect(await run({ type: 'grammar', grammar: 'root ::= "yes" | "no"' })).toMatch(/^(yes|no)$/);
    expect(await run({ type: 'text' })).toBe((await llm.chat(MESSAGES, { maxTokens: 60, seed: 2 })).content);
  });

  it('no seed: a new draw each time, as OpenAI\'s API samples', async () => {
    const texts = new Set();
    for (let i = 0; i < 3; i += 1) texts.add((await llm.createChatCompletion({ messages: MESSAGES, max_tokens: 30, temperature: 1 })).choices[0].message.content);
    expect(texts.size).toBeGreaterThan(1);
  });
});

describe('text completions', () => {
  it('the response and its stream: generate()\'s text, usage the prompt\'s tokens and the ones generated', async () => {
    const request = { prompt: 'Once upon a time', max_tokens: 25, seed: 9, top_k: 20 };
    const completion = await llm.completions.create(request);
    let stats;
    const text = await llm.generate('Once upon a time', { maxTokens: 25, seed: 9, topK: 20, onStats: (s) => (stats = s) });
    expect(completion).toEqual({
      id: expect.stringMatching(/^cmpl-\w+$/),
      object: 'text_completion',
      created: expect.any(Number),
      model: llm.info.name,
      choices: [{ index: 0, text, logprobs: null, finish_reason: 'length' }],
      usage: { prompt_tokens: (await llm.tokenize('Once upon a time')).length, completion_tokens: stats.generatedTokens, total_tokens: stats.promptTokens + stats.generatedTokens },
    });
    const chunks = await collect(await llm.createCompletion({ ...request, prompt: [request.prompt], stream: true, stream_options: { include_usage: true } }));
    expect(chunks.slice(0, -2).map((c) => c.choices[0].text).join('')).toBe(text);
    expect(chunks.at(-2).choices[0]).toEqual({ index: 0, text: '', logprobs: null, finish_reason: 'length' });
    expect(chunks.at(-1)).toMatchObject({ object: 'text_completion', choices: [], usage: completion.usage });
  });
});

describe('requests it cannot honour', () => {
  it('are refused with a code, before anything is generated', async () => {
    const chat = (extra) => llm.createChatCompletion({ messages: MESSAGES, ...extra }).catch((e) => e);
    for (const extra of [{ n: 2 }, { logprobs: true }, { top_logprobs: 3 }, { logit_bias: { 5: 10 } }, { functions: [] },
      { store: true }, { reasoning_effort: 'low' }, { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] },
      { messages: [{ role: 'user', name: 'bob', content: 'hi' }] }, { tools: TOOLS, response_format: { type: 'json_object' } }]) {
      expect(await chat(extra), JSON.stringify(extra)).toMatchObject({ name: 'GenerationError', code: 'unsupported' });
    }
    expect(await llm.createCompletion({ prompt: 'x', echo: true }).catch((e) => e)).toMatchObject({ code: 'unsupported' });
    expect(await llm.createCompletion({ prompt: ['a', 'b'] }).catch((e) => e)).toMatchObject({ code: 'unsupported' });
    // Neutral values of those parameters are fine.
    const ok = await chat({ n: 1, logprobs: false, logit_bias: {}, store: false, user: 'u', model: 'anything', max_tokens: 2 });
    expect(ok.choices).toHaveLength(1);
  });

  it('unknown or malformed parameters are TypeErrors that say what is wrong', async () => {
    const chat = (request) => llm.createChatCompletion(request).catch((e) => e);
    expect(await chat({ messages: MESSAGES, max_token: 3 })).toMatchObject({
      name: 'TypeError', code: 'invalid_argument', message: "unknown chat completion option 'max_token' (did you mean 'max_tokens'?)",
    });
    expect(await chat({ messages: 'hi' })).toMatchObject({ code: 'invalid_argument', message: 'messages must be an array of messages' });
    expect(await chat({ messages: MESSAGES, stream_options: { include_usage: true } })).toMatchObject({ message: 'stream_options needs stream: true' });
    expect(await chat({ messages: MESSAGES, response_format: { type: 'xml' } })).toMatchObject({ code: 'invalid_argument' });
    expect(await chat({ messages: MESSAGES, tool_choice: 'required' })).toMatchObject({ message: "tool_choice 'required' needs tools" });
    expect(await chat(null)).toMatchObject({ message: 'a chat completion request must be an object' });
  });

  it('the parameter lists are index.d.ts\'s', () => {
    const base = interfaceMembers('CompletionRequestBase');
    expect(CHAT_COMPLETION_PARAMETERS).toEqual([...base, ...interfaceMembers('ChatCompletionRequest')]);
    expect(COMPLETION_PARAMETERS).toEqual([...base, ...interfaceMembers('CompletionRequest')]);
    expect(EMBEDDING_PARAMETERS).toEqual(interfaceMembers('EmbeddingRequest'));
  });
});

describe('embeddings', () => {
  let bert;
  beforeAll(async () => {
    bert = await LLM.load(await embeddingModel(embeddingModels[0]), { threads: 1 });
  });
  afterAll(() => bert?.dispose());

  it("are embed()'s vectors, in input order, with the texts' tokens counted", async () => {
    const response = await bert.embeddings.create({ input: texts.slice(0, 3), model: 'any' });
    const expected = await bert.embed(texts.slice(0, 3));
    const tokens = (await Promise.all(texts.slice(0, 3).map((t) => bert.tokenize(t)))).reduce((n, ids) => n + ids.length, 0);
    expect(response).toEqual({
      object: 'list',
      data: expected.map((v, index) => ({ object: 'embedding', index, embedding: Array.from(v) })),
      model: bert.info.name || bert.info.architecture,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
    const one = await bert.createEmbedding({ input: texts[0], encoding_format: 'base64', dimensions: bert.info.embeddingSize });
    const bytes = Buffer.from(one.data[0].embedding, 'base64');
    expect(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4)).toEqual(expected[0]);
  });

  it('refuse what they cannot honour, with a code', async () => {
    const embed = (request) => bert.createEmbedding(request).catch((e) => e);
    expect(await embed({ input: [[1, 2, 3]] })).toMatchObject({ name: 'TypeError', code: 'invalid_argument' });
    expect(await embed({ input: [] })).toMatchObject({ code: 'invalid_argument' });
    expect(await embed({ input: 'x', encoding_format: 'int8' })).toMatchObject({ code: 'invalid_argument' });
    expect(await embed({ input: 'x', dimensions: 8 })).toMatchObject({ name: 'GenerationError', code: 'unsupported' });
    expect(await embed({ input: 'x', inputs: 'y' })).toMatchObject({ code: 'invalid_argument', message: expect.stringMatching(/unknown embedding option 'inputs'/) });
  });
});

describe('aborting', () => {
  it('a signal rejects the request with AbortError; leaving a stream early stops its generation', async () => {
    const controller = new AbortController();
    controller.abort();
    expect(await llm.createChatCompletion({ messages: MESSAGES }, { signal: controller.signal }).catch((e) => e))
      .toMatchObject({ name: 'AbortError' });
    const stream = await llm.createCompletion({ prompt: 'Once', max_tokens: 1000, stream: true });
    for await (const chunk of stream) {
      if (chunk.choices[0].text) break;
    }
    // The model is free at once: the next request runs.
    expect((await llm.createCompletion({ prompt: 'Once', max_tokens: 3, seed: 1 })).usage.completion_tokens).toBe(3);
  });
});
