// Stats per call: each generation's figures come with it (onStats, and the
// value a stream returns), so calls queued one after another never see each
// other's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LLM } from '../../js/index.js';
import { modelPath } from './helpers.mjs';

const prompt = 'Once upon a time';
let llm;

beforeAll(async () => {
  llm = await LLM.load(modelPath, { threads: 1 });
});

afterAll(() => llm?.dispose());

// Every stat of a finished generation, as numbers of the right kind.
function expectStats(stats, { promptTokens, generatedTokens, stopReason }) {
  expect(stats).toEqual({
    promptTokens, generatedTokens, stopReason, prefillSeconds: expect.any(Number), decodeSeconds: expect.any(Number),
    grammarSeconds: 0, cachedTokens: expect.any(Number), threadsUsed: 1, seed: expect.any(Number),
  });
  // The cache held some of the prompt (an earlier call's), never all of it.
  expect(stats.cachedTokens).toBeGreaterThanOrEqual(0);
  expect(stats.cachedTokens).toBeLessThan(promptTokens);
  expect(stats.prefillSeconds).toBeGreaterThan(0);
  expect(stats.decodeSeconds).toBeGreaterThan(0);
}

describe('stats per call', () => {
  it('generate() passes its stats to onStats once, before it resolves', async () => {
    const promptTokens = (await llm.tokenize(prompt)).length;
    const calls = [];
    let resolved = false;
    const run = llm.generate(prompt, { maxTokens: 12, temperature: 0, onStats: (s) => calls.push({ s, resolved }) });
    run.then(() => (resolved = true));
    await run;
    expect(calls.length).toBe(1);
    expect(calls[0].resolved).toBe(false);
    expectStats(calls[0].s, { promptTokens, generatedTokens: 12, stopReason: 'max_tokens' });
  });

  it('a stream returns its stats, the same onStats gets', async () => {
    let fromCallback;
    const stream = llm.stream(prompt, { maxTokens: 9, temperature: 0, onStats: (s) => (fromCallback = s) });
    let pieces = 0;
    let next;
    while (!(next = await stream.next()).done) pieces += 1;
    expect(pieces).toBeGreaterThan(3);
    expect(next.value).toBe(fromCallback);
    expectStats(next.value, { promptTokens: (await llm.tokenize(prompt)).length, generatedTokens: 9, stopReason: 'max_tokens' });
  });

  it('calls queued together each get their own stats, in their own order', async () => {
    const seen = [];
    const run = (maxTokens, stop) => llm.generate(prompt, {
      maxTokens, temperature: 0, ...(stop ? { stop } : {}), onStats: (s) => seen.push([maxTokens, s]),
    });
    const full = await llm.generate(prompt, { maxTokens: 30, temperature: 0 });
    const stop = full.slice(20, 24);
    await Promise.all([run(5), run(30, stop), run(7)]);
    expect(seen.map(([n, s]) => [n, s.generatedTokens <= n, s.stopReason])).toEqual([
      [5, true, 'max_tokens'], [30, true, 'stop_string'], [7, true, 'max_tokens'],
    ]);
    expect(seen[0][1].generatedTokens).toBe(5);
    expect(seen[2][1].generatedTokens).toBe(7);
  });

  it('chat() and chatStream() report stats the same way', async () => {
    const messages = [{ role: 'user', content: 'Hello' }];
    let chatStats;
    await llm.chat(messages, { maxTokens: 6, temperature: 0, onStats: (s) => (chatStats = s) });
    expect(chatStats.generatedTokens).toBeLessThanOrEqual(6);
    const stream = llm.chatStream(messages, { maxTokens: 6, temperature: 0 });
    let next;
    while (!(next = await stream.next()).done);
    // The second call found the first's prompt in the KV cache.
    expect(next.value).toEqual({
      ...chatStats, cachedTokens: chatStats.promptTokens - 1, prefillSeconds: expect.any(Number),
      decodeSeconds: expect.any(Number), seed: expect.any(Number), toolCalls: [],
    });
  });

  it('a plain for-await loop reaches the stats through stream.stats', async () => {
    let fromCallback;
    const stream = llm.stream(prompt, { maxTokens: 7, temperature: 0, onStats: (s) => (fromCallback = s) });
    let text = '';
    for await (const piece of stream) text += piece;
    expect(text.length).toBeGreaterThan(0);
    expect(await stream.stats).toBe(fromCallback);
    expectStats(await stream.stats, { promptTokens: (await llm.tokenize(prompt)).length, generatedTokens: 7, stopReason: 'max_tokens' });
  });

  it('chatStream() gives the stats and the reply chat() gives, and so does a session\'s', async () => {
    const messages = [{ role: 'user', content: 'Hello' }];
    const options = { maxTokens: 6, temperature: 0 };
    const reply = await llm.chat(messages, options);
    for (const stream of [llm.chatStream(messages, options), llm.session().chatStream('Hello', options)]) {
      let text = '';
      for await (const piece of stream) text += piece;
      expect(await stream.reply).toEqual(reply);
      expect(text).toBe(reply.content);
      expect((await stream.stats).generatedTokens).toBeLessThanOrEqual(6);
      expect(await stream.stats).not.toHaveProperty('toolCalls');
    }
  });

  it('a stream left early rejects its stats with AbortError, never as an unhandled rejection', async () => {
    const unhandled = [];
    const onUnhandled = (reason) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      for (const stream of [llm.stream(prompt, { maxTokens: 50 }), llm.chatStream([{ role: 'user', content: 'Hi' }], { maxTokens: 50 })]) {
        for await (const piece of stream) {
          expect(piece.length).toBeGreaterThan(0);
          break;
        }
      }
      const observed = llm.stream(prompt, { maxTokens: 50 });
      for await (const piece of observed) if (piece) break;
      await expect(observed.stats).rejects.toMatchObject({ name: 'AbortError' });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('an aborted generation reports no stats, and the model keeps none', async () => {
    const controller = new AbortController();
    let stats = null;
    const run = llm.generate(prompt, {
      maxTokens: 400, temperature: 1, signal: controller.signal, onToken: () => controller.abort(), onStats: (s) => (stats = s),
    });
    await expect(run).rejects.toMatchObject({ code: 'aborted' });
    expect(stats).toBeNull();
    expect('lastStats' in llm).toBe(false);
  });
});

describe('seeds', () => {
  const sampled = { maxTokens: 24, temperature: 0.8 };

  it('each call without a seed draws its own, reported in the stats, which repeats the text', async () => {
    const runs = [];
    for (let i = 0; i < 3; i += 1) {
      let stats;
      const text = await llm.generate(prompt, { ...sampled, onStats: (s) => (stats = s) });
      runs.push({ text, seed: stats.seed });
    }
    for (const { seed } of runs) {
      expect(Number.isSafeInteger(seed) && seed >= 0).toBe(true);
    }
    expect(new Set(runs.map((r) => r.seed)).size).toBe(3);
    expect(new Set(runs.map((r) => r.text)).size).toBeGreaterThan(1);
    for (const { text, seed } of runs) expect(await llm.generate(prompt, { ...sampled, seed })).toBe(text);
  });

  it('a given seed is used and reported; greedy text does not depend on the seed', async () => {
    let stats;
    const zero = await llm.generate(prompt, { ...sampled, seed: 0, onStats: (s) => (stats = s) });
    expect(stats.seed).toBe(0);
    expect(await llm.generate(prompt, { ...sampled, seed: 0 })).toBe(zero);
    const greedy = { maxTokens: 24, temperature: 0 };
    const text = await llm.generate(prompt, greedy);
    expect(await llm.generate(prompt, greedy)).toBe(text);
    expect(await llm.generate(prompt, { ...greedy, seed: 12345 })).toBe(text);
  });
});
