// llm.embed() and llm.rank() in Chromium: the browser build (relaxed SIMD,
// threaded on an isolated page, single-threaded on one that is not) gives
// the native CLI's embeddings and relevance scores bit for bit, on every
// embedding model of tests/reference/embeddings.mjs in q4_0 (whose matrices
// the relaxed build repacks) and a reranker in q8_0.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddingModel, embeddingModels, query, rerankers, texts } from '../reference/embeddings.mjs';
import { modelCache, runCli } from '../reference/reference.mjs';
import { openTestPage } from './browser.mjs';

// {label, url, expected (the native CLI's embed or rank output)} per model.
const MODELS = [];

beforeAll(async () => {
  for (const row of embeddingModels) {
    const file = await embeddingModel(row, 'q4_0');
    const { stdout } = await runCli(['embed', '-m', file, '--threads', '2', ...texts]);
    MODELS.push({ label: row.label, url: `/build-models/${path.basename(file)}`, expected: JSON.parse(stdout) });
  }
  const file = await embeddingModel(rerankers[0], 'q8_0');
  const { stdout } = await runCli(['embed', '-m', file, '--threads', '2', '--rank', query, ...texts]);
  MODELS.push({ label: rerankers[0].label, url: `/build-models/${path.basename(file)}`, expected: JSON.parse(stdout),
    query });
}, 600_000);

// In the page: loads `url`, embeds the texts (or ranks them against `query`).
function run(page, { url, query: q }, threads) {
  return page.evaluate(async ({ url, q, texts, threads }) => {
    const llm = await window.wasmLlm.LLM.load(url, { threads });
    try {
      const out = q === undefined ? (await llm.embed(texts)).map((v) => Array.from(v)) : await llm.rank(q, texts);
      return { out, info: llm.info };
    } finally {
      await llm.dispose();
    }
  }, { url, q, texts, threads });
}

describe.each([
  { isolated: true, threads: 2 },
  { isolated: false, threads: 1 },
])('isolated: $isolated, $threads thread(s)', ({ isolated, threads }) => {
  let t;
  beforeAll(async () => {
    t = await openTestPage({ isolated, mounts: { '/build-models/': modelCache } });
  });
  afterAll(() => t?.close());

  it('every embedding model and a reranker give the native CLI\'s bits', async () => {
    for (const model of MODELS) {
      const { out, info } = await run(t.page, model, threads);
      expect(info).toMatchObject({ kernels: 'relaxed', threads });
      if (model.query === undefined) {
        expect(out).toEqual(model.expected.embeddings.map((v) => v.map(Math.fround)));
      } else {
        expect(out).toEqual(model.expected.scores.map(Math.fround));
      }
    }
    // No uncaught errors (the test page has no favicon: that 404 is no error of ours).
    expect(t.pageErrors.filter((e) => !e.includes('favicon.ico'))).toEqual([]);
  }, 600_000);
});
