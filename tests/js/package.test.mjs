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

async function node(file, source) {
  fs.writeFileSync(path.join(dir, file), source);
  const { stdout } = await execFileP(process.execPath, [file], { cwd: dir, env: { ...process.env, MODEL: modelPath } });
  return stdout;
}

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

  it('runs the wasm-llm command', async () => {
    const { stdout } = await execFileP(path.join(dir, 'node_modules/.bin/wasm-llm'),
      ['generate', '-m', modelPath, '-p', prompt, '-n', '30', '--temp', '0'], { cwd: dir });
    expect(stdout).toBe(`${prompt}${await nativeContinuation(prompt, ['-n', '30', '--temp', '0'])}\n`);
  });
});
