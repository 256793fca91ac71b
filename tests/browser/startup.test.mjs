// An engine worker that cannot start — its script, the wasm glue, the wasm
// binary or a pthread worker's script fails to load — rejects LLM.load with
// LoadError instead of leaving it waiting, and the page loads models again
// once the files are there.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../js/helpers.mjs';
import { openTestPage } from './browser.mjs';

const MODEL_PATH = '/models/stories260K.gguf';

// The load's outcome in the page: 'loaded', or the error's name and message.
function tryLoad(page) {
  return page.evaluate(async (url) => {
    try {
      const llm = await window.wasmLlm.LLM.load(url, { cache: false });
      await llm.dispose();
      return 'loaded';
    } catch (error) {
      return {
        name: error.name, code: error.code, message: error.message, isLoadError: error instanceof window.wasmLlm.LoadError,
      };
    }
  }, MODEL_PATH);
}

describe('files that fail to load', () => {
  let t;
  beforeAll(async () => {
    t = await openTestPage({ isolated: true });
  });
  afterAll(() => t?.close());

  // The files of the build Chromium gets on an isolated page: threaded, relaxed SIMD.
  it.each([
    ['the worker script', '**/worker/browser-worker.js', /cannot start the engine worker/],
    ['the wasm glue', '**/dist/wasm/wasm-llm-mt-relaxed-web.js', /cannot start the engine worker/],
    ['the wasm binary', '**/dist/wasm/wasm-llm-mt-relaxed-web.wasm',
      /cannot start the engine worker: cannot fetch the wasm binary \S*\/wasm-llm-mt-relaxed-web\.wasm: HTTP 404/],
  ])('%s: LoadError, then loading works again', { timeout: 60_000 }, async (_, pattern, message) => {
    const context = t.page.context();
    await context.route(pattern, (route) => route.fulfill({ status: 404, body: 'not found' }));
    try {
      const result = await tryLoad(t.page);
      expect(result).toMatchObject({ name: 'LoadError', code: 'worker_failed', isLoadError: true });
      expect(result.message).toMatch(message);
    } finally {
      await context.unroute(pattern);
    }
    expect(await tryLoad(t.page)).toBe('loaded');
  });

  it('a load aborted while the wasm binary downloads rejects at once with AbortError', { timeout: 60_000 }, async () => {
    const pattern = '**/dist/wasm/wasm-llm-mt-relaxed-web.wasm';
    const context = t.page.context();
    const held = [];  // the binary's requests, left unanswered: a stalled network
    await context.route(pattern, (route) => held.push(route));
    try {
      const result = await t.page.evaluate(async (url) => {
        const started = performance.now();
        try {
          await window.wasmLlm.LLM.load(url, { cache: false, signal: AbortSignal.timeout(500) });
          return 'loaded';
        } catch (error) {
          return { name: error.name, code: error.code, ms: performance.now() - started };
        }
      }, MODEL_PATH);
      expect(held.length).toBeGreaterThan(0);
      expect([result.name, result.code]).toEqual(['AbortError', 'aborted']);
      expect(result.ms).toBeLessThan(5000);
    } finally {
      await context.unroute(pattern);
      await Promise.all(held.map((route) => route.abort().catch(() => {})));
    }
    expect(await tryLoad(t.page)).toBe('loaded');
  });
});

// Playwright's routes do not reach the pthread workers (workers started by a
// worker), so this page's server has a /dist/wasm/ without their script.
describe('a pthread worker script that fails to load', () => {
  let t;
  let glueDir;
  beforeAll(async () => {
    glueDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-glue-'));
    for (const name of fs.readdirSync(path.join(repoRoot, 'dist/wasm'))) {
      if (name !== 'wasm-llm-mt-relaxed-web.worker.js') fs.copyFileSync(path.join(repoRoot, 'dist/wasm', name), path.join(glueDir, name));
    }
    t = await openTestPage({ isolated: true, mounts: { '/dist/wasm/': glueDir } });
  });
  afterAll(async () => {
    await t?.close();
    fs.rmSync(glueDir, { recursive: true, force: true });
  });

  it('rejects the load with LoadError instead of hanging', { timeout: 30_000 }, async () => {
    const result = await tryLoad(t.page);
    expect(result).toMatchObject({ name: 'LoadError', code: 'worker_failed', isLoadError: true });
    expect(result.message).toMatch(/pthread worker failed to start/);
  });
});
