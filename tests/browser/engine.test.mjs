// The engine in Chromium, through the browser entry (js/browser.js) and its
// module worker: the same text as the native CLI, streaming, abort, and the
// build each page gets — threaded (with pthreads that really run work) on a
// cross-origin isolated page, single-threaded on a page that is not.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nativeContinuation } from '../js/helpers.mjs';
import { openTestPage, slowModel } from './browser.mjs';

const MODEL_URL = '/models/stories260K.gguf';
const prompt = 'Once upon a time';
let expected;  // the native CLI's greedy 200 tokens
let scratchDir;
let slowModelUrl;

beforeAll(async () => {
  expected = await nativeContinuation(prompt, ['-n', '200', '--temp', '0']);
  scratchDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-browser-'));
  slowModelUrl = `/scratch/${await slowModel(scratchDir)}`;
});

afterAll(() => fs.rmSync(scratchDir, { recursive: true, force: true }));

// Loads `url` in the page with `options`, generates 200 greedy tokens and
// returns {text, info, stats, defaultThreads, isolated}.
function greedy200(page, url, options = {}) {
  return page.evaluate(
    async ({ url, options, prompt }) => {
      const llm = await window.wasmLlm.LLM.load(url, options);
      try {
        const text = await llm.generate(prompt, { maxTokens: 200, temperature: 0 });
        return {
          text,
          info: llm.info,
          stats: llm.lastStats,
          defaultThreads: crossOriginIsolated ? Math.min(4, navigator.hardwareConcurrency) : 1,
          isolated: crossOriginIsolated,
        };
      } finally {
        await llm.dispose();
      }
    },
    { url, options, prompt },
  );
}

// Shared by both builds: streaming, and abort while the worker is busy.
function streamingAndAbortTests(getPage) {
  it('streams: text arrives in pieces before the generation has finished', async () => {
    const result = await getPage().evaluate(
      async ({ url, prompt }) => {
        const llm = await window.wasmLlm.LLM.load(url);
        try {
          let text = '';
          let pieces = 0;
          let firstPieceBeforeEnd = null;
          for await (const piece of llm.stream(prompt, { maxTokens: 200, temperature: 0 })) {
            // lastStats is set only when the worker reports the generation done.
            if (pieces === 0) firstPieceBeforeEnd = llm.lastStats === undefined;
            pieces += 1;
            text += piece;
          }
          return { text, pieces, firstPieceBeforeEnd, generated: llm.lastStats.generatedTokens };
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
    const result = await getPage().evaluate(
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
}

describe('cross-origin isolated page: the threaded build', () => {
  let t;
  beforeAll(async () => {
    t = await openTestPage({ isolated: true, mounts: { '/scratch/': scratchDir } });
  });
  afterAll(() => t?.close());

  it('loads stories260K with the default threads and generates exactly the native CLI text (200 greedy tokens)', async () => {
    const result = await greedy200(t.page, MODEL_URL);
    expect(result.isolated).toBe(true);
    expect(result.info.threads).toBe(result.defaultThreads);
    expect(result.info.loadedFrom).toBe('network');
    expect(result.text).toBe(expected);
  });

  it('runs the work on several threads: every pthread worker of the pool executes tasks', async () => {
    const workerScript = '/dist/wasm/wasm-llm-mt-web.worker.js';
    const workersBefore = t.requestsFor(workerScript).length;
    const result = await greedy200(t.page, MODEL_URL, { threads: 3 });
    expect(result.info).toMatchObject({ threads: 3, threaded: true });
    // Each pool thread counts the tasks it runs (ThreadPool::tasks_run): all
    // three ran some during this generation — the page's worker and two pthreads.
    expect(result.stats.threadsUsed).toBe(3);
    // The pthreads are Web Workers started from the glue's worker script.
    expect(t.requestsFor(workerScript).length - workersBefore).toBeGreaterThanOrEqual(2);
    expect(result.text).toBe(expected);
  });

  streamingAndAbortTests(() => t.page);
});

describe('page without cross-origin isolation: the single-thread build', () => {
  let t;
  beforeAll(async () => {
    t = await openTestPage({ isolated: false, mounts: { '/scratch/': scratchDir } });
  });
  afterAll(() => t?.close());

  it('uses the single-thread build, even when asked for threads, and generates the same text', async () => {
    const result = await greedy200(t.page, MODEL_URL, { threads: 3 });
    expect(result.isolated).toBe(false);
    expect(result.info).toMatchObject({ threads: 1, threaded: false });
    expect(result.stats.threadsUsed).toBe(1);
    expect(result.text).toBe(expected);
    expect(t.requestsFor('/dist/wasm/wasm-llm-st-web.wasm')).toHaveLength(1);
    expect(t.requests.filter((r) => r.path.includes('wasm-llm-mt'))).toEqual([]);
  });

  it('defaults to one thread', async () => {
    const result = await greedy200(t.page, MODEL_URL);
    expect(result.info).toMatchObject({ threads: 1, threaded: false });
    expect(result.text).toBe(expected);
  });

  streamingAndAbortTests(() => t.page);
});
