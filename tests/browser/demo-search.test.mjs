// The demo page's semantic-search panel in Chromium, through its controls:
// with an encoder loaded, the sentences come out in the order of their
// cosine similarity to the query as the native CLI's embeddings give it,
// with the time taken; a second query embeds only itself; Generate stays off
// (an encoder has no output layer); no uncaught or console errors.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddingModel, embeddingModels } from '../reference/embeddings.mjs';
import { modelCache, runCli } from '../reference/reference.mjs';
import { openDemo } from './demo-page.mjs';

let t;
let modelUrl;
let modelFile;

beforeAll(async () => {
  modelFile = await embeddingModel(embeddingModels[0], 'q8_0');  // bert
  modelUrl = `/build-models/${path.basename(modelFile)}`;
  t = await openDemo({ isolated: true, mounts: { '/build-models/': modelCache } });
}, 600_000);

afterAll(() => t?.close());

// Clicks Search and waits for the page to be idle again with a result.
async function search(page) {
  await page.click('#search');
  await page.waitForFunction(() => document.body.dataset.state === 'idle' &&
    /in [\d.]+ m?s\.$/.test(document.querySelector('#search-status').textContent));
  return {
    status: await page.textContent('#search-status'),
    sentences: await page.$$eval('#search-results li', (items) => items.map((li) => li.textContent.replace(/^\S+ /, ''))),
  };
}

// The sentences by the native CLI's cosine similarity to the query (its
// embeddings are the wasm build's bits).
async function nativeOrder(sentences, query) {
  const { stdout } = await runCli(['embed', '-m', modelFile, query, ...sentences]);
  const [q, ...vectors] = JSON.parse(stdout).embeddings;
  const score = (v) => v.reduce((sum, x, i) => sum + x * q[i], 0);
  return sentences.map((s, i) => ({ s, score: score(vectors[i]) })).sort((a, b) => b.score - a.score).map((x) => x.s);
}

describe('semantic search', () => {
  it('ranks the sentences by cosine similarity, then embeds only a new query', async () => {
    const { page, demo } = t;
    await demo.loadUrl(modelUrl);
    expect(await page.isDisabled('#generate')).toBe(true);
    expect(await page.isDisabled('#search')).toBe(false);
    const sentences = (await page.inputValue('#search-sentences')).split('\n');
    const first = await search(page);
    expect(first.status).toMatch(new RegExp(`^Embedded ${sentences.length} sentences and the query in`));
    expect(first.sentences).toEqual(await nativeOrder(sentences, await page.inputValue('#search-query')));

    await page.fill('#search-query', 'What goes into a cake?');
    const second = await search(page);
    expect(second.status).toMatch(/^Embedded the query in/);
    expect(second.sentences).toEqual(await nativeOrder(sentences, 'What goes into a cake?'));
    expect(await demo.error()).toBeNull();
    expect(t.pageErrors).toEqual([]);
  }, 600_000);
});
