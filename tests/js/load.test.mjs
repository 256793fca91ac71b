// LLM.load from every kind of source, and its errors.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AbortError, LLM, LoadError } from '../../js/index.js';
import { cached, runCli, sharedModels } from '../reference/reference.mjs';
import { modelPath, nodeKernels, readModel, repoRoot, serveModel } from './helpers.mjs';

const prompt = 'Once upon a time';
const greedy = { maxTokens: 24, temperature: 0 };
let expected;  // the greedy continuation, from a path-loaded model
let tmpDir;

async function continuationOf(source, options = {}) {
  const llm = await LLM.load(source, { threads: 1, ...options });
  try {
    return await llm.generate(prompt, greedy);
  } finally {
    await llm.dispose();
  }
}

beforeAll(async () => {
  tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-test-'));
  expected = await continuationOf(modelPath);
});

afterAll(() => fs.rmSync(tmpDir, { recursive: true, force: true }));

describe('LLM.load sources', () => {
  it('loads from a path, reporting progress and info', async () => {
    const progress = [];
    const llm = await LLM.load(modelPath, { threads: 1, contextSize: 256, onProgress: (p) => progress.push(p) });
    try {
      expect(expected.length).toBeGreaterThan(20);
      expect(llm.info).toMatchObject({
        architecture: 'llama', vocabSize: 512, layers: 5, heads: 8, contextSize: 256, threads: 1,
        tensorTypes: { f32: 48 }, threaded: false, kernels: nodeKernels,
      });
      expect(llm.info.memory.total).toBe(llm.info.memory.weights + llm.info.memory.kvCache + llm.info.memory.buffers);
      const size = fs.statSync(modelPath).size;
      expect(progress[0]).toMatchObject({ phase: 'read', total: size });
      const reads = progress.filter((p) => p.phase === 'read').map((p) => p.loaded);
      expect(reads).toEqual([...reads].sort((a, b) => a - b));
      expect(reads.at(-1)).toBe(size);
      expect(progress.at(-2)).toEqual({ phase: 'init', loaded: size, total: size });
      expect(progress.at(-1)).toEqual({ phase: 'done', loaded: size, total: size });
      expect(llm.info.loadedFrom).toBe('local');
    } finally {
      await llm.dispose();
    }
  });

  it('loads from a Buffer, a Uint8Array and an ArrayBuffer', async () => {
    const bytes = readModel();
    expect(await continuationOf(bytes)).toBe(expected);
    const copy = new Uint8Array(bytes);
    expect(await continuationOf(copy.buffer)).toBe(expected);
    expect(copy.length).toBe(bytes.length);  // the caller's buffer is not detached
  });

  it('loads from a ReadableStream, with or without its size', async () => {
    const stream = () => fs.createReadStream(modelPath, { highWaterMark: 100_000 });
    const toWeb = (s) => new ReadableStream({
      async start(controller) {
        for await (const chunk of s) controller.enqueue(new Uint8Array(chunk));
        controller.close();
      },
    });
    expect(await continuationOf(toWeb(stream()))).toBe(expected);
    expect(await continuationOf(toWeb(stream()), { size: fs.statSync(modelPath).size })).toBe(expected);
  });

  it('loads over http', async () => {
    const server = await serveModel(readModel());
    try {
      expect(await continuationOf(server.url)).toBe(expected);
      expect(server.requests).toEqual([null]);
    } finally {
      await server.close();
    }
  });

  it('resumes with a Range request when the connection drops mid-file', async () => {
    const server = await serveModel(readModel(), { dropAfter: 300_000 });
    try {
      expect(await continuationOf(server.url)).toBe(expected);
      expect(server.requests[0]).toBe(null);
      expect(server.requests[1]).toMatch(/^bytes=\d+-$/);
      expect(parseInt(server.requests[1].slice(6), 10)).toBeGreaterThanOrEqual(300_000);
    } finally {
      await server.close();
    }
  });
});

describe('LLM.load in every kind of Node script', () => {
  const code = `
    import { LLM } from ${JSON.stringify(path.join(repoRoot, 'js/index.js'))};
    const llm = await LLM.load(${JSON.stringify(modelPath)}, { threads: 1 });
    console.log(JSON.stringify(await llm.generate(${JSON.stringify(prompt)}, ${JSON.stringify(greedy)})));
    await llm.dispose();`;

  // What `node ...args` prints, with `stdin` on its standard input.
  function runNode(args, stdin = '') {
    return new Promise((resolve, reject) => {
      const child = execFile(process.execPath, args, (error, out, err) => (error ? reject(new Error(err || error.message)) : resolve(out)));
      child.stdin.end(stdin);
    });
  }

  // The engine's worker takes none of the script's Node options: a worker
  // refuses per-process ones, and LLM.load would fail.
  it.each([
    ['--max-old-space-size=2048'], ['--expose-gc'], ['--stack-size=2000'], ['--max-semi-space-size=16'],
    ['--enable-source-maps'], ['--no-warnings'], ['--experimental-vm-modules', '--max-old-space-size=1024'],
  ])('loads under node %s script.mjs', async (...flags) => {
    const script = path.join(tmpDir, 'script.mjs');
    fs.writeFileSync(script, code);
    expect(JSON.parse(await runNode([...flags, script]))).toBe(expected);
  });

  // `node --input-type=module` runs code from stdin or -e.
  it.each([['stdin', []], ['-e', ['-e', code]]])('loads under node --input-type=module with the code on %s', async (_, args) => {
    expect(JSON.parse(await runNode(['--input-type=module', ...args], args.length ? '' : code))).toBe(expected);
  });
});

describe('LLM.load errors', () => {
  it('rejects an http 404 with LoadError and its status', async () => {
    const server = await serveModel(readModel());
    try {
      const error = await LLM.load(`${server.base}/missing.gguf`, { threads: 1 }).catch((e) => e);
      expect(error).toBeInstanceOf(LoadError);
      expect(error.status).toBe(404);
      expect(error.message).toMatch(/404/);
    } finally {
      await server.close();
    }
  });

  it('rejects a truncated GGUF file with a clear LoadError', async () => {
    const file = path.join(tmpDir, 'truncated.gguf');
    fs.writeFileSync(file, readModel().subarray(0, 600_000));
    const error = await LLM.load(file, { threads: 1 }).catch((e) => e);
    expect(error).toBeInstanceOf(LoadError);
    expect(error.message).toMatch(/600000/);
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('rejects a truncated stream of unknown length', async () => {
    const bytes = readModel().subarray(0, 1_100_000);
    const stream = new ReadableStream({ start(c) { c.enqueue(bytes.slice()); c.close(); } });
    const error = await LLM.load(stream, { threads: 1 }).catch((e) => e);
    expect(error).toBeInstanceOf(LoadError);
    expect(error.message).toMatch(/truncated/);
  });

  it('rejects a file that is not GGUF', async () => {
    const file = path.join(tmpDir, 'not-a-model.txt');
    fs.writeFileSync(file, 'this is a text file, not a GGUF model\n'.repeat(100));
    const error = await LLM.load(file, { threads: 1 }).catch((e) => e);
    expect(error).toBeInstanceOf(LoadError);
    expect(error.message).toMatch(/GGUF|magic/i);
  });

  it('rejects with AbortError when the signal fires during the load', async () => {
    const controller = new AbortController();
    const onProgress = () => controller.abort();  // at the first progress event
    const error = await LLM.load(modelPath, { threads: 1, signal: controller.signal, onProgress }).catch((e) => e);
    expect(error).toBeInstanceOf(AbortError);
  });

  it('refuses, before reading the weights, a model that does not fit the 4 GB wasm memory', async () => {
    // A small model with a 16M-token training context: its KV cache would need ~32 GiB.
    const model = await cached('huge-context-256x4.gguf', (out) =>
      runCli(['synth', '--shape', '256x4:4/2:768', '--type', 'q8_0', '--ctx', '16000000',
        '--vocab', path.join(sharedModels, 'vocab', 'ggml-vocab-llama-spm.gguf'), '-o', out]));
    const progress = [];
    const error = await LLM.load(model, { threads: 1, contextSize: 16_000_000, onProgress: (p) => progress.push(p) })
      .catch((e) => e);
    expect(error).toBeInstanceOf(LoadError);
    expect(error.message).toMatch(/needs \d+\.\d MiB .* only \d+\.\d MiB are available/);
    expect(progress.filter((p) => p.phase === 'init')).toEqual([]);
    // With a context that fits, the same file loads.
    const llm = await LLM.load(model, { threads: 1, contextSize: 4096 });
    expect(llm.info.contextSize).toBe(4096);
    await llm.dispose();
  });

  it('honours a memory limit of the caller', async () => {
    const error = await LLM.load(modelPath, { threads: 1, memoryLimit: 1_000_000 }).catch((e) => e);
    expect(error).toBeInstanceOf(LoadError);
    expect(error.message).toMatch(/only 1\.0 MiB are available/);
  });

  it('runs the relaxed-SIMD build where this Node runs it unless relaxedSimd is false, which must be a boolean', async () => {
    for (const [relaxedSimd, kernels] of [[undefined, nodeKernels], [true, nodeKernels], [false, 'simd128']]) {
      const llm = await LLM.load(modelPath, { threads: 1, relaxedSimd });
      expect(llm.info.kernels).toBe(kernels);
      await llm.dispose();
    }
    await expect(LLM.load(modelPath, { threads: 1, relaxedSimd: 'no' })).rejects.toThrow(TypeError);
  });

  it('rejects a missing file', async () => {
    const error = await LLM.load(path.join(tmpDir, 'nope.gguf'), { threads: 1 }).catch((e) => e);
    expect(error).toBeInstanceOf(LoadError);
    expect(error.message).toMatch(/nope\.gguf/);
  });
});
