// Shared by the browser tests: a browser engine on the test page (index.html)
// served by tools/serve.mjs, with a log of the requests the server saw. Each
// engine is Debian's build (never a downloaded one) behind a small driver
// (drivers/): Chromium through playwright-core, Firefox ESR through
// puppeteer-core (WebDriver BiDi), WebKitGTK through WebKitWebDriver.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { startServer } from '../../tools/serve.mjs';
import { repoRoot } from '../js/helpers.mjs';
import { launchChromium } from './drivers/chromium.mjs';
import { launchFirefox } from './drivers/firefox.mjs';
import { launchWebKit } from './drivers/webkit.mjs';

// What each engine can do that the tests expect of it: relaxedSimd, whether
// it runs wasm relaxed SIMD (the engine then loads its relaxed build);
// threads, whether a cross-origin isolated page gets SharedArrayBuffer
// (WebKitGTK reports isolation without it: the single-thread build runs);
// opfs, whether the page has a usable OPFS (WebKitWebDriver's sessions are
// private, and there OPFS rejects every call, as in Safari's Private
// Browsing: models load but are not kept); retry, when a failed test runs
// again. WebKitGTK's JavaScriptCore (2.50, x86-64) now and then traps in wasm
// that runs without fault on the same input every other time (measurements:
// docs/performance.md, "Measurements behind the code"). The engine reports a
// trap as a crash (worker/serve.js): only a test that failed with one runs
// again, twice at most.
const ENGINES = {
  chromium: { launch: launchChromium, relaxedSimd: true, threads: true, opfs: true, retry: 0 },
  firefox: { launch: launchFirefox, relaxedSimd: true, threads: true, opfs: true, retry: 0 },
  webkit: {
    launch: launchWebKit, relaxedSimd: false, threads: false, opfs: false,
    retry: { count: 2, condition: /the engine crashed/ },
  },
};

// The engines the cross-engine tests run in: all, or those named in
// WASM_LLM_BROWSERS (comma-separated), e.g. WASM_LLM_BROWSERS=firefox.
export const browsers = (process.env.WASM_LLM_BROWSERS ?? Object.keys(ENGINES).join(','))
  .split(',')
  .map((name) => {
    if (!ENGINES[name]) throw new Error(`WASM_LLM_BROWSERS: unknown browser ${name} (${Object.keys(ENGINES).join(', ')})`);
    const { relaxedSimd, threads, opfs, retry } = ENGINES[name];
    return { name, relaxedSimd, threads, opfs, retry };
  });

// A fresh profile of `browser` (default chromium) on the test page.
// isolated: serve with COOP/COEP (threads); mounts: more folders for the
// server; models: its /models/ folder (default ../shared/models; null: none);
// root, pagePath and readyGlobal: another page to open (served from root),
// ready once window[readyGlobal] exists (or, with readySelector, once that
// element does); readyTimeout: how long to wait for that (a page whose
// scripts run a long program before returning needs longer); initScript:
// code run in the page before its own scripts (Chromium and Firefox).
// Resolves to {browser, version, evaluate(fn, arg), reload(), pageErrors,
// origin, requests, requestsFor(path), answering(path, handler, body),
// close()} and, in Chromium, page (playwright's). evaluate runs fn(arg) in the
// page and resolves to its result (JSON-like values); pageErrors collects the
// page's uncaught errors (and console errors, where the driver sees them) from
// its first script on. answering has the server answer requests for `path`
// with handler(req, res, headers) while body() runs: in every engine, where
// Playwright's routes reach only Chromium, and a route added after workers came
// and went in the page takes seconds to set up. close() ends the browser and
// the server, and runs even if opening failed halfway.
export async function openTestPage({
  browser = 'chromium', isolated = true, mounts = {}, models, root, pagePath = 'tests/browser/index.html',
  readyGlobal = 'wasmLlm', readySelector, readyTimeout = 30_000, initScript,
} = {}) {
  const requests = [];
  const answers = new Map();  // URL path -> handler(req, res, headers)
  let server = null;
  let driver = null;
  const close = async () => {
    await driver?.close();
    await server?.close();
  };
  try {
    server = await startServer({
      port: 0, isolated, mounts, models, root, onRequest: (r) => requests.push(r), answerFor: (p) => answers.get(p),
    });
    driver = await ENGINES[browser].launch({ initScript });
    await driver.goto(`${server.url}${pagePath}`);
    const ready = () => (readySelector
      ? driver.waitFor((selector) => document.querySelector(selector), readySelector, readyTimeout)
      : driver.waitFor((name) => window[name], readyGlobal, readyTimeout));
    await ready();
    return {
      browser,
      version: driver.version,
      page: driver.page,
      pageErrors: driver.pageErrors,
      evaluate: driver.evaluate,
      reload: async () => {
        await driver.reload();
        await ready();
      },
      origin: server.url.replace(/\/$/, ''),
      requests,
      requestsFor: (urlPath) => requests.filter((r) => r.path === urlPath),
      answering: async (urlPath, handler, body) => {
        answers.set(urlPath, handler);
        try {
          return await body();
        } finally {
          answers.delete(urlPath);
        }
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

// The engine worker's script, as pages start it (js/browser/platform.js).
export const ENGINE_WORKER = '/worker/browser-worker.js';

// Makes t's page start its engine workers from test scripts: the next ones
// from `next` (one each, in order), then every one from `always` (null: the
// real one). It counts, in the page: window.engineWorkersStarted, the engine
// workers started; window.engineWorkersReplaced, those ended before they were
// ready (LLM.load used another, or failed); window.engineWorkersRunning,
// those not ended; window.engineWorkerStallWarnings, LLM.load's warnings that
// it ended workers stalled creating their threads (a Firefox fault).
export function replaceEngineWorker(t, { next = [], always = null } = {}) {
  return t.evaluate(({ next, always, engineWorker }) => {
    window.engineWorkerScripts = { next, always };
    if (window.BrowserWorker) return;
    window.engineWorkersStarted = 0;
    window.engineWorkersReplaced = 0;
    window.engineWorkersRunning = 0;
    window.engineWorkerStallWarnings = 0;
    const warn = console.warn;
    console.warn = (...args) => {
      if (/stalled creating thread workers/.test(String(args[0]))) window.engineWorkerStallWarnings += 1;
      warn.apply(console, args);
    };
    window.BrowserWorker = window.Worker;
    window.Worker = class extends window.BrowserWorker {
      #isEngine;
      #ready = false;
      #ended = false;
      constructor(url, options) {
        const scripts = window.engineWorkerScripts;
        const isEngine = new URL(url, location.href).pathname === engineWorker;
        super(isEngine ? (scripts.next.shift() ?? scripts.always ?? url) : url, options);
        this.#isEngine = isEngine;
        if (!isEngine) return;
        window.engineWorkersStarted += 1;
        window.engineWorkersRunning += 1;
        // Registered before LLM's own listener, so set when that one sees 'ready'.
        this.addEventListener('message', ({ data }) => {
          if (data?.type === 'ready') this.#ready = true;
        });
      }

      terminate() {
        if (this.#isEngine && !this.#ended) {
          this.#ended = true;
          window.engineWorkersRunning -= 1;
          if (!this.#ready) window.engineWorkersReplaced += 1;
        }
        super.terminate();
      }
    };
  }, { next, always, engineWorker: ENGINE_WORKER });
}

// A random-weight model of the stories15M shape with a 2048-token context:
// small to download, yet a long generation takes seconds (for abort tests).
// Written into `dir` once; resolves to its file name.
export async function slowModel(dir) {
  const file = path.join(dir, 'slow-stories15M.gguf');
  if (!fs.existsSync(file)) {
    await promisify(execFile)(path.join(repoRoot, 'build/native/wasm-llm'), [
      'synth', '--shape', 'stories15M', '--type', 'q8_0', '--ctx', '2048',
      '--vocab', path.resolve(repoRoot, '../shared/models/vocab/ggml-vocab-llama-spm.gguf'), '-o', file,
    ]);
  }
  return path.basename(file);
}
