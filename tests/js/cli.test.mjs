// `npx wasm-llm` (js/node/cli.js): the native CLI's commands run as wasm in
// Node, with the same output; -m takes registry names and URLs, downloaded
// into the cache with a progress report (a split model's first file brings
// the others; --tokenizer may be a URL too).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cacheFileName } from '../../js/cache-names.js';
import { modelPath, readModel, repoRoot, serveFiles, serveModel } from './helpers.mjs';

const execFileP = promisify(execFile);
const nativeCli = path.join(repoRoot, 'build/native/wasm-llm');
const nodeCli = path.join(repoRoot, 'js/node/cli.js');
let cacheDir;

// {code, stdout, stderr} of a CLI run (a non-zero exit is a result, not a throw).
async function run(cli, args, env = {}) {
  const [file, argv] = cli === 'node' ? [process.execPath, [nodeCli, ...args]] : [nativeCli, args];
  try {
    const { stdout, stderr } = await execFileP(file, argv, {
      env: { ...process.env, WASM_LLM_CACHE: cacheDir, ...env }, maxBuffer: 16 << 20,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    return { code: error.code, stdout: error.stdout, stderr: error.stderr };
  }
}

beforeAll(() => {
  cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-cli-'));
});
afterAll(() => fs.rmSync(cacheDir, { recursive: true, force: true }));

describe('wasm-llm CLI in Node', () => {
  it.each([
    ['generate greedy', ['generate', '-m', modelPath, '-p', 'Once upon a time', '-n', '80', '--temp', '0', '-t', '2']],
    ['generate seeded', ['generate', '-m', modelPath, '-p', 'The dog', '-n', '60', '--temp', '0.9', '--seed', '5']],
    ['tokenize', ['tokenize', '-m', modelPath, 'Hello world, héllo 🌍']],
    ['info', ['info', '-m', modelPath]],
  ])('%s prints what the native CLI prints', async (_, args) => {
    const [ours, native] = await Promise.all([run('node', args), run('native', args)]);
    expect(ours.code).toBe(0);
    expect(ours.stdout.length).toBeGreaterThan(20);
    // info names the kernels' ISA (simd128 against avx512, say); everything else is equal.
    const isa = (s) => s.replace(/\b(relaxed|simd128|avx512|avx2|neon|reference)\b/g, 'ISA');
    expect(isa(ours.stdout)).toBe(isa(native.stdout));
  });

  it('info counts the weights', async () => {
    // stories260K: a 512 × 64 embedding and output, 5 layers of q, k, v, o
    // (64 × 64, 64 × 32, 64 × 32, 64 × 64), gate, up, down (64 × 172 each)
    // and two norms, then the final norm.
    const weights = 2 * 512 * 64 + 5 * (2 * 64 * 64 + 2 * 64 * 32 + 3 * 64 * 172 + 2 * 64) + 64;
    const info = await run('node', ['info', '-m', modelPath]);
    expect(info.stdout).toMatch(new RegExp(`^parameters: +${weights} \\(0\\.29 M\\)$`, 'm'));
  });

  it('finds a registry model in $WASM_LLM_MODELS', async () => {
    const args = ['generate', '-p', 'Once upon a time', '-n', '30', '--temp', '0'];
    const ours = await run('node', [...args, '-m', 'stories260K'], { WASM_LLM_MODELS: path.dirname(modelPath) });
    expect(ours.code).toBe(0);
    expect(ours.stdout).toBe((await run('native', [...args, '-m', modelPath])).stdout);
  });

  it('downloads a URL into the cache once, with progress, then uses the cache', async () => {
    const server = await serveModel(readModel());
    try {
      const args = ['generate', '-m', server.url, '-p', 'Once upon a time', '-n', '20', '--temp', '0'];
      const first = await run('node', args);
      expect(first.code).toBe(0);
      expect(first.stderr).toMatch(/downloading model\.gguf .*100% .*MiB\/s/);
      const second = await run('node', args);
      expect(second.stderr).toMatch(/from the cache/);
      expect(second.stdout).toBe(first.stdout);
      expect(server.requests).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('downloads again when the cached copy is damaged', async () => {
    const server = await serveModel(readModel());
    try {
      const args = ['generate', '-m', server.url, '-p', 'Once upon a time', '-n', '20', '--temp', '0'];
      const first = await run('node', args);
      expect(first.code).toBe(0);
      const file = path.join(cacheDir, cacheFileName(server.url));
      const bytes = fs.readFileSync(file);
      bytes[600_000] ^= 0xff;
      fs.writeFileSync(file, bytes);
      const second = await run('node', args);
      expect(second.stderr).toMatch(/downloading model\.gguf/);
      expect(second.stdout).toBe(first.stdout);
      expect(server.requests).toHaveLength(2);
      expect(fs.readFileSync(file).equals(readModel())).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('fails with a message and exit status 1 for a missing file or a 404', async () => {
    const missing = await run('node', ['info', '-m', path.join(cacheDir, 'nope.gguf')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/nope\.gguf/);
    const server = await serveModel(readModel());
    try {
      const notFound = await run('node', ['info', '-m', `${server.base}/missing.gguf`]);
      expect(notFound.code).toBe(1);
      expect(notFound.stderr).toMatch(/404/);
    } finally {
      await server.close();
    }
  });

  it('takes a llama2.c checkpoint and its tokenizer, and a split model, by path and by URL', async () => {
    const llama2c = path.join(path.dirname(modelPath), 'llama2c');
    const prefix = path.join(cacheDir, 'split', 'st');
    fs.mkdirSync(path.dirname(prefix));
    const split = await run('node', ['split', '--split-max-tensors', '16', modelPath, prefix]);
    expect(split.code).toBe(0);
    const parts = split.stdout.trim().split('\n');
    expect(parts).toHaveLength(3);
    const server = await serveFiles({
      '/m/stories260K.bin': fs.readFileSync(path.join(llama2c, 'stories260K.bin')),
      '/m/tok512.bin': fs.readFileSync(path.join(llama2c, 'tok512.bin')),
      ...Object.fromEntries(parts.map((p) => [`/m/${path.basename(p)}`, fs.readFileSync(p)])),
    });
    try {
      const args = ['generate', '-p', 'Once upon a time', '-n', '40', '--temp', '0'];
      const expected = (await run('native', [...args, '-m', modelPath])).stdout;
      expect(expected.length).toBeGreaterThan(40);
      for (const model of [
        ['-m', path.join(llama2c, 'stories260K.bin')],
        ['-m', `${server.base}/m/stories260K.bin`, '--tokenizer', `${server.base}/m/tok512.bin`],
        ['-m', parts[0]],
        ['-m', `${server.base}/m/${path.basename(parts[0])}`],
      ]) {
        const ours = await run('node', [...args, ...model]);
        expect(ours.stdout, model.join(' ')).toBe(expected);
      }
    } finally {
      await server.close();
    }
  });

  it('exits 2 naming the commands for an unknown command', async () => {
    const r = await run('node', ['frobnicate']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown command 'frobnicate'.*generate, tokenize/);
  });

  it('prints the package version and a command\'s usage, as the native CLI does', async () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
    const ours = await run('node', ['--version']);
    expect(ours).toMatchObject({ code: 0, stdout: `${version}\n` });
    for (const args of [['generate', '--help'], ['help', 'generate']]) {
      const help = await run('node', args);
      expect(help.code, args.join(' ')).toBe(0);
      expect(help.stdout).toMatch(/^usage: wasm-llm generate -m FILE -p TEXT /);
      expect(help.stdout).toMatch(/--seed S +the sampler's seed \(default: a random one/);
      expect(help.stdout).toBe((await run('native', args)).stdout);
    }
  });
});
