// What a user installs: `npm pack` the package, install the tarball into a
// fresh folder without dev dependencies, and generate text from an ES module
// script, a CommonJS script and the `wasm-llm` command.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelPath, nativeContinuation, repoRoot } from './helpers.mjs';

const execFileP = promisify(execFile);
const npm = (args, cwd) => execFileP('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'],
  { cwd, maxBuffer: 64 << 20 });
const prompt = 'Once upon a time';
let dir;
let packed;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-package-'));
  // npm test has just built dist/; skip prepack's rebuild.
  const { stdout } = await npm(['pack', '--json', '--ignore-scripts', '--pack-destination', dir], repoRoot);
  packed = JSON.parse(stdout)[0];
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }));
  await npm(['install', '--omit=dev', '--prefer-offline', path.join(dir, packed.filename)], dir);
}, 300_000);

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function node(file, source, flags = []) {
  fs.writeFileSync(path.join(dir, file), source);
  const { stdout } = await execFileP(process.execPath, [...flags, file], { cwd: dir, env: { ...process.env, MODEL: modelPath } });
  return stdout;
}

// Whether this Node can require() an ES module, and can be told not to (as Node before 20.19 and 22.12).
const requiresEsm = Boolean(process.features.require_module);
const canRefuseRequireEsm = process.allowedNodeEnvironmentFlags.has('--no-experimental-require-module');

describe('the packed package', () => {
  it('holds the runtime and no sources or tests', () => {
    const files = packed.files.map((f) => f.path);
    for (const f of ['js/index.js', 'js/index.cjs', 'js/index.d.ts', 'js/node/cli.js', 'worker/node-worker.js',
      'js/browser.js', 'worker/browser-worker.js', 'worker/relaxed-simd.js', 'dist/wasm/wasm-llm-mt-web.js',
      'dist/wasm/wasm-llm-mt-web.worker.js', 'dist/wasm/wasm-llm-st-web.wasm', 'dist/wasm/wasm-llm-mt-relaxed-web.worker.js',
      'dist/wasm/wasm-llm-st-relaxed-web.wasm', 'dist/wasm/wasm-llm-mt.wasm', 'dist/wasm/wasm-llm-st.wasm',
      'dist/wasm/wasm-llm-mt-relaxed.worker.js', 'dist/wasm/wasm-llm-st-relaxed.wasm', 'dist/wasm/wasm-llm-cli.wasm',
      'dist/wasm/wasm-llm-cli-relaxed.worker.js', 'package.json']) {
      expect(files).toContain(f);
    }
    expect(files.filter((f) => /^(cpp|tests|tools|bench|build)\//.test(f))).toEqual([]);
    expect(fs.existsSync(path.join(dir, 'node_modules/node-llama-cpp'))).toBe(false);  // no dev dependencies
  });

  it('holds every file the README links to, so its links work in node_modules and on the registry', () => {
    const files = new Set(packed.files.map((f) => f.path));
    const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
    const targets = [...readme.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)].map((m) => m[1]).filter((t) => !/^[a-z]+:/.test(t));
    expect(targets.length).toBeGreaterThan(3);
    for (const target of targets) expect(files, target).toContain(path.posix.normalize(target));
  });

  it('generates from an ES module script', async () => {
    const out = await node('esm.mjs', `
      import { LLM } from 'wasm-llm';
      const llm = await LLM.load(process.env.MODEL, { threads: 2 });
      process.stdout.write(await llm.generate(${JSON.stringify(prompt)}, { maxTokens: 40, temperature: 0 }));
      await llm.dispose();
    `);
    expect(out).toBe(await nativeContinuation(prompt, ['-n', '40', '--temp', '0']));
  });

  it('generates from a CommonJS script', async () => {
    const out = await node('cjs.cjs', `
      const { LLM } = require('wasm-llm');
      LLM.load(process.env.MODEL, { threads: 1 }).then(async (llm) => {
        process.stdout.write(await llm.generate(${JSON.stringify(prompt)}, { maxTokens: 40, temperature: 0.7, seed: 3 }));
        await llm.dispose();
      });
    `);
    expect(out).toBe(await nativeContinuation(prompt, ['-n', '40', '--temp', '0.7', '--seed', '3']));
  });

  it.runIf(requiresEsm)('gives CommonJS the whole API where Node can require() an ES module', async () => {
    const out = await node('whole.cjs', `
      const { LLM, LLMError, LoadError, MODELS, DEFAULT_MODEL, api } = require('wasm-llm');
      (async () => {
        const esm = await api();
        const failure = await LLM.load('/no/such/model.gguf').catch((e) => e);
        const llm = await LLM.load(process.env.MODEL, { threads: 1 });
        const reply = await llm.chat([{ role: 'user', content: 'Hi' }], { maxTokens: 4, temperature: 0 });
        await llm.dispose();
        console.log(JSON.stringify({
          same: LLM === esm.LLM && LLMError === esm.LLMError, notFound: failure instanceof LoadError && failure instanceof LLMError,
          cache: Array.isArray(await LLM.cache.list()), model: MODELS[DEFAULT_MODEL].file, role: reply.role,
        }));
      })();
    `);
    expect(JSON.parse(out)).toEqual({ same: true, notFound: true, cache: true, model: 'stories260K.gguf', role: 'assistant' });
  });

  it.runIf(canRefuseRequireEsm)('on a Node that cannot require() an ES module: LLM.load and api(), and the rest says what it needs', async () => {
    const out = await node('older.cjs', `
      const wasmLlm = require('wasm-llm');
      (async () => {
        const llm = await wasmLlm.LLM.load(process.env.MODEL, { threads: 1 });
        const text = await llm.generate('Once', { maxTokens: 4, temperature: 0 });
        await llm.dispose();
        const { LLMError } = await wasmLlm.api();
        let message;
        try {
          wasmLlm.LLMError;
        } catch (error) {
          message = error.message;
        }
        console.log(JSON.stringify({ keys: Object.keys(wasmLlm).sort(), text: typeof text, api: typeof LLMError, message }));
      })();
    `, ['--no-experimental-require-module']);
    const result = JSON.parse(out);
    expect(result).toMatchObject({ keys: ['LLM', 'api'], text: 'string', api: 'function' });
    expect(result.message).toMatch(/needs Node 20\.19, 22\.12 or later.*api\(\)\)\.LLMError/);
  });

  it('runs the wasm-llm command', async () => {
    const { stdout } = await execFileP(path.join(dir, 'node_modules/.bin/wasm-llm'),
      ['generate', '-m', modelPath, '-p', prompt, '-n', '30', '--temp', '0'], { cwd: dir });
    expect(stdout).toBe(`${prompt}${await nativeContinuation(prompt, ['-n', '30', '--temp', '0'])}\n`);
  });
});
