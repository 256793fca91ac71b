// Shared by the browser tests: Debian's Chromium (never a downloaded one),
// driven by playwright-core, on the test page (index.html) served by
// tools/serve.mjs, with a log of the requests the server saw.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import { startServer } from '../../tools/serve.mjs';
import { repoRoot } from '../js/helpers.mjs';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync',
];

// A fresh Chromium profile on the test page. isolated: serve with COOP/COEP
// (threads); mounts: more folders for the server; models: its /models/
// folder (default ../shared/models; null: none); root, pagePath and
// readyGlobal: another page to open (served from root), ready once
// window[readyGlobal] exists (or, with readySelector, once that element does);
// readyTimeout: how long to wait for that (a page whose scripts run a long
// program before returning needs longer); initScript: code run in the page
// before its own scripts.
// Resolves to {page, origin, requests, requestsFor(path), pageErrors, close()};
// pageErrors collects the page's uncaught errors and console errors from its
// first script on. close() ends Chromium and the server and removes the
// profile, and runs even if opening failed halfway.
export async function openTestPage({
  isolated = true, mounts = {}, models, root, pagePath = 'tests/browser/index.html', readyGlobal = 'wasmLlm', readySelector,
  readyTimeout = 30_000, initScript,
} = {}) {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run tools/setup.sh (apt package chromium)`);
  const requests = [];
  let server = null;
  let context = null;
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-chromium-'));
  const close = async () => {
    await context?.close().catch(() => {});
    await server?.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  };
  try {
    server = await startServer({ port: 0, isolated, mounts, models, root, onRequest: (r) => requests.push(r) });
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
    });
    if (initScript) await context.addInitScript(initScript);
    const page = context.pages()[0] ?? (await context.newPage());
    const pageErrors = [];
    page.on('pageerror', (error) => pageErrors.push(`uncaught: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(`console: ${message.text()} (${message.location().url})`);
    });
    await page.goto(`${server.url}${pagePath}`);
    if (readySelector) await page.waitForSelector(readySelector, { timeout: readyTimeout });
    else await page.waitForFunction((name) => window[name], readyGlobal, { timeout: readyTimeout });
    return {
      page,
      pageErrors,
      origin: server.url.replace(/\/$/, ''),
      requests,
      requestsFor: (urlPath) => requests.filter((r) => r.path === urlPath),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
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
