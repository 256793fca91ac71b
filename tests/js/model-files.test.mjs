// Models that are not one GGUF file, through LLM.load in Node: a llama2.c
// checkpoint with its tokenizer (given as any source, or found beside it),
// and a synthetic model split in 3 GGUF files (from a path and from URLs:
// streamed in parallel, progress over the whole, each file cached), with
// their broken and hostile variants.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AbortError, LLM, LoadError } from '../../js/index.js';
import { readGguf, writeGguf } from '../fuzz/gguf-kv.mjs';
import { cached, runCli, sharedModels } from '../reference/reference.mjs';
import { nativeContinuation, serveFiles, syntheticModel } from './helpers.mjs';

const prompt = 'Once upon a time';
const greedy = { maxTokens: 120, temperature: 0 };
const seeded = { maxTokens: 120, temperature: 0.8, seed: 42 };
const cliArgs = (o) =>
  ['-n', String(o.maxTokens), '--temp', String(o.temperature), '--seed', String(o.seed ?? 0), '--threads', '1'];
const llama2c = path.join(sharedModels, 'llama2c');
const checkpoint = path.join(llama2c, 'stories260K.bin');
const tok512 = path.join(llama2c, 'tok512.bin');
let tmpDir;

async function textOf(source, options = {}, generate = greedy) {
  const llm = await LLM.load(source, { threads: 1, ...options });
  try {
    return await llm.generate(prompt, generate);
  } finally {
    await llm.dispose();
  }
}

const failure = (promise) => promise.then(() => null, (error) => error);

// The 3 files `split` makes of `model` with `perFile` tensors each.
async function splitIn3(model, name, perFile) {
  const { stdout } = await runCli(['split', '--split-max-tensors', String(perFile), model, path.join(tmpDir, name)]);
  const files = stdout.trim().split('\n');
  expect(files.map((f) => path.basename(f))).toEqual([1, 2, 3].map((i) => `${name}-0000${i}-of-00003.gguf`));
  return files;
}

beforeAll(() => {
  tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-model-files-'));
});
afterAll(() => fs.rmSync(tmpDir, { recursive: true, force: true }));

describe('llama2.c checkpoints', () => {
  let expected;
  beforeAll(async () => {
    expected = {
      greedy: await nativeContinuation(prompt, cliArgs(greedy)),
      seeded: await nativeContinuation(prompt, cliArgs(seeded)),
    };
  });

  it('give the native CLI text of stories260K.gguf, greedy and seeded, the tokenizer found beside', async () => {
    // Beside it: tokenizer.bin (Llama 2's 32000 tokens, which does not fit) and tok512.bin.
    const llm = await LLM.load(checkpoint, { threads: 1 });
    try {
      expect(llm.info).toMatchObject({ architecture: 'llama', vocabSize: 512, trainingContext: 512, bosToken: '<s>',
        tensorTypes: { f32: 47 } });
      expect(await llm.generate(prompt, greedy)).toBe(expected.greedy);
      expect(await llm.generate(prompt, seeded)).toBe(expected.seeded);
    } finally {
      await llm.dispose();
    }
  });

  it('take the tokenizer as a path, a URL or bytes (with the checkpoint as bytes)', async () => {
    const bytes = fs.readFileSync(tok512);
    const server = await serveFiles({ '/tok512.bin': bytes });
    try {
      expect(await textOf(checkpoint, { tokenizer: tok512 })).toBe(expected.greedy);
      const url = `${server.base}/tok512.bin`;
      expect(await textOf(checkpoint, { tokenizer: url, cacheDir: tmpDir })).toBe(expected.greedy);
      expect(await textOf(fs.readFileSync(checkpoint), { tokenizer: new Uint8Array(bytes) })).toBe(expected.greedy);
    } finally {
      await server.close();
    }
  });

  it('find the tokenizer beside a URL', async () => {
    const server = await serveFiles({
      '/llama2c/stories260K.bin': fs.readFileSync(checkpoint),
      '/llama2c/tokenizer.bin': fs.readFileSync(path.join(llama2c, 'tokenizer.bin')),
      '/llama2c/tok512.bin': fs.readFileSync(tok512),
    });
    try {
      expect(await textOf(`${server.base}/llama2c/stories260K.bin`, { cache: false })).toBe(expected.greedy);
      expect(server.requests.map((r) => r.path)).toEqual(
        ['/llama2c/stories260K.bin', '/llama2c/tokenizer.bin', '/llama2c/tok512.bin']);
    } finally {
      await server.close();
    }
  });

  it('without a tokenizer, with another model\'s, or broken, are clear errors', async () => {
    const bytes = fs.readFileSync(checkpoint);
    const none = await failure(LLM.load(bytes, { threads: 1 }));
    expect(none).toBeInstanceOf(LoadError);
    expect(none).toMatchObject({ code: 'invalid_argument' });
    expect(none.message).toMatch(/needs its tokenizer file \(llama2\.c's tokenizer\.bin, or tok512\.bin/);

    const alone = path.join(tmpDir, 'alone.bin');
    fs.writeFileSync(alone, bytes);
    fs.copyFileSync(path.join(llama2c, 'tokenizer.bin'), path.join(tmpDir, 'tokenizer.bin'));
    const wrongBeside = await failure(LLM.load(alone, { threads: 1 }));
    expect(wrongBeside).toMatchObject({ code: 'invalid_argument' });
    expect(wrongBeside.message).toMatch(/tokenizer\.bin beside it does not fit: .*follow the model's 512 tokens/);

    const wrong = await failure(LLM.load(bytes, { threads: 1, tokenizer: path.join(llama2c, 'tokenizer.bin') }));
    expect(wrong).toMatchObject({ name: 'LoadError', code: 'bad_file' });
    const truncated = await failure(LLM.load(bytes.subarray(0, 600_000), { threads: 1, tokenizer: tok512 }));
    expect(truncated).toMatchObject({ code: 'bad_file' });
    expect(truncated.message).toMatch(/its weights take 1056540 bytes, but the file has 600000 \(truncated\?\)/);
    const gguf = path.join(sharedModels, 'stories260K.gguf');
    const forGguf = await failure(LLM.load(gguf, { threads: 1, tokenizer: tok512 }));
    expect(forGguf).toMatchObject({ code: 'invalid_argument' });
    expect(forGguf.message).toMatch(/this GGUF model has its own tokenizer/);
    const missing = await failure(LLM.load(bytes, { threads: 1, tokenizer: path.join(tmpDir, 'none.bin') }));
    expect(missing).toMatchObject({ code: 'not_found' });
  });
});

describe('split GGUF models', () => {
  let files;      // the 3 files' paths
  let whole;      // the text of the model as one file
  let server;     // serves the files at /m/<name>
  let cacheDir;

  const url = (i) => `${server.base}/m/${path.basename(files[i])}`;
  const cacheEntries = () => (fs.existsSync(cacheDir) ? fs.readdirSync(cacheDir).sort() : []);

  beforeAll(async () => {
    // A small model on stories260K's vocabulary: 21 tensors, 7 per file.
    const model = await cached('split-64x2-q8_0.gguf', (out) => runCli(['synth', '--shape', '64x2:4/2:128',
      '--type', 'q8_0', '--ctx', '256', '--vocab', path.join(sharedModels, 'stories260K.gguf'), '-o', out]));
    files = await splitIn3(model, 'synth', 7);
    whole = await textOf(model);
    const served = Object.fromEntries(files.map((f) => [`/m/${path.basename(f)}`, fs.readFileSync(f)]));
    server = await serveFiles(served, { answer: (p) => (p.endsWith('00002-of-00003.gguf') ? { delay: 300 } : {}) });
  });
  afterAll(() => server.close());

  const freshCache = () => {
    cacheDir = fs.mkdtempSync(path.join(tmpDir, 'cache-'));
    server.requests.length = 0;
  };

  it('load from the path of the first file', async () => {
    expect(whole.length).toBeGreaterThan(20);
    expect(await textOf(files[0])).toBe(whole);
  });

  it('stream from URLs in parallel, report progress over the whole, and cache each file', async () => {
    freshCache();
    const progress = [];
    const llm = await LLM.load(url(0), { threads: 1, cacheDir, onProgress: (p) => progress.push(p) });
    try {
      expect(await llm.generate(prompt, greedy)).toBe(whole);
      expect(llm.info.loadedFrom).toBe('network');
    } finally {
      await llm.dispose();
    }
    // Files 2 and 3 were asked for together: 3 while 2 was still pending.
    const third = server.requests.find((r) => r.path.endsWith('00003-of-00003.gguf'));
    expect(third.pending).toContain('/m/synth-00002-of-00003.gguf');
    const total = files.reduce((sum, f) => sum + fs.statSync(f).size, 0);
    const downloads = progress.filter((p) => p.phase === 'download');
    expect(downloads.length).toBeGreaterThan(0);
    expect(downloads.every((p) => p.total === total)).toBe(true);
    expect(downloads.map((p) => p.loaded)).toEqual(downloads.map((p) => p.loaded).sort((a, b) => a - b));
    expect(downloads.at(-1).loaded).toBe(total);
    expect(progress.at(-1)).toEqual({ phase: 'done', loaded: total, total });
    // One cache entry per file; the next load reads them all from it, with no request.
    expect(cacheEntries().filter((n) => n.endsWith('.gguf'))).toHaveLength(3);
    const requests = server.requests.length;
    const again = await LLM.load(url(0), { threads: 1, cacheDir });
    try {
      expect(again.info.loadedFrom).toBe('cache');
      expect(await again.generate(prompt, greedy)).toBe(whole);
    } finally {
      await again.dispose();
    }
    expect(server.requests.length).toBe(requests);
  });

  it('check each file against its own sha256', async () => {
    const { createHash } = await import('node:crypto');
    const hashes = files.map((f) => createHash('sha256').update(fs.readFileSync(f)).digest('hex'));
    expect(await textOf(files[0], { sha256: hashes })).toBe(whole);
    const wrong = await failure(LLM.load(files[0], { threads: 1, sha256: [hashes[0], hashes[2], hashes[1]] }));
    expect(wrong).toMatchObject({ code: 'sha256_mismatch' });
    expect(wrong.message).toMatch(/^file 2 of 3: the file's sha256 is/);
    const one = await failure(LLM.load(files[0], { threads: 1, sha256: hashes[0] }));
    expect(one).toMatchObject({ code: 'invalid_argument' });
    expect(one.message).toMatch(/the model is in 3 file\(s\): give one per file/);
  });

  it('refuse files that are missing, of another model, or lying, and a 404, leaving no cache entry', async () => {
    freshCache();
    // A 404 on file 2.
    const gone = await serveFiles({ '/m/synth-00001-of-00003.gguf': fs.readFileSync(files[0]),
      '/m/synth-00003-of-00003.gguf': fs.readFileSync(files[2]) });
    try {
      const error = await failure(LLM.load(`${gone.base}/m/synth-00001-of-00003.gguf`, { threads: 1, cacheDir }));
      expect(error).toMatchObject({ name: 'LoadError', code: 'not_found' });
      expect(error.message).toContain('/m/synth-00002-of-00003.gguf: HTTP 404');
    } finally {
      await gone.close();
    }
    expect(cacheEntries()).toEqual([]);

    const folder = fs.mkdtempSync(path.join(tmpDir, 'broken-'));
    const copy = (i, name = path.basename(files[i])) => fs.copyFileSync(files[i], path.join(folder, name));
    const first = path.join(folder, path.basename(files[0]));
    // A file missing on disk.
    copy(0);
    copy(1);
    const missing = await failure(LLM.load(first, { threads: 1 }));
    expect(missing).toMatchObject({ code: 'not_found' });
    expect(missing.message).toContain('synth-00003-of-00003.gguf');
    // File 3 lying about the count; then file 3 of another model (other tensors).
    const lying = readGguf(files[2]);
    lying.kvs.find((kv) => kv.key === 'split.count').value = 4;
    writeGguf(path.join(folder, 'synth-00003-of-00003.gguf'), lying.kvs, lying.tensors);
    const lies = await failure(LLM.load(first, { threads: 1 }));
    expect(lies).toMatchObject({ code: 'bad_file' });
    expect(lies.message).toMatch(/file 3 of the split model says it is file 3 of 4/);
    const other = path.join(tmpDir, 'other');
    const otherFiles = (await runCli(['split', '--split-max-tensors', '4', path.join(sharedModels, 'stories260K.gguf'),
      other])).stdout.trim().split('\n');
    fs.copyFileSync(otherFiles[2], path.join(folder, 'synth-00003-of-00003.gguf'));
    const foreign = await failure(LLM.load(first, { threads: 1 }));
    expect(foreign).toMatchObject({ code: 'bad_file' });
    expect(foreign.message).toMatch(/the files are not of one model/);
    // Loaded from bytes, the others cannot be found.
    const bytes = await failure(LLM.load(fs.readFileSync(files[0]), { threads: 1 }));
    expect(bytes).toMatchObject({ code: 'invalid_argument' });
    expect(bytes.message).toMatch(/split into 3 files and it came as bytes or a stream, so the others cannot be found/);
  });

  it('abort mid-file, leaving no cache entry', async () => {
    freshCache();
    // Files of several MB, so the abort comes while their data streams.
    const big = await splitIn3(await syntheticModel('q4_0'), 'big', 14);
    const bigServer = await serveFiles(Object.fromEntries(big.map((f) => [`/${path.basename(f)}`, fs.readFileSync(f)])));
    const controller = new AbortController();
    const first = fs.statSync(big[0]).size;
    const onProgress = (p) => {
      if (p.loaded > first) controller.abort();
    };
    const error = await failure(LLM.load(`${bigServer.base}/${path.basename(big[0])}`,
      { threads: 1, cacheDir, signal: controller.signal, onProgress })).finally(() => bigServer.close());
    expect(error).toBeInstanceOf(AbortError);
    // The load rejects at once; the worker then drops its partial files.
    for (let tries = 0; cacheEntries().length > 0 && tries < 100; tries++) await new Promise((r) => setTimeout(r, 50));
    expect(cacheEntries()).toEqual([]);
  });
});
