// The engine in every browser engine (Chromium, Firefox, WebKit: the same
// tests in each, through browser.mjs's drivers), through the browser entry
// (js/browser.js) and its module worker: the same text as the native CLI,
// greedy and seeded, streaming, abort, and the build each page gets —
// threaded (with pthreads that really run work) on a cross-origin isolated
// page where the engine has SharedArrayBuffer, single-threaded on a page that
// is not and in WebKit, each compiled with relaxed SIMD where the engine runs
// it unless the caller opts out. Chromium also runs every architecture.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { architectureModel, architectures } from '../reference/architectures.mjs';
import { fullMatrix, modelCache } from '../reference/reference.mjs';
import { nativeContinuation, syntheticModel } from '../js/helpers.mjs';
import { browsers, openTestPage, slowModel } from './browser.mjs';

const MODEL_URL = '/models/stories260K.gguf';
const prompt = 'Once upon a time';
// Quantized models whose matrices go through the relaxed build's own kernels
// (stories260K is f32): q4_0 (and its q6_K output), and q4_K_M (q4_K, q6_K).
// Their prompt (23 tokens) takes several gemm tiles and a partial one.
const QUANTIZED = [
  { type: 'q4_0', tensorTypes: { q4_0: 29, q6_K: 1 } },
  { type: 'q4_K_M', tensorTypes: { q4_K: 25, q6_K: 5 } },
];
const quantizedPrompt = 'Once upon a time, there was a little girl named Lily. She loved to play in the park.';
const QUANTIZED_TOKENS = 100;
// Every architecture beyond llama (tests/reference/architectures.mjs) in q4_0,
// long enough to cross the sliding windows and wrap the local layers' ring:
// {arch, url, greedy, seeded} with the native CLI's texts.
const ARCHITECTURE_TOKENS = 120;
const SEEDED = {
  js: { temperature: 0.8, seed: 42, topK: 40, topP: 0.9 },
  cli: ['--temp', '0.8', '--seed', '42', '--top-k', '40', '--top-p', '0.9'],
};
const ARCHITECTURES = [];
let expected;  // the native CLI's greedy 200 tokens
let expectedSeeded;  // and 200 sampled with SEEDED
let scratchDir;
let slowModelUrl;

beforeAll(async () => {
  expected = await nativeContinuation(prompt, ['-n', '200', '--temp', '0']);
  expectedSeeded = await nativeContinuation(prompt, ['-n', '200', ...SEEDED.cli]);
  scratchDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-browser-'));
  slowModelUrl = `/scratch/${await slowModel(scratchDir)}`;
  for (const model of QUANTIZED) {
    const file = await syntheticModel(model.type);
    model.file = path.basename(file);
    fs.copyFileSync(file, path.join(scratchDir, model.file));  // served from /scratch/
    model.expected = await nativeContinuation(quantizedPrompt, ['-n', String(QUANTIZED_TOKENS), '--temp', '0'], file);
  }
  for (const row of architectures) {
    const file = await architectureModel(row, 'q4_0');
    const n = ['-n', String(ARCHITECTURE_TOKENS)];
    ARCHITECTURES.push({
      arch: row.arch,
      url: `/build-models/${path.basename(file)}`,
      greedy: await nativeContinuation(quantizedPrompt, [...n, '--temp', '0'], file),
      seeded: await nativeContinuation(quantizedPrompt, [...n, ...SEEDED.cli], file),
    });
  }
});

afterAll(() => fs.rmSync(scratchDir, { recursive: true, force: true }));

// Loads `url` in the page with `options`, generates `maxTokens` greedy tokens
// after `text` (and as many sampled with `seeded`, if given) and returns
// {text, seededText, info, stats, defaultThreads, isolated}.
function greedy(t, url, options = {}, { text = prompt, maxTokens = 200, seeded } = {}) {
  return t.evaluate(
    async ({ url, options, prompt, maxTokens, seeded }) => {
      const llm = await window.wasmLlm.LLM.load(url, options);
      try {
        let stats;
        const text = await llm.generate(prompt, { maxTokens, temperature: 0, onStats: (s) => (stats = s) });
        const seededText = seeded && (await llm.generate(prompt, { maxTokens, ...seeded }));
        return {
          text,
          seededText,
          info: llm.info,
          stats,
          defaultThreads: crossOriginIsolated ? Math.min(4, navigator.hardwareConcurrency) : 1,
          isolated: crossOriginIsolated,
        };
      } finally {
        await llm.dispose();
      }
    },
    { url, options, prompt: text, maxTokens, seeded },
  );
}

// Shared by both pages: the relaxed-SIMD build by default where the browser
// runs it (else the SIMD128 one), the SIMD128 one with relaxedSimd: false,
// each fetching only its own wasm file; both give the native CLI's text, on
// stories260K and on the quantized models.
function kernelTests(getTestPage, browser, variant) {
  const relaxed = { options: {}, kernels: 'relaxed', build: `${variant}-relaxed-web`, other: `${variant}-web` };
  const simd128 = { options: { relaxedSimd: false }, kernels: 'simd128', build: `${variant}-web`, other: `${variant}-relaxed-web` };
  const rows = browser.relaxedSimd ? [relaxed, simd128] : [{ ...simd128, options: {} }];
  it.each(rows)('load options $options: $kernels kernels, the native CLI text', async ({ options, kernels, build, other }) => {
    const t = getTestPage();
    const fetches = (name) => t.requestsFor(`/dist/wasm/wasm-llm-${name}.wasm`).length;
    const before = { build: fetches(build), other: fetches(other) };
    const f32 = await greedy(t, MODEL_URL, options);
    expect(f32.info).toMatchObject({ kernels, threaded: variant === 'mt' });
    expect(f32.text).toBe(expected);
    for (const model of QUANTIZED) {
      const result = await greedy(t, `/scratch/${model.file}`, options, {
        text: quantizedPrompt, maxTokens: QUANTIZED_TOKENS,
      });
      expect(result.info).toMatchObject({ kernels, tensorTypes: model.tensorTypes });
      expect(result.stats.generatedTokens).toBe(QUANTIZED_TOKENS);
      expect(result.text, model.type).toBe(model.expected);
    }
    expect(fetches(build) - before.build).toBe(1 + QUANTIZED.length);
    expect(fetches(other) - before.other).toBe(0);
  });
}

// Shared by both pages: streaming, abort while the worker is busy, and a
// throwing callback.
function streamingAndAbortTests(getTestPage) {
  it('streams: text arrives in pieces before the generation has finished', async () => {
    const result = await getTestPage().evaluate(
      async ({ url, prompt }) => {
        const llm = await window.wasmLlm.LLM.load(url);
        try {
          let text = '';
          let pieces = 0;
          let firstPieceBeforeEnd = null;
          let stats;
          const stream = llm.stream(prompt, { maxTokens: 200, temperature: 0, onStats: (s) => (stats = s) });
          for (let next = await stream.next(); ; next = await stream.next()) {
            // The stats come when the worker reports the generation done; the
            // stream returns them.
            if (next.done) return { text, pieces, firstPieceBeforeEnd, generated: next.value.generatedTokens };
            if (pieces === 0) firstPieceBeforeEnd = stats === undefined;
            pieces += 1;
            text += next.value;
          }
        } finally {
          await llm.dispose();
        }
      },
      { url: MODEL_URL, prompt },
    );
    expect(result.firstPieceBeforeEnd).toBe(true);
    expect(result.pieces).toBeGreaterThan(100);
    expect(result.generated).toBe(200);
    expect(result.text).toBe(expected);
  });

  it('aborts a long generation within a fraction of a second; the worker stops and serves the next request', async () => {
    const result = await getTestPage().evaluate(
      async ({ url, prompt }) => {
        const llm = await window.wasmLlm.LLM.load(url);
        try {
          let started = performance.now();
          const hundred = await llm.generate(prompt, { maxTokens: 100, temperature: 0 });
          const hundredMs = performance.now() - started;

          // 2000 tokens would take 20 times as long: abort after 20.
          const controller = new AbortController();
          let pieces = 0;
          let abortedAt = 0;
          const error = await llm
            .generate(prompt, {
              maxTokens: 2000,
              temperature: 0,
              signal: controller.signal,
              onToken: () => {
                pieces += 1;
                if (pieces === 20) {
                  abortedAt = performance.now();
                  controller.abort();
                }
              },
            })
            .then(() => null, (e) => e);
          const rejectMs = performance.now() - abortedAt;

          // Queued behind the aborted generation: fast only if the worker stopped it.
          started = performance.now();
          const next = await llm.generate(prompt, { maxTokens: 5, temperature: 0 });
          const nextMs = performance.now() - started;
          return { hundred, hundredMs, error: error && { name: error.name }, rejectMs, next, nextMs };
        } finally {
          await llm.dispose();
        }
      },
      { url: slowModelUrl, prompt },
    );
    expect(result.error).toEqual({ name: 'AbortError' });
    expect(result.rejectMs).toBeLessThan(250);
    // The remaining 1980 tokens would take about 20 × hundredMs.
    expect(result.nextMs).toBeLessThan(Math.max(3 * result.hundredMs, 500));
    expect(result.next.length).toBeGreaterThan(0);
    expect(result.hundred.startsWith(result.next)).toBe(true);  // a fresh start, same greedy path
  });

  it('a throwing onToken rejects that generation with its error, raises no page error, and the model keeps serving', async () => {
    const t = getTestPage();
    const errorsBefore = t.pageErrors.length;
    const result = await t.evaluate(async ({ url, prompt }) => {
      const llm = await window.wasmLlm.LLM.load(url);
      try {
        const thrown = new Error('from onToken');
        let calls = 0;
        const error = await llm.generate(prompt, {
          maxTokens: 50, temperature: 0, onToken: () => { calls += 1; throw thrown; },
        }).then(() => null, (e) => e);
        const next = await llm.generate(prompt, { maxTokens: 200, temperature: 0 });
        return { same: error === thrown, calls, next };
      } finally {
        await llm.dispose();
      }
    }, { url: MODEL_URL, prompt });
    expect(result).toEqual({ same: true, calls: 1, next: expected });
    expect(t.pageErrors.slice(errorsBefore)).toEqual([]);
  });
}

for (const browser of browsers) describe(browser.name, { retry: browser.retry }, () => {
  // WebKitGTK reports crossOriginIsolated without SharedArrayBuffer: there
  // the isolated page gets the single-thread build too.
  const isolatedVariant = browser.threads ? 'mt' : 'st';

  describe('cross-origin isolated page', () => {
    let t;
    beforeAll(async () => {
      t = await openTestPage({
        browser: browser.name, isolated: true, mounts: { '/scratch/': scratchDir, '/build-models/': modelCache },
      });
    });
    afterAll(() => t?.close());

    it('loads stories260K with the default threads and generates exactly the native CLI text, greedy and seeded (200 tokens)', async () => {
      const result = await greedy(t, MODEL_URL, {}, { seeded: SEEDED.js });
      expect(result.isolated).toBe(true);
      expect(result.info.threads).toBe(browser.threads ? result.defaultThreads : 1);
      expect(result.info.loadedFrom).toBe('network');
      expect(result.text).toBe(expected);
      expect(result.seededText).toBe(expectedSeeded);
    });

    if (browser.threads) {
      it('runs the work on several threads: every pthread worker of the pool executes tasks', async () => {
        const workerScript = `/dist/wasm/wasm-llm-mt${browser.relaxedSimd ? '-relaxed' : ''}-web.worker.js`;
        const workersBefore = t.requestsFor(workerScript).length;
        const result = await greedy(t, MODEL_URL, { threads: 3 });
        expect(result.info).toMatchObject({ threads: 3, threaded: true });
        // Each pool thread counts the tasks it runs (ThreadPool::tasks_run): all
        // three ran some during this generation — the page's worker and two pthreads.
        expect(result.stats.threadsUsed).toBe(3);
        // The pthreads are Web Workers started from the glue's worker script.
        expect(t.requestsFor(workerScript).length - workersBefore).toBeGreaterThanOrEqual(2);
        expect(result.text).toBe(expected);
      });
    } else {
      it('has no SharedArrayBuffer: asked for threads, runs the single-thread build, fetching nothing threaded', async () => {
        const result = await greedy(t, MODEL_URL, { threads: 3 });
        expect(result.isolated).toBe(true);
        expect(await t.evaluate(() => typeof SharedArrayBuffer)).toBe('undefined');
        expect(result.info).toMatchObject({ threads: 1, threaded: false });
        expect(result.stats.threadsUsed).toBe(1);
        expect(result.text).toBe(expected);
        expect(t.requests.filter((r) => r.path.includes('wasm-llm-mt'))).toEqual([]);
        expect(t.pageErrors).toEqual([]);
      });
    }

    kernelTests(() => t, browser, isolatedVariant);
    streamingAndAbortTests(() => t);

    if (browser.name === 'chromium') {
      it('runs every architecture with 2 threads: the native CLI text, greedy and seeded', () =>
        expectEveryArchitecture(t, 2));
    }
  });

  // A page without isolation runs the single-thread builds in every engine:
  // npm test checks it in Chromium (WebKit's isolated page runs them too),
  // test:full in every engine.
  describe.runIf(fullMatrix || browser.name === 'chromium')('page without cross-origin isolation', () => {
    let t;
    beforeAll(async () => {
      t = await openTestPage({
        browser: browser.name, isolated: false, mounts: { '/scratch/': scratchDir, '/build-models/': modelCache },
      });
    });
    afterAll(() => t?.close());

    it('uses the single-thread build, one thread by default and even when asked for more, with the same text', async () => {
      const byDefault = await greedy(t, MODEL_URL);
      expect(byDefault.isolated).toBe(false);
      expect(byDefault.info).toMatchObject({ threads: 1, threaded: false });
      expect(byDefault.text).toBe(expected);
      const asked = await greedy(t, MODEL_URL, { threads: 3 });
      expect(asked.info).toMatchObject({ threads: 1, threaded: false });
      expect(asked.stats.threadsUsed).toBe(1);
      expect(asked.text).toBe(expected);
      const build = browser.relaxedSimd ? 'st-relaxed-web' : 'st-web';
      expect(t.requestsFor(`/dist/wasm/wasm-llm-${build}.wasm`)).toHaveLength(2);
      expect(t.requests.filter((r) => r.path.includes('wasm-llm-mt'))).toEqual([]);
    });

    kernelTests(() => t, browser, 'st');
    streamingAndAbortTests(() => t);

    // npm test: every architecture runs in the threaded build above, and in Node (parity.test.mjs).
    if (browser.name === 'chromium' && fullMatrix) {
      it('runs every architecture in the single-thread build: the native CLI text, greedy and seeded', () =>
        expectEveryArchitecture(t, 1));
    }
  });
});

// Every architecture's greedy and seeded text in the page of `t` with
// `threads` threads: the native CLI's.
async function expectEveryArchitecture(t, threads) {
  for (const model of ARCHITECTURES) {
    const result = await t.evaluate(
      async ({ url, threads, prompt, maxTokens, seeded }) => {
        const llm = await window.wasmLlm.LLM.load(url, { threads });
        try {
          const greedy = await llm.generate(prompt, { maxTokens, temperature: 0 });
          const sampled = await llm.generate(prompt, { maxTokens, ...seeded });
          return { architecture: llm.info.architecture, threads: llm.info.threads, greedy, seeded: sampled };
        } finally {
          await llm.dispose();
        }
      },
      { url: model.url, threads, prompt: quantizedPrompt, maxTokens: ARCHITECTURE_TOKENS, seeded: SEEDED.js },
    );
    expect(result.architecture).toBe(model.arch);
    expect(result.threads).toBe(threads);
    expect(result.greedy, model.arch).toBe(model.greedy);
    expect(result.seeded, model.arch).toBe(model.seeded);
  }
}

// WebKit reports crossOriginIsolated without SharedArrayBuffer (tested there
// above). Chromium is made to look so: SharedArrayBuffer is deleted in the
// page (an init script) and in the engine worker (its script, rewritten on the
// way). The engine must pick the single-thread build from what it can use.
describe.runIf(browsers.some((b) => b.name === 'chromium'))('Chromium: cross-origin isolated page without SharedArrayBuffer: the single-thread build', () => {
  const deleteSab = 'delete globalThis.SharedArrayBuffer;';
  const workerPattern = '**/worker/browser-worker.js';
  const pageErrors = () => t.pageErrors.filter((e) => !e.includes('/favicon.ico'));  // the page has none
  let t;
  beforeAll(async () => {
    t = await openTestPage({ isolated: true, initScript: deleteSab });
    await t.page.context().route(workerPattern, async (route) => {
      const response = await route.fetch();
      await route.fulfill({ response, body: `${deleteSab}\n${await response.text()}` });
    });
  });
  afterAll(() => t?.close());

  it('in the page and in the worker (as WebKit): loads with 1 thread and generates the native CLI text', async () => {
    const result = await greedy(t, MODEL_URL, { threads: 3 });
    expect(result.isolated).toBe(true);
    expect(result.info).toMatchObject({ threads: 1, threaded: false });
    expect(result.text).toBe(expected);
    expect(pageErrors()).toEqual([]);
  });

  it('in the worker only: the worker falls back to the single-thread build itself', async () => {
    await t.reload();
    await t.evaluate(() => {
      globalThis.SharedArrayBuffer = new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true }).buffer.constructor;
    });
    const result = await greedy(t, MODEL_URL, { threads: 3 });
    expect(result.info).toMatchObject({ threads: 1, threaded: false });
    expect(result.text).toBe(expected);
    expect(t.requests.filter((r) => r.path.includes('wasm-llm-mt'))).toEqual([]);
    expect(pageErrors()).toEqual([]);
  });
});
