// wasm-llm as a dependency of an app that Vite builds for production: the
// package's browser condition, the worker found through new URL(...,
// import.meta.url), and the wasm files the bundler copies (and inlines) must
// still give a working engine — threaded on an isolated page, single-threaded
// otherwise, and in Chromium the relaxed-SIMD build of each — with the native
// CLI's text.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nativeContinuation, repoRoot } from '../js/helpers.mjs';
import { openTestPage } from './browser.mjs';

const prompt = 'Once upon a time';
let expected;
let appDir;

beforeAll(async () => {
  expected = await nativeContinuation(prompt, ['-n', '40', '--temp', '0']);
  // The app with this repository installed as its 'wasm-llm' package.
  appDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-vite-app-'));
  fs.cpSync(path.join(repoRoot, 'tests/browser/vite-app'), appDir, { recursive: true });
  fs.mkdirSync(path.join(appDir, 'node_modules/@huggingface'), { recursive: true });
  fs.symlinkSync(repoRoot, path.join(appDir, 'node_modules/wasm-llm'), 'dir');
  fs.symlinkSync(path.join(repoRoot, 'node_modules/@huggingface/jinja'), path.join(appDir, 'node_modules/@huggingface/jinja'), 'dir');
  await build({
    root: appDir,
    logLevel: 'error',
    configFile: false,
    worker: { format: 'es' },  // the engine worker is a module worker
    build: { outDir: path.join(appDir, 'dist'), target: 'es2022' },
  });
});

afterAll(() => fs.rmSync(appDir, { recursive: true, force: true }));

describe.each([
  { isolated: true, threaded: true },
  { isolated: false, threaded: false },
])('a Vite production build (isolated: $isolated)', ({ isolated, threaded }) => {
  let t;
  beforeAll(async () => {
    t = await openTestPage({ isolated, root: path.join(appDir, 'dist'), pagePath: '', readyGlobal: 'generateWith' });
  });
  afterAll(() => t?.close());

  it('loads and generates the native CLI text', { timeout: 60_000 }, async () => {
    const result = await t.page.evaluate(
      ({ prompt }) => window.generateWith('/models/stories260K.gguf', prompt, { maxTokens: 40, temperature: 0 }, { threads: 2 }),
      { prompt },
    );
    expect(result.info).toMatchObject({ threaded, threads: threaded ? 2 : 1, kernels: 'relaxed' });
    expect(result.stats.threadsUsed).toBe(threaded ? 2 : 1);
    expect(result.text).toBe(expected);
    // What was served came from the build, not from the repository.
    expect(t.requests.filter((r) => r.path.startsWith('/assets/')).length).toBeGreaterThan(3);
  });
});
