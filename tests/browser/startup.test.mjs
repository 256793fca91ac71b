// An engine worker that cannot start — its script, the wasm glue, the wasm
// binary or a pthread worker's script fails to load — rejects LLM.load with
// LoadError instead of leaving it waiting, and the page loads models again
// once the files are there. An engine worker stalled creating its threads (as
// Firefox now and then leaves one, and a busy machine can) gets another
// started beside it, twice at most, and the first ready is used; three stalled
// fail the load. WASM_LLM_START_CYCLES=400 also runs that many loads with 2
// threads in each engine, every one of which must load.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browsers, openTestPage, replaceEngineWorker } from './browser.mjs';

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

  // The files of the build Chromium gets on an isolated page (threaded, relaxed
  // SIMD), each answered with a 404 by the server: the pthread workers' script
  // too, which the engine worker's own workers fetch.
  it.each([
    ['the worker script', '/worker/browser-worker.js', /cannot start the engine worker/],
    ['the wasm glue', '/dist/wasm/wasm-llm-mt-relaxed-web.js', /cannot start the engine worker/],
    ['the wasm binary', '/dist/wasm/wasm-llm-mt-relaxed-web.wasm',
      /cannot start the engine worker: cannot fetch the wasm binary \S*\/wasm-llm-mt-relaxed-web\.wasm: HTTP 404/],
    ["a pthread worker's script", '/dist/wasm/wasm-llm-mt-relaxed-web.worker.js', /pthread worker failed to start/],
  ])('%s: LoadError, then loading works again', { timeout: 60_000 }, async (_, file, message) => {
    const notFound = (req, res, headers) => res.writeHead(404, headers).end('not found');
    const result = await t.answering(file, notFound, () => tryLoad(t.page));
    expect(result).toMatchObject({ name: 'LoadError', code: 'worker_failed', isLoadError: true });
    expect(result.message).toMatch(message);
    expect(await tryLoad(t.page)).toBe('loaded');
  });

  it('a load aborted while the wasm binary downloads rejects at once with AbortError', { timeout: 60_000 }, async () => {
    const held = [];  // the binary's requests, left unanswered: a stalled network
    const hold = (req, res) => held.push(res);
    try {
      const result = await t.answering('/dist/wasm/wasm-llm-mt-relaxed-web.wasm', hold, () => t.page.evaluate(async (url) => {
        const started = performance.now();
        try {
          await window.wasmLlm.LLM.load(url, { cache: false, signal: AbortSignal.timeout(500) });
          return 'loaded';
        } catch (error) {
          return { name: error.name, code: error.code, ms: performance.now() - started };
        }
      }, MODEL_PATH));
      expect(held.length).toBeGreaterThan(0);
      expect([result.name, result.code]).toEqual(['AbortError', 'aborted']);
      expect(result.ms).toBeLessThan(5000);
    } finally {
      for (const res of held) res.destroy();
    }
    expect(await tryLoad(t.page)).toBe('loaded');
  });
});

// Loads with `threads` in the page and disposes: {loaded, ms} or the error's
// {name, code, message}, with what the load left behind: workers (engine
// workers started), replaced (those ended unused), running (those not ended),
// warnings (of stalled workers ended).
function timedLoad(t, threads) {
  return t.evaluate(async ({ url, threads }) => {
    const started = performance.now();
    const counts = () => ({
      workers: window.engineWorkersStarted, replaced: window.engineWorkersReplaced,
      running: window.engineWorkersRunning, warnings: window.engineWorkerStallWarnings,
    });
    const before = counts();
    const since = () => {
      const now = counts();
      return {
        workers: now.workers - before.workers, replaced: now.replaced - before.replaced,
        running: now.running, warnings: now.warnings - before.warnings,
      };
    };
    try {
      const llm = await window.wasmLlm.LLM.load(url, { cache: false, threads });
      await llm.dispose();
      return { loaded: true, ms: performance.now() - started, ...since() };
    } catch (error) {
      return { name: error.name, code: error.code, message: error.message, ...since() };
    }
  }, { url: MODEL_PATH, threads });
}

// A worker as Firefox now and then leaves one (stuck-threads-worker.js), and
// one as slow as that, creating its thread workers but each after `ms`.
const STUCK_WORKER = '/tests/browser/stuck-threads-worker.js';
const slowWorker = (...ms) => `${STUCK_WORKER}?ms=${ms.join(',')}`;
const START_CYCLES = Number(process.env.WASM_LLM_START_CYCLES ?? 0);

// What every load that succeeds leaves: one worker used and running until
// disposed, every other one ended.
const LOADED = { loaded: true, running: 0 };
const usedOne = (result) => result.workers - result.replaced;

describe.each(browsers.filter((b) => b.threads))('$name: an engine worker stalled creating its threads', (browser) => {
  let t;
  beforeAll(async () => {
    t = await openTestPage({ browser: browser.name, isolated: true });
    await replaceEngineWorker(t);
  });
  afterAll(() => t?.close());

  it('slow, but never 5 s without creating one: it is used, no other started', { timeout: 60_000 }, async () => {
    await replaceEngineWorker(t, { next: [slowWorker(2000, 2000, 2000)] });
    const result = await timedLoad(t, 3);
    expect(result).toMatchObject({ ...LOADED, workers: 1, replaced: 0, warnings: 0 });
    expect(result.ms).toBeGreaterThan(6000);
  });

  it('stalled 7 s, then going on: it is used if ready first; the one started beside it is ended', { timeout: 60_000 }, async () => {
    // The one started beside it is stuck for good, so the slow one is ready first.
    await replaceEngineWorker(t, { next: [slowWorker(7000), STUCK_WORKER] });
    const result = await timedLoad(t, 2);
    expect(result).toMatchObject({ ...LOADED, workers: 2, replaced: 1, warnings: 0 });
    expect(result.ms).toBeGreaterThan(7000);
  });

  it('stuck twice in a row: a third worker is used, with a warning', { timeout: 60_000 }, async () => {
    await replaceEngineWorker(t, { next: [STUCK_WORKER, STUCK_WORKER] });
    const result = await timedLoad(t, 2);
    expect(result).toMatchObject({ ...LOADED, workers: 3, replaced: 2, warnings: 1 });
    expect(result.ms).toBeGreaterThan(10_000);  // each stuck one had its 5 s
  });

  it('stuck three times: the load rejects with LoadError worker_failed, and the next one loads', { timeout: 60_000 }, async () => {
    await replaceEngineWorker(t, { next: [STUCK_WORKER, STUCK_WORKER, STUCK_WORKER] });
    expect(await timedLoad(t, 2)).toEqual({
      name: 'LoadError', code: 'worker_failed', workers: 3, replaced: 3, running: 0, warnings: 0,
      message: 'cannot start the engine worker: it stalled creating its 2 thread workers: none created for 5 s (tried 3 times)',
    });
    // A busy machine may stall a worker that is not stuck: another then
    // starts beside it, but one is used, the rest ended, with no warning.
    const result = await timedLoad(t, 2);
    expect(result).toMatchObject({ ...LOADED, warnings: 0 });
    expect(usedOne(result)).toBe(1);
  });

  it.runIf(START_CYCLES > 0)(`${START_CYCLES} loads with 2 threads all load`, { timeout: START_CYCLES * 30_000 }, async () => {
    let unused = 0;
    for (let i = 0; i < START_CYCLES; i++) {
      const result = await timedLoad(t, 2);
      expect(result, `load ${i}`).toMatchObject(LOADED);
      expect(usedOne(result), `load ${i}`).toBe(1);
      unused += result.replaced;
    }
    console.log(`${browser.name}: ${START_CYCLES} loads with 2 threads, ${unused} more engine workers started and ended unused`);
  });
});
