// Saved states and reused KV caches in Chromium, threaded (isolated page) and
// single-threaded: a state the native CLI saved (--prompt-cache), fetched and
// restored from a Blob, continues with the native CLI's text; after the same
// prompt the page saves the native CLI's bytes exactly; a state kept in OPFS
// restores on its own; and a session's turns evaluate only their new tokens,
// with the replies of an engine that reuses nothing. On stories260K and on
// the architectures with a sliding-window ring (gemma3) and a convolution
// state (lfm2). (Which positions a state holds depends on what the cache
// held before: a sliding-window ring or the convolution inputs lose older
// ones. So the bytes are the same for the same tokens from an empty cache.)
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { architectureModel, architectures } from '../reference/architectures.mjs';
import { modelCache, runCli } from '../reference/reference.mjs';
import { modelPath, nativeContinuation } from '../js/helpers.mjs';
import { openTestPage } from './browser.mjs';

const STORY = 'Once upon a time, there was a little girl named Lily. She loved to play in the park with her dog. ';
const MORE = ' Then the sun came out and';
const SEEDED = { js: { maxTokens: 24, temperature: 0.8, seed: 3 }, cli: ['-n', '24', '--temp', '0.8', '--seed', '3'] };
const MODELS = [];
let scratchDir;

beforeAll(async () => {
  scratchDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-browser-state-'));
  const rows = [
    { name: 'stories260K', file: modelPath, url: '/models/stories260K.gguf', prompt: STORY },
    ...await Promise.all(['gemma3', 'lfm2'].map(async (arch) => {
      const file = await architectureModel(architectures.find((r) => r.arch === arch), 'q4_0');
      // Past gemma3's ring (a window of 32 + a batch) and lfm2's first convolution checkpoint.
      return { name: arch, file, url: `/build-models/${path.basename(file)}`, prompt: STORY.repeat(4) };
    })),
  ];
  for (const row of rows) {
    const state = path.join(scratchDir, `${row.name}.state`);
    await runCli(['generate', '-m', row.file, '-p', row.prompt, '-n', '0', '--prompt-cache', state]);
    MODELS.push({
      ...row,
      stateUrl: `/scratch/${row.name}.state`,
      stateSha256: createHash('sha256').update(fs.readFileSync(state)).digest('hex'),
      expected: await nativeContinuation(row.prompt + MORE, SEEDED.cli, row.file),
    });
  }
});

afterAll(() => fs.rmSync(scratchDir, { recursive: true, force: true }));

// In the page: saves the state after the prompt, from an empty cache (its
// sha256); restores the native state from a Blob and continues; keeps the
// saved state in OPFS and restores it from there.
function continueNativeState(page, model) {
  return page.evaluate(async ({ model, more, seeded }) => {
    const llm = await window.wasmLlm.LLM.load(model.url);
    try {
      const hex = async (bytes) => [...new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))]
        .map((b) => b.toString(16).padStart(2, '0')).join('');
      await llm.generate(model.prompt, { maxTokens: 0 });
      const saved = await llm.saveState();

      await llm.generate('Something else entirely.', { maxTokens: 3 });
      await llm.loadState(await (await fetch(model.stateUrl)).blob());
      let stats;
      const text = await llm.generate(model.prompt + more, { ...seeded, onStats: (s) => (stats = s) });

      const dir = await navigator.storage.getDirectory();
      const handle = await dir.getFileHandle(`${model.name}.state`, { create: true });
      const writable = await handle.createWritable();
      await writable.write(saved);
      await writable.close();
      await llm.generate('Something else entirely.', { maxTokens: 3 });
      await llm.loadState(await handle.getFile());
      const fromOpfs = await llm.generate(model.prompt + more, seeded);
      await dir.removeEntry(handle.name);
      return { text, stats, savedSha256: await hex(saved), fromOpfs };
    } finally {
      await llm.dispose();
    }
  }, { model, more: MORE, seeded: SEEDED.js });
}

// In the page: three turns of a session, each reply against llm.chat() with cachePrompt: false.
function sessionTurns(page, url) {
  return page.evaluate(async (url) => {
    const llm = await window.wasmLlm.LLM.load(url);
    try {
      const options = { maxTokens: 16, temperature: 0 };
      const session = llm.session({ messages: [{ role: 'system', content: 'Tell short stories.' }] });
      const turns = [];
      for (const words of ['A story about a cat.', 'What happened next?', 'How did it end?']) {
        let stats;
        const asked = [...session.messages, { role: 'user', content: words }];
        const reply = await session.chat(words, { ...options, onStats: (s) => (stats = s) });
        const fresh = await llm.chat(asked, { ...options, cachePrompt: false });
        // (The cache holds this turn's prompt and reply again, as after the session's turn.)
        turns.push({ reply: reply.content, fresh: fresh.content, promptTokens: stats.promptTokens, cachedTokens: stats.cachedTokens });
      }
      return { turns, messages: session.messages.length };
    } finally {
      await llm.dispose();
    }
  }, url);
}

// The single-thread build: stories260K is enough.
describe.each([
  { isolated: true, build: 'threaded', models: ['stories260K', 'gemma3', 'lfm2'] },
  { isolated: false, build: 'single-thread', models: ['stories260K'] },
])('$build build', ({ isolated, models }) => {
  let t;
  beforeAll(async () => {
    t = await openTestPage({ isolated, mounts: { '/scratch/': scratchDir, '/build-models/': modelCache } });
  });
  afterAll(() => t?.close());

  it.each(models)('%s: a native state continues with the native text; the page saves the same bytes; ' +
    'OPFS keeps them', async (name) => {
    const model = MODELS.find((m) => m.name === name);
    const result = await continueNativeState(t.page, model);
    expect(result.text).toBe(model.expected);
    expect(result.stats.cachedTokens).toBeGreaterThan(result.stats.promptTokens - 12);
    expect(result.savedSha256).toBe(model.stateSha256);
    expect(result.fromOpfs).toBe(model.expected);
    // (The test page has no icon: Chromium's request for one is no error of ours.)
    expect(t.pageErrors.filter((e) => !e.includes('/favicon.ico'))).toEqual([]);
  });

  it('a session: each turn reuses the turns before, with the replies of an engine that reuses nothing', async () => {
    const { turns, messages } = await sessionTurns(t.page, '/models/stories260K.gguf');
    expect(messages).toBe(7);
    for (const [i, turn] of turns.entries()) {
      expect(turn.reply).toBe(turn.fresh);
      if (i > 0) expect(turn.cachedTokens).toBeGreaterThan(turns[i - 1].promptTokens - 2);
    }
  });
});
