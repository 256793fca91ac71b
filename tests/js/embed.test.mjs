// llm.embed() and llm.rank() in Node: the wasm build gives the native CLI's
// embeddings and scores bit for bit (1 and 2 threads, f32 and q4_0, whose
// matrices the wasm build repacks); a text's embedding has the same bits
// alone or batched with others; the options, the errors and abort.
import { describe, expect, it } from 'vitest';
import { LLM } from '../../js/index.js';
import { embeddingModel, embeddingModels, query, rerankers, texts } from '../reference/embeddings.mjs';
import { runCli } from '../reference/reference.mjs';

// The native CLI's embeddings of `texts` (or, rank, scores), as float32.
async function native(model, threads, args = []) {
  const { stdout } = await runCli(['embed', '-m', model, '--threads', String(threads), ...args, ...texts]);
  return JSON.parse(stdout);
}

function expectSameBits(ours, expected) {
  expect(ours).toBeInstanceOf(Float32Array);
  expect(Array.from(ours)).toEqual(expected.map(Math.fround));
}

describe.each(embeddingModels)('$label', (row) => {
  it.each([[1, 'f32'], [2, 'q4_0']])('with %i thread(s), %s, matches the native CLI bit for bit', async (threads, type) => {
    const model = await embeddingModel(row, type);
    const expected = await native(model, threads);
    const llm = await LLM.load(model, { threads });
    try {
      expect(llm.info).toMatchObject({ encoder: row.arch !== 'qwen3', pooling: expected.pooling, reranker: false });
      const batch = await llm.embed(texts);
      expect(batch.length).toBe(texts.length);
      batch.forEach((v, i) => expectSameBits(v, expected.embeddings[i]));
      // One text alone: the same bits as in the batch.
      expectSameBits(await llm.embed(texts[2]), expected.embeddings[2]);
    } finally {
      await llm.dispose();
    }
  }, 300_000);
});

describe.each(rerankers)('$label', (row) => {
  it('ranks as the native CLI, bit for bit', async () => {
    const model = await embeddingModel(row, 'q8_0');
    const expected = (await native(model, 2, ['--rank', query])).scores;
    const llm = await LLM.load(model, { threads: 2 });
    try {
      expect(llm.info.reranker).toBe(true);
      const scores = await llm.rank(query, texts);
      expect(scores).toEqual(expected.map(Math.fround));
      for (const s of scores) expect(s >= 0 && s <= 1).toBe(true);
      // A reranker embeds only with a pooling chosen.
      await expect(llm.embed('text')).rejects.toMatchObject({ name: 'GenerationError', code: 'invalid_argument' });
      expect((await llm.embed('text', { pooling: 'cls' })).length).toBe(llm.info.embeddingSize);
    } finally {
      await llm.dispose();
    }
  }, 300_000);
});

describe('embed() options and errors', () => {
  it('pools and normalises as asked, and rejects bad arguments with invalid_argument', async () => {
    const model = await embeddingModel(embeddingModels[0]);  // bert: [CLS] pooling by default
    const llm = await LLM.load(model, { threads: 1, contextSize: 64 });
    try {
      expect(llm.info.pooling).toBe('cls');
      const raw = await llm.embed(texts[0], { normalize: false, pooling: 'mean' });
      const normalized = await llm.embed(texts[0], { pooling: 'mean' });
      const norm = Math.hypot(...raw);
      expect(Math.abs(norm - 1)).toBeGreaterThan(1e-3);  // mean pooling of LayerNorm'd states: not a unit vector
      normalized.forEach((v, i) => expect(v).toBeCloseTo(raw[i] / norm, 6));
      expect(Array.from(await llm.embed(texts[0], { pooling: 'cls' }))).not.toEqual(Array.from(normalized));
      expect(await llm.embed([])).toEqual([]);
      for (const [input, options] of [[42, {}], [['a', 1], {}], ['a', { pooling: 'max' }], ['a', { normalise: true }],
        ['a', { normalize: 'yes' }]]) {
        await expect(llm.embed(input, options)).rejects.toMatchObject({ code: 'invalid_argument' });
      }
      // A text longer than the context names itself.
      await expect(llm.embed(['short', 'word '.repeat(100)])).rejects.toMatchObject({
        name: 'GenerationError', code: 'context_full', message: expect.stringContaining('text 1'),
      });
      // An encoder cannot generate, and this one is no reranker.
      await expect(llm.generate('Hi')).rejects.toMatchObject({ code: 'unsupported' });
      await expect(llm.rank('q', ['d'])).rejects.toMatchObject({ code: 'unsupported' });
      await expect(llm.rank('q', 'd')).rejects.toMatchObject({ code: 'invalid_argument' });
      // Abort: an aborted signal rejects, and the model still works after.
      const controller = new AbortController();
      controller.abort();
      await expect(llm.embed(texts, { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
      expect((await llm.embed('still here')).length).toBe(llm.info.embeddingSize);
    } finally {
      await llm.dispose();
    }
  }, 300_000);
});
