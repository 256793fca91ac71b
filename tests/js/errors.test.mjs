// Errors you can branch on: one list of codes shared by the engine (C++),
// js/errors.js and index.d.ts, and every code produced for real in Node by
// what it stands for, with the class and fields it comes with.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AbortError, GenerationError, LLM, LLMError, LoadError } from '../../js/index.js';
import { ERROR_CODES, checkStatus } from '../../js/errors.js';
import { nodePlatform } from '../../js/node/platform.js';
import { downloadToCache } from '../../js/node/download.js';
import { unionMembers } from './declarations.mjs';
import { modelPath, readModel, repoRoot, serveModel } from './helpers.mjs';

// The engine's codes as cpp/core/error_codes.def lists them: [{enumerator, number, name}].
function engineCodes() {
  const def = fs.readFileSync(path.join(repoRoot, 'cpp/core/error_codes.def'), 'utf8');
  return [...def.matchAll(/^WLLM_ERROR_CODE\((k\w+), (\d+), "(\w+)"\)/gm)]
    .map(([, enumerator, number, name]) => ({ enumerator, number: Number(number), name }));
}

// What `promise` rejects with (it must reject).
async function failure(promise) {
  return promise.then((value) => {
    throw new Error(`expected a rejection, got ${value}`);
  }, (error) => error);
}

describe('the list of codes', () => {
  it('the C++ enum and its names come from error_codes.def', () => {
    const codes = engineCodes();
    expect(codes.map((c) => c.name)).toEqual(['ok', 'invalid_argument', 'bad_file', 'unsupported', 'out_of_memory',
      'context_full', 'aborted', 'io', 'need_more_data', 'internal', 'bad_state']);
    expect(new Set(codes.map((c) => c.number)).size).toBe(codes.length);
    for (const file of ['cpp/core/status.h', 'cpp/core/status.cpp']) {
      const text = fs.readFileSync(path.join(repoRoot, file), 'utf8');
      expect(text, file).toContain('#include "core/error_codes.def"');
      expect(text, file).not.toMatch(/ErrorCode::k\w+\s*[:=]|k\w+ = \d/);  // no second list
    }
  });

  it('every engine code a caller can meet is a JS code; the rest (ok, need_more_data) never reach one', () => {
    for (const { name } of engineCodes()) {
      if (name === 'ok' || name === 'need_more_data') expect(ERROR_CODES).not.toContain(name);
      else expect(ERROR_CODES).toContain(name);
    }
    // The bindings pass a status's name; a name that is no public code is a bug.
    expect(checkStatus({ code: 'ok', message: '' })).toEqual({ code: 'ok', message: '' });
    expect(() => checkStatus({ code: 'bad_file', message: 'm' }))
      .toThrow(expect.objectContaining({ code: 'bad_file' }));
    expect(() => checkStatus({ code: 'need_more_data', message: 'm' }))
      .toThrow(expect.objectContaining({ code: 'internal' }));
  });

  it('index.d.ts types exactly these codes, and each class\'s codes are among them', () => {
    expect(unionMembers('ErrorCode')).toEqual([...ERROR_CODES]);
    expect(unionMembers('GenerationErrorCode').filter((c) => !ERROR_CODES.includes(c))).toEqual([]);
  });
});

describe('each code, produced in Node', () => {
  let llm;
  let tmpDir;
  let server;  // answers /status/<n> with that status, anything else with a body that breaks off for good
  let base;

  beforeAll(async () => {
    llm = await LLM.load(modelPath, { threads: 1 });
    tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-errors-'));
    const bytes = readModel();
    server = http.createServer((req, res) => {
      const status = /^\/status\/(\d+)$/.exec(req.url);
      if (status) {
        res.writeHead(Number(status[1])).end('no');
        return;
      }
      // The first 1000 bytes, then the connection drops; every request to resume drops at once.
      const from = Number(/^bytes=(\d+)-$/.exec(req.headers.range ?? '')?.[1] ?? 0);
      if (from > 0) {
        const range = `bytes ${from}-${bytes.length - 1}/${bytes.length}`;
        res.writeHead(206, { 'Content-Length': bytes.length - from, 'Content-Range': range });
        res.flushHeaders();
        setTimeout(() => res.socket.destroy(), 20);
        return;
      }
      res.writeHead(200, { 'Content-Length': bytes.length });
      res.write(bytes.subarray(0, 1000), () => setTimeout(() => res.socket.destroy(), 20));
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${server.address().port}`;
  });

  afterAll(async () => {
    await llm?.dispose();
    fs.rmSync(tmpDir, { recursive: true, force: true });
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const write = (name, bytes) => {
    const file = path.join(tmpDir, name);
    fs.writeFileSync(file, bytes);
    return file;
  };

  describe('loading', () => {
    it('every LoadError and AbortError is an LLMError with a code', async () => {
      const error = await failure(LLM.load(path.join(tmpDir, 'missing.gguf'), { threads: 1 }));
      expect(error).toBeInstanceOf(LoadError);
      expect(error).toBeInstanceOf(LLMError);
      expect(error).toBeInstanceOf(Error);
      expect(error.name).toBe('LoadError');
      const abort = new AbortError();
      expect(abort).toBeInstanceOf(LLMError);
      expect([abort.name, abort.code]).toEqual(['AbortError', 'aborted']);
    });

    it('invalid_argument: an option checked in JS (TypeError, RangeError) or by the engine (LoadError)', async () => {
      const typo = await failure(LLM.load(modelPath, { threads: 1, context_size: 64 }));
      expect(typo).toBeInstanceOf(TypeError);
      expect(typo.code).toBe('invalid_argument');
      const range = await failure(LLM.load(modelPath, { threads: 0 }));
      expect(range).toBeInstanceOf(RangeError);
      expect(range.code).toBe('invalid_argument');
      const source = await failure(LLM.load(42));
      expect([source.name, source.code]).toEqual(['TypeError', 'invalid_argument']);
      const context = await failure(LLM.load(modelPath, { threads: 1, contextSize: llm.info.trainingContext + 1 }));
      expect(context).toBeInstanceOf(LoadError);
      expect(context.code).toBe('invalid_argument');
      expect(context.message).toMatch(/exceeds the model's training context/);
    });

    it('invalid_argument: a source that cannot be sent to the engine worker (a locked stream)', async () => {
      const stream = new ReadableStream({ start: (c) => c.close() });
      stream.getReader();
      const error = await failure(LLM.load(stream, { threads: 1 }));
      expect(error).toBeInstanceOf(LoadError);
      expect(error.code).toBe('invalid_argument');
      expect(error.cause?.name).toBe('DataCloneError');
    });

    it('not_found: HTTP 404 and 410, a missing file, an unknown model name', async () => {
      const served = await serveModel(readModel());
      try {
        const missing = await failure(LLM.load(`${served.base}/missing.gguf`, { threads: 1, cache: false }));
        expect(missing).toMatchObject({ name: 'LoadError', code: 'not_found', status: 404 });
      } finally {
        await served.close();
      }
      const gone = await failure(LLM.load(`${base}/status/410`, { threads: 1, cache: false }));
      expect(gone).toMatchObject({ name: 'LoadError', code: 'not_found', status: 410 });
      const file = await failure(LLM.load(path.join(tmpDir, 'nope.gguf'), { threads: 1 }));
      expect(file).toMatchObject({ name: 'LoadError', code: 'not_found' });
      expect(file.cause.code).toBe('ENOENT');
      const name = await failure(LLM.load('no-such-model', { threads: 1 }));
      expect(name).toMatchObject({ name: 'LoadError', code: 'not_found' });
      expect(name.message).toMatch(/neither a file nor a known model name/);
    });

    it('http_error: any other HTTP error status, with the status', async () => {
      for (const status of [403, 500, 503]) {
        const error = await failure(LLM.load(`${base}/status/${status}`, { threads: 1, cache: false }));
        expect(error).toMatchObject({ name: 'LoadError', code: 'http_error', status });
      }
    });

    it('network: a refused connection; a download that keeps breaking off', async () => {
      const refused = await failure(LLM.load('http://127.0.0.1:1/model.gguf', { threads: 1, cache: false }));
      expect(refused).toMatchObject({ name: 'LoadError', code: 'network' });
      expect(refused.cause).toBeInstanceOf(Error);
      const dropped = await failure(LLM.load(`${base}/drop`, { threads: 1, cache: false }));
      expect(dropped).toMatchObject({ name: 'LoadError', code: 'network' });
      expect(dropped.message).toMatch(/at byte 1000/);
    });

    it('io: a path that cannot be read, a stream source that errors', async () => {
      const folder = await failure(LLM.load(tmpDir, { threads: 1 }));
      expect(folder).toMatchObject({ name: 'LoadError', code: 'io' });
      expect(folder.cause.code).toBe('EISDIR');
      const bytes = readModel();
      let sent = false;
      const broken = new ReadableStream({
        pull(controller) {
          if (sent) controller.error(new Error('the disk went away'));
          else controller.enqueue(bytes.slice(0, 500_000));
          sent = true;
        },
      });
      const stream = await failure(LLM.load(broken, { threads: 1 }));
      expect(stream).toMatchObject({ name: 'LoadError', code: 'io' });
      expect(stream.message).toMatch(/the disk went away/);
    });

    it('bad_file: not a GGUF file; a truncated one', async () => {
      const text = await failure(LLM.load(write('notes.txt', 'not a model\n'.repeat(100)), { threads: 1 }));
      expect(text).toMatchObject({ name: 'LoadError', code: 'bad_file' });
      expect(text.cause).toMatchObject({ name: 'EngineError', code: 'bad_file' });
      const truncated = await failure(LLM.load(write('cut.gguf', readModel().subarray(0, 600_000)), { threads: 1 }));
      expect(truncated).toMatchObject({ name: 'LoadError', code: 'bad_file' });
      const header = await failure(LLM.load(write('cut-header.gguf', readModel().subarray(0, 100)), { threads: 1 }));
      expect(header).toMatchObject({ name: 'LoadError', code: 'bad_file' });
    });

    it('unsupported: a GGUF version the engine does not read', async () => {
      const header = (version) => {
        const bytes = Buffer.alloc(64);
        bytes.write('GGUF', 0, 'latin1');
        bytes.writeUInt32LE(version, 4);
        return bytes;
      };
      for (const version of [1, 4]) {
        const error = await failure(LLM.load(write(`v${version}.gguf`, header(version)), { threads: 1 }));
        expect(error).toMatchObject({ name: 'LoadError', code: 'unsupported' });
        expect(error.message).toMatch(/version/);
      }
    });

    it('sha256_mismatch: the engine worker\'s check and the CLI\'s download', async () => {
      const error = await failure(LLM.load(modelPath, { threads: 1, sha256: '0'.repeat(64) }));
      expect(error).toMatchObject({ name: 'LoadError', code: 'sha256_mismatch' });
      const served = await serveModel(readModel());
      try {
        const download = await failure(downloadToCache(served.url, { cacheDir: tmpDir, sha256: '1'.repeat(64) }));
        expect(download).toMatchObject({ name: 'LoadError', code: 'sha256_mismatch' });
      } finally {
        await served.close();
      }
    });

    it('out_of_memory: a memory limit the model does not fit', async () => {
      const error = await failure(LLM.load(modelPath, { threads: 1, memoryLimit: 1_000_000 }));
      expect(error).toMatchObject({ name: 'LoadError', code: 'out_of_memory' });
    });

    it('aborted: an AbortSignal, before and during the load; the cause is its reason', async () => {
      const before = await failure(LLM.load(modelPath, { threads: 1, signal: AbortSignal.abort('changed my mind') }));
      expect(before).toMatchObject({ name: 'AbortError', code: 'aborted', cause: 'changed my mind' });
      const controller = new AbortController();
      const during = await failure(LLM.load(modelPath, {
        threads: 1, signal: controller.signal, onProgress: () => controller.abort(),
      }));
      expect(during).toMatchObject({ name: 'AbortError', code: 'aborted' });
      expect(during).toBeInstanceOf(LLMError);
    });

    it('worker_failed: an engine worker that cannot start (its wasm build is missing)', async () => {
      class BrokenInstall extends LLM {
        static platform = {
          ...nodePlatform,
          startWorker: (variant, threads) => nodePlatform.startWorker('missing', threads, false),
        };
      }
      const error = await failure(BrokenInstall.load(modelPath, { threads: 1 }));
      expect(error).toMatchObject({ name: 'LoadError', code: 'worker_failed' });
      expect(error.message).toMatch(/cannot start the engine worker: .*wasm-llm-missing/);
    });
  });

  describe('generating', () => {
    it('invalid_argument: an argument checked in JS (TypeError, RangeError) or by the engine', async () => {
      const typo = await failure(llm.generate('Once', { max_tokens: 5 }));
      expect([typo.name, typo.code]).toEqual(['TypeError', 'invalid_argument']);
      expect(typo.message).toMatch(/did you mean 'maxTokens'/);
      const prompt = await failure(llm.generate(7));
      expect([prompt.name, prompt.code]).toEqual(['TypeError', 'invalid_argument']);
      const bench = await failure(llm.bench({ promptTokens: 0, generateTokens: 1 }));
      expect([bench.name, bench.code]).toEqual(['RangeError', 'invalid_argument']);
      const topP = await failure(llm.generate('Once', { topP: 2 }));
      expect(topP).toMatchObject({ name: 'GenerationError', code: 'invalid_argument' });
      expect(topP).toBeInstanceOf(LLMError);
      const empty = await failure(llm.generate('', { addSpecial: false }));
      expect(empty).toMatchObject({ name: 'GenerationError', code: 'invalid_argument' });
      const ids = await failure(llm.detokenize([1, 1e6]));
      expect(ids).toMatchObject({ name: 'GenerationError', code: 'invalid_argument' });
    });

    it('context_full: a prompt longer than the context; a benchmark that does not fit it', async () => {
      const small = await LLM.load(modelPath, { threads: 1, contextSize: 32 });
      try {
        const error = await failure(small.generate('Once upon a time there was a dog. '.repeat(10)));
        expect(error).toMatchObject({ name: 'GenerationError', code: 'context_full' });
        const bench = await failure(small.bench({ promptTokens: 32, generateTokens: 1 }));
        expect(bench).toMatchObject({ name: 'GenerationError', code: 'context_full' });
      } finally {
        await small.dispose();
      }
    });

    it('aborted: the signal fires, or is aborted already (the cause is its reason)', async () => {
      const controller = new AbortController();
      const running = failure(llm.generate('Once', {
        maxTokens: 400, temperature: 1, signal: controller.signal, onToken: () => controller.abort(new Error('stop')),
      }));
      expect(await running).toMatchObject({ name: 'AbortError', code: 'aborted', cause: new Error('stop') });
      const early = await failure(llm.generate('x', { signal: AbortSignal.abort() }));
      expect(early).toMatchObject({ name: 'AbortError', code: 'aborted' });
    });

    it('disposed: a running and a queued call when the model is disposed, and every later call', async () => {
      const other = await LLM.load(modelPath, { threads: 1 });
      const running = failure(other.generate('Once', { maxTokens: 1800, temperature: 1 }));
      const queued = failure(other.tokenize('Once'));
      await other.dispose();
      for (const error of [await running, await queued, await failure(other.generate('Once')),
        await failure(other.bench({ promptTokens: 4, generateTokens: 4 }))]) {
        expect(error).toMatchObject({ name: 'GenerationError', code: 'disposed' });
        expect(error.message).toMatch(/the model was disposed/);
      }
    });

    it('worker_failed: the engine worker dies during a call', async () => {
      const other = await LLM.load(modelPath, { threads: 1 });
      const running = failure(other.generate('Once', { maxTokens: 1800, temperature: 1 }));
      await other.client.port.terminate();  // as if the worker had crashed
      const error = await running;
      expect(error).toMatchObject({ name: 'GenerationError', code: 'worker_failed' });
      expect(error.message).toMatch(/the engine worker exited/);
      expect(await failure(other.generate('Once'))).toMatchObject({ code: 'worker_failed' });
      await other.dispose();
    });

    it('internal: an exception in the worker that is none of the API\'s errors', async () => {
      const error = await failure(llm.client.request('no-such-request', {}));
      expect(error).toMatchObject({ name: 'GenerationError', code: 'internal' });
      expect(error.cause).toMatchObject({ name: 'Error', message: "unknown request type 'no-such-request'" });
      expect(await llm.generate('Once', { maxTokens: 4 })).toEqual(expect.any(String));  // the worker carries on
    });
  });
});
