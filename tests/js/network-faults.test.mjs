// Downloads from servers that misbehave (tests/js/fault-server.mjs): dropped
// connections, lengths that lie, a file that changes between requests, Range
// ignored or mangled, slow answers. Each load ends with the right model or a
// clear LoadError, and the cache never keeps a mix of versions.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AbortError, LLM, LoadError } from '../../js/index.js';
import { serveFaults } from './fault-server.mjs';
import { readModel } from './helpers.mjs';

const greedy = { maxTokens: 24, temperature: 0 };
const A = readModel();
// Another version of the same file: every weight after byte 20000 negated
// (the data is f32 and starts 32-byte aligned, so byte 3 of every 4 holds a
// sign bit). A mix of A and B is neither.
const B = Buffer.from(A);
for (let i = 20_003; i < B.length; i += 4) B[i] ^= 0x80;
const size = A.length;
const DROP = 300_000;  // where a first response breaks off
let textA;
let textB;
let cacheDir;
let server;

async function continuation(source, options = {}) {
  const llm = await LLM.load(source, { threads: 1, cacheDir, ...options });
  try {
    return { text: await llm.generate('Once upon a time', greedy), from: llm.info.loadedFrom };
  } finally {
    await llm.dispose();
  }
}

// The cache folder's files, and the one model file's bytes (null if none).
function cacheContents() {
  const names = fs.readdirSync(cacheDir).sort();
  const model = names.filter((n) => n.endsWith('.gguf'));
  return { names, bytes: model.length === 1 ? fs.readFileSync(path.join(cacheDir, model[0])) : null };
}

async function serve(plan) {
  server = await serveFaults(plan);
  return server;
}

// The version plan of a file that is A for the first request and B after it.
const changesAfterFirst = (first, later) => ({ index }) => (index === 0 ? { ...first, dropAfter: DROP } : later);

beforeAll(async () => {
  textA = (await continuation(A, { cache: false })).text;
  textB = (await continuation(B, { cache: false })).text;
  expect(textA).not.toBe(textB);
});

beforeEach(() => {
  cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-faults-'));
});

afterEach(async () => {
  await server?.close();
  server = null;
  fs.rmSync(cacheDir, { recursive: true, force: true });
});

afterAll(() => server?.close());

describe('a file that changes between the first request and the resume', () => {
  it('new ETag, If-Range honoured: the load starts over, gets the new file, and caches it whole', async () => {
    const s = await serve(changesAfterFirst({ file: A, etag: '"a"' }, { file: B, etag: '"b"' }));
    expect(await continuation(s.url)).toEqual({ text: textB, from: 'network' });
    expect(s.requests[1]).toMatchObject({ ifRange: '"a"' });
    expect(s.requests[1].range).toBeGreaterThanOrEqual(DROP);
    expect(cacheContents().bytes.equals(B)).toBe(true);
    // The next load reads the cache, with no request.
    const requests = s.requests.length;
    expect(await continuation(s.url)).toEqual({ text: textB, from: 'cache' });
    expect(s.requests).toHaveLength(requests);
  });

  it('new ETag, If-Range ignored (a 206 of the new version): the ETag is checked and the load starts over', async () => {
    const s = await serve(changesAfterFirst({ file: A, etag: '"a"' }, { file: B, etag: '"b"', ignoreIfRange: true }));
    expect(await continuation(s.url)).toEqual({ text: textB, from: 'network' });
    expect(cacheContents().bytes.equals(B)).toBe(true);
  });

  it('new Last-Modified and no ETag: If-Range carries the date, and the load starts over', async () => {
    const first = { file: A, lastModified: 'Mon, 01 Jan 2024 00:00:00 GMT' };
    const s = await serve(changesAfterFirst(first, { file: B, lastModified: 'Tue, 02 Jan 2024 00:00:00 GMT' }));
    expect(await continuation(s.url)).toEqual({ text: textB, from: 'network' });
    expect(s.requests[1].ifRange).toBe(first.lastModified);
    expect(cacheContents().bytes.equals(B)).toBe(true);
  });

  it('a weak ETag is not sent as If-Range (the date is), and a changed weak ETag still restarts', async () => {
    const first = { file: A, etag: 'W/"a"', lastModified: 'Mon, 01 Jan 2024 00:00:00 GMT' };
    const later = { file: B, etag: 'W/"b"', lastModified: first.lastModified, ignoreIfRange: true };
    const s = await serve(changesAfterFirst(first, later));
    expect(await continuation(s.url)).toEqual({ text: textB, from: 'network' });
    expect(s.requests[1].ifRange).toBe(first.lastModified);
    expect(cacheContents().bytes.equals(B)).toBe(true);
  });

  it('a file that keeps changing fails clearly and leaves nothing in the cache', async () => {
    const s = await serve(({ index }) => ({ file: index % 2 ? B : A, etag: `"v${index}"`, dropAfter: DROP }));
    const error = await continuation(s.url).catch((e) => e);
    expect(error).toBeInstanceOf(LoadError);
    expect(error.message).toMatch(/changed on the server/);
    expect(cacheContents().names).toEqual([]);
  });
});

describe('Range answers that do not fit', () => {
  it('a 206 whose Content-Range starts at 0 instead of the asked-for byte: LoadError, nothing cached', async () => {
    const s = await serve(({ index }) => (index === 0
      ? { file: A, etag: '"a"', dropAfter: DROP }
      : { file: A, etag: '"a"', bodyFrom: 0, contentRange: `bytes 0-${size - 1}/${size}` }));
    const error = await continuation(s.url).catch((e) => e);
    expect(error).toBeInstanceOf(LoadError);
    expect(error.message).toMatch(/Content-Range 'bytes 0-/);
    expect(cacheContents().names).toEqual([]);
  });

  it('a 206 for a file of another size: LoadError, nothing cached', async () => {
    const s = await serve(({ index, range }) => (index === 0
      ? { file: A, dropAfter: DROP }
      : { file: A, contentRange: `bytes ${range}-${size + 99}/${size + 100}` }));
    const error = await continuation(s.url).catch((e) => e);
    expect(error).toBeInstanceOf(LoadError);
    expect(error.message).toMatch(/Content-Range/);
    expect(cacheContents().names).toEqual([]);
  });

  it('a 206 with no Content-Range but the right length resumes', async () => {
    const s = await serve(({ index }) => (index === 0 ? { file: A, dropAfter: DROP } : { file: A, contentRange: null }));
    expect(await continuation(s.url)).toEqual({ text: textA, from: 'network' });
    expect(cacheContents().bytes.equals(A)).toBe(true);
  });

  it('a server that ignores Range (200 again): the load starts over from the new answer', async () => {
    const s = await serve(({ index }) => ({ file: A, etag: '"a"', ignoreRange: true, dropAfter: index ? undefined : DROP }));
    expect(await continuation(s.url)).toEqual({ text: textA, from: 'network' });
    expect(s.requests.map((r) => r.range === null)).toEqual([true, false, true]);
    expect(cacheContents().bytes.equals(A)).toBe(true);
  });
});

describe('dropped connections', () => {
  it('resumes a body that drops again and again, as long as each answer brings bytes', async () => {
    const s = await serve(() => ({ file: A, etag: '"a"', dropAfter: 100_000 }));
    expect(await continuation(s.url)).toEqual({ text: textA, from: 'network' });
    expect(s.requests.length).toBe(Math.ceil(size / 100_000));
    expect(cacheContents().bytes.equals(A)).toBe(true);
  });

  it('retries a drop before the first body byte (from byte 0, with no Range)', async () => {
    const s = await serve(({ index }) => ({ file: A, dropAfter: index === 0 ? 0 : undefined }));
    expect(await continuation(s.url)).toEqual({ text: textA, from: 'network' });
    expect(s.requests.map((r) => r.range)).toEqual([null, null]);
  });

  it('every answer dropping after its headers fails, saying the body broke off at byte 0', async () => {
    const s = await serve(() => ({ file: A, dropAfter: 0 }));
    const error = await continuation(s.url).catch((e) => e);
    expect(error).toBeInstanceOf(LoadError);
    expect(error.message).toMatch(/at byte 0 of 1185376, after 5 retries: the connection broke off/);
    expect(error.message).not.toMatch(/ignored/);
    expect(s.requests.length).toBe(6);
    expect(cacheContents().names).toEqual([]);
  });

  it('a resume request whose connection is cut before any answer is retried', async () => {
    const s = await serve(({ index }) => [{ file: A, dropAfter: DROP }, { file: A, destroy: true }][index] ?? { file: A });
    expect(await continuation(s.url)).toEqual({ text: textA, from: 'network' });
    expect(s.requests).toHaveLength(3);
  });

  it('a resume answered 503 once is retried', async () => {
    const s = await serve(({ index }) => [{ file: A, dropAfter: DROP }, { file: A, status: 503 }][index] ?? { file: A });
    expect(await continuation(s.url)).toEqual({ text: textA, from: 'network' });
    expect(s.requests).toHaveLength(3);
  });

  it('a resume answered 404 every time fails with the status', async () => {
    const s = await serve(({ index }) => (index === 0 ? { file: A, dropAfter: DROP } : { file: A, status: 404 }));
    const error = await continuation(s.url).catch((e) => e);
    expect(error).toBeInstanceOf(LoadError);
    expect(error.status).toBe(404);
    expect(error.message).toMatch(/byte 300000.*HTTP 404/);
    expect(cacheContents().names).toEqual([]);
  });
});

describe('lengths that lie', () => {
  it('a Content-Length longer than the body: LoadError saying the body was short, not just "HTTP 416"', async () => {
    const s = await serve(() => ({ file: A, contentLength: size + 1000 }));
    const error = await continuation(s.url).catch((e) => e);
    expect(error).toBeInstanceOf(LoadError);
    expect(error.message).toMatch(/ended at byte 1185376 of the 1186376 bytes its Content-Length announced/);
    expect(cacheContents().names).toEqual([]);
  });

  it('a Content-Length shorter than the body: the file reads as cut short', async () => {
    const s = await serve(() => ({ file: A, contentLength: size - 1000 }));
    const error = await continuation(s.url).catch((e) => e);
    expect(error).toBeInstanceOf(LoadError);
    expect(error.message).toMatch(/data ends at byte \d+ but the file has 1184376 bytes/);
    expect(cacheContents().names).toEqual([]);
  });
});

describe('a slow server', () => {
  it('loads a body that trickles in', async () => {
    const s = await serve(() => ({ file: A, trickle: { bytes: 64 << 10, ms: 10 } }));
    expect(await continuation(s.url)).toEqual({ text: textA, from: 'network' });
  });

  it('a resume answered slowly is waited for', async () => {
    const s = await serve(({ index }) => (index === 0 ? { file: A, dropAfter: DROP } : { file: A, delay: 500 }));
    expect(await continuation(s.url)).toEqual({ text: textA, from: 'network' });
    expect(cacheContents().bytes.equals(A)).toBe(true);
  });

  it('an abort while waiting for the answer rejects at once and leaves nothing', async () => {
    const s = await serve(() => ({ file: A, delay: 60_000 }));
    const started = performance.now();
    const error = await continuation(s.url, { signal: AbortSignal.timeout(300) }).catch((e) => e);
    expect(error).toBeInstanceOf(AbortError);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(cacheContents().names).toEqual([]);
  });

  it('an abort during a slow download rejects within a second with AbortError', async () => {
    const s = await serve(() => ({ file: A, trickle: { bytes: 16 << 10, ms: 50 } }));
    const controller = new AbortController();
    let abortedAt;
    const onProgress = (p) => {
      if (p.loaded > 100_000 && !controller.signal.aborted) {
        controller.abort();
        abortedAt = performance.now();
      }
    };
    const error = await continuation(s.url, { signal: controller.signal, onProgress }).catch((e) => e);
    expect(error).toBeInstanceOf(AbortError);
    expect(performance.now() - abortedAt).toBeLessThan(1000);
  });
});
