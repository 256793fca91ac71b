// Downloads: the cache folder (write while downloading, load from it next
// time with no request, delete, clear), sha256 checks, registry names.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LLM, LoadError, MODELS } from '../../js/index.js';
import { instantiateWasm } from '../../js/node/wasm-engine.js';
import { huggingFaceUrl } from '../../js/registry.js';
import { modelPath, readModel, serveModel } from './helpers.mjs';

const sha256 = MODELS.stories260K.sha256;  // of ../shared/models/stories260K.gguf
const greedy = { maxTokens: 24, temperature: 0 };
let server;
let cacheDir;
let expected;

async function continuationOf(source, options = {}) {
  const llm = await LLM.load(source, { threads: 1, ...options });
  try {
    return { text: await llm.generate('Once upon a time', greedy), from: llm.info.loadedFrom };
  } finally {
    await llm.dispose();
  }
}

const cacheFiles = () => (fs.existsSync(cacheDir) ? fs.readdirSync(cacheDir).sort() : []);

// Flips 64 bytes inside a tensor of `file` (its size stays the same).
function damage(file) {
  const fd = fs.openSync(file, 'r+');
  const bytes = Buffer.alloc(64);
  fs.readSync(fd, bytes, 0, 64, 600_000);
  for (let i = 0; i < bytes.length; i++) bytes[i] ^= 0x5a;
  fs.writeSync(fd, bytes, 0, 64, 600_000);
  fs.closeSync(fd);
}

// Checksum64 (cpp/core/checksum.h) of `bytes`, by the wasm build.
async function wasmChecksum(bytes) {
  const module = await instantiateWasm('st', { printErr: () => {} });
  const ptr = module.WasmEngine.alloc(bytes.length);
  module.WasmEngine.heapView(ptr, bytes.length).set(bytes);
  const checksum = new module.Checksum64();
  checksum.update(ptr, bytes.length);
  return checksum.hexDigest();
}

beforeAll(async () => {
  server = await serveModel(readModel());
  expected = (await continuationOf(readModel())).text;
});
afterAll(() => server.close());

const fileCacheDir = process.env.WASM_LLM_CACHE;  // this file's (tests/setup/download-cache.mjs)
afterEach(async () => {
  if (cacheDir) {
    await LLM.cache.clear();
    expect(cacheFiles()).toEqual([]);
    fs.rmSync(cacheDir, { recursive: true, force: true });
    cacheDir = undefined;
    process.env.WASM_LLM_CACHE = fileCacheDir;
  }
  server.requests.length = 0;
});

// Each test gets an empty cache folder (LLM.load and LLM.cache both read WASM_LLM_CACHE).
function freshCache() {
  cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-cache-'));
  process.env.WASM_LLM_CACHE = cacheDir;
}

describe('download cache', () => {
  it('caches a download and loads it from the cache next time, with no request', async () => {
    freshCache();
    expect(await continuationOf(server.url)).toEqual({ text: expected, from: 'network' });
    expect(server.requests).toHaveLength(1);
    const entries = await LLM.cache.list();
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ url: server.url, size: readModel().length, sha256 });
    expect(fs.readFileSync(entries[0].file).equals(readModel())).toBe(true);

    expect(await continuationOf(server.url)).toEqual({ text: expected, from: 'cache' });
    expect(server.requests).toHaveLength(1);

    expect(await LLM.cache.delete(server.url)).toBe(true);
    expect(await LLM.cache.delete(server.url)).toBe(false);
    expect(cacheFiles()).toEqual([]);
    expect((await continuationOf(server.url)).from).toBe('network');
  });

  it('caches a download whose connection dropped and resumed', async () => {
    freshCache();
    const dropping = await serveModel(readModel(), { dropAfter: 400_000 });
    try {
      expect((await continuationOf(dropping.url)).text).toBe(expected);
      expect(dropping.requests[1]).toMatch(/^bytes=\d+-$/);
      const [entry] = await LLM.cache.list();
      expect(entry.sha256).toBe(sha256);
      expect(fs.readFileSync(entry.file).equals(readModel())).toBe(true);
    } finally {
      await dropping.close();
    }
  });

  it('downloads again when the cached copy is damaged', async () => {
    freshCache();
    await continuationOf(server.url);
    const [entry] = await LLM.cache.list();
    fs.truncateSync(entry.file, 500_000);
    expect(await continuationOf(server.url)).toEqual({ text: expected, from: 'network' });
    expect(fs.statSync(entry.file).size).toBe(readModel().length);
  });

  it('downloads again when bytes of the cached copy changed, with or without sha256: the bytes are checked', async () => {
    freshCache();
    await continuationOf(server.url);
    const [entry] = await LLM.cache.list();
    for (const options of [{}, { sha256 }]) {
      damage(entry.file);
      const requests = server.requests.length;
      expect(await continuationOf(server.url, options)).toEqual({ text: expected, from: 'network' });
      expect(server.requests).toHaveLength(requests + 1);
      expect(fs.readFileSync(entry.file).equals(readModel())).toBe(true);
      expect(await continuationOf(server.url, options)).toEqual({ text: expected, from: 'cache' });
    }
  });

  it('downloads again an entry that has no checksum to check it by', async () => {
    freshCache();
    await continuationOf(server.url);
    const [entry] = await LLM.cache.list();
    const metaFile = `${entry.file}.json`;
    const { checksum, ...withoutChecksum } = JSON.parse(fs.readFileSync(metaFile, 'utf8'));
    fs.writeFileSync(metaFile, JSON.stringify(withoutChecksum));
    expect(await continuationOf(server.url)).toEqual({ text: expected, from: 'network' });
    expect(JSON.parse(fs.readFileSync(metaFile, 'utf8')).checksum).toBe(checksum);
  });

  it('records the checksum every build computes (pinned in tests/cpp/checksum_test.cpp)', async () => {
    freshCache();
    await continuationOf(server.url);
    const [entry] = await LLM.cache.list();
    expect(entry.checksum).toBe(await wasmChecksum(readModel()));
    const pattern = (n) => Uint8Array.from({ length: n }, (_, i) => (i * 131 + 7) & 0xff);
    let x = 1;
    const noise = Uint8Array.from({ length: 100_003 }, () => {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return x & 0xff;
    });
    expect(await wasmChecksum(new Uint8Array(0))).toBe('ea14c6e9cae3c4d1');
    expect(await wasmChecksum(pattern(1000))).toBe('f3356f1c21aa78f8');
    expect(await wasmChecksum(pattern(1 << 20))).toBe('a689d82cb2688f9a');
    expect(await wasmChecksum(noise)).toBe('02d1363b62a27658');
  });

  it('caches nothing with cache: false', async () => {
    freshCache();
    expect((await continuationOf(server.url, { cache: false })).from).toBe('network');
    expect(cacheFiles()).toEqual([]);
  });

  it('keeps nothing of a download that fails', async () => {
    freshCache();
    const error = await LLM.load(`${server.base}/missing.gguf`, { threads: 1 }).catch((e) => e);
    expect(error).toBeInstanceOf(LoadError);
    expect(cacheFiles()).toEqual([]);
  });
});

describe('sha256', () => {
  it('accepts the right hash, for a download and for a file', async () => {
    freshCache();
    expect((await continuationOf(server.url, { sha256 })).text).toBe(expected);
    expect((await continuationOf(server.url, { sha256: sha256.toUpperCase() })).from).toBe('cache');
    expect((await continuationOf(readModel(), { sha256 })).text).toBe(expected);
  });

  it('rejects a wrong hash with LoadError and caches nothing', async () => {
    freshCache();
    const wrong = sha256.replace(/^./, (c) => (c === '0' ? '1' : '0'));
    const error = await LLM.load(server.url, { threads: 1, sha256: wrong }).catch((e) => e);
    expect(error).toBeInstanceOf(LoadError);
    expect(error.message).toContain(sha256);
    expect(error.message).toContain(wrong);
    expect(cacheFiles()).toEqual([]);
  });

  it('rejects a hash that is not 64 hex digits', async () => {
    await expect(LLM.load(server.url, { sha256: 'abc' })).rejects.toThrow(TypeError);
  });
});

describe('model names', () => {
  it('finds a registry model in the models folder', async () => {
    const llm = await LLM.load('stories260K', { threads: 1, modelsDir: path.dirname(modelPath) });
    try {
      expect(llm.info.vocabSize).toBe(512);
      expect(llm.info.loadedFrom).toBe('local');
      expect(await llm.generate('Once upon a time', greedy)).toBe(expected);
    } finally {
      await llm.dispose();
    }
  });

  it('rejects an unknown name, listing the known ones', async () => {
    const error = await LLM.load('no-such-model').catch((e) => e);
    expect(error).toBeInstanceOf(LoadError);
    expect(error.message).toMatch(/no-such-model.*stories260K/);
  });

  it('maps hf: specs to Hugging Face download URLs', () => {
    expect(huggingFaceUrl('hf:ggml-org/models/tinyllamas/stories260K.gguf'))
      .toBe('https://huggingface.co/ggml-org/models/resolve/main/tinyllamas/stories260K.gguf');
    expect(huggingFaceUrl('hf:a/b@v1.0/x y.gguf')).toBe('https://huggingface.co/a/b/resolve/v1.0/x%20y.gguf');
    expect(huggingFaceUrl('hf:only-owner')).toBeUndefined();
    expect(huggingFaceUrl('models/x.gguf')).toBeUndefined();
  });
});
