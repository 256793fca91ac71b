// Loading in every browser engine (Chromium, Firefox, WebKit): every kind
// of source (in WebKit, which cannot transfer streams to a worker, bytes and
// streams go through a MessagePort), the OPFS download cache (LLM.cache, loads
// with no network request) or, where OPFS is unusable, loads that keep
// nothing, typed errors for bad models, and that every pending promise
// settles when a model is disposed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cacheFileName } from '../../js/cache-names.js';
import { nativeContinuation } from '../js/helpers.mjs';
import { ENGINE_WORKER, browsers, openTestPage, replaceEngineWorker } from './browser.mjs';

const MODEL_PATH = '/models/stories260K.gguf';
// The two ways the OPFS cache moves files: sync access handles, and writable
// streams and Files where createSyncAccessHandle is refused (WebKit in a
// normal window; its test sessions are private, so that path is tested here
// in Chromium and Firefox, through an engine worker without sync access
// handles).
const CACHE_FILES = [
  { name: 'sync access handles', engineWorker: null },
  { name: 'writable streams', engineWorker: '/tests/browser/no-sync-access-worker.js' },
];
const prompt = 'Once upon a time';
const greedy = { maxTokens: 40, temperature: 0 };
let expected;  // the native CLI's greedy 40 tokens

beforeAll(async () => {
  expected = await nativeContinuation(prompt, ['-n', '40', '--temp', '0']);
});

// Runs body(wasmLlm, args) in t's page. Errors come back as plain
// descriptions (with whether they are the API's typed errors), not thrown.
function inPage(t, body, args = {}) {
  return t.evaluate(
    async ({ source, args, prompt, greedy }) => {
      const wasmLlm = window.wasmLlm;
      const describeError = (e) => ({
        name: e.name,
        code: e.code,
        message: e.message,
        status: e.status,
        isLLMError: e instanceof wasmLlm.LLMError,
        isLoadError: e instanceof wasmLlm.LoadError,
        isGenerationError: e instanceof wasmLlm.GenerationError,
      });
      // The greedy continuation of a model loaded from `source`, with the load's info and progress.
      const continuation = async (source, options = {}) => {
        const progress = [];
        const llm = await wasmLlm.LLM.load(source, { ...options, onProgress: (p) => progress.push(p) });
        try {
          return { text: await llm.generate(prompt, greedy), info: llm.info, progress };
        } finally {
          await llm.dispose();
        }
      };
      const loadError = (source, options) => wasmLlm.LLM.load(source, options).then(
        (llm) => llm.dispose().then(() => null),
        describeError,
      );
      // The names in the cache's OPFS folder; null where the page has no usable OPFS.
      const opfsNames = async () => {
        const root = await navigator.storage.getDirectory().catch(() => null);
        if (!root) return null;
        const dir = await root.getDirectoryHandle('wasm-llm', { create: true });
        const names = [];
        for await (const name of dir.keys()) names.push(name);
        return names.sort();
      };
      const fn = new Function(`return (${source})`)();
      return fn({ wasmLlm, continuation, loadError, opfsNames, describeError }, args);
    },
    { source: body.toString(), args, prompt, greedy },
  );
}

for (const browser of browsers) describe(browser.name, { retry: browser.retry }, () => {
  let t;
  beforeAll(async () => {
    t = await openTestPage({ browser: browser.name, isolated: true });
  });
  afterAll(() => t?.close());

  const modelUrl = () => `${t.origin}${MODEL_PATH}`;
  const modelRequests = () => t.requestsFor(MODEL_PATH).length;

  describe('sources', () => {
    it('loads a File, a Blob, an ArrayBuffer, a Uint8Array and a ReadableStream', async () => {
      const result = await inPage(t, async ({ continuation }, { url }) => {
        const bytes = await (await fetch(url)).arrayBuffer();
        const out = {};
        out.file = await continuation(new File([bytes], 'stories260K.gguf'));
        out.blob = await continuation(new Blob([bytes]));
        out.arrayBuffer = await continuation(bytes);
        out.uint8Array = await continuation(new Uint8Array(bytes));
        out.stream = await continuation((await fetch(url)).body);
        out.callerBytesIntact = bytes.byteLength;
        return out;
      }, { url: MODEL_PATH });
      for (const kind of ['file', 'blob', 'arrayBuffer', 'uint8Array', 'stream']) {
        expect(result[kind].text, kind).toBe(expected);
        expect(result[kind].info.loadedFrom, kind).toBe('local');
        expect(result[kind].progress.at(-1).phase, kind).toBe('done');
      }
      expect(result.callerBytesIntact).toBe(1185376);  // not detached by the transfer
    });

    it('a stream that fails midway rejects the load with LoadError code io', async () => {
      const result = await inPage(t, async ({ wasmLlm, describeError }, { url }) => {
        const bytes = new Uint8Array(await (await fetch(url)).arrayBuffer());
        let sent = false;
        const stream = new ReadableStream({
          pull(controller) {
            if (sent) controller.error(new Error('disk gone'));
            else controller.enqueue(bytes.slice(0, 100_000));
            sent = true;
          },
        });
        return wasmLlm.LLM.load(stream).then((llm) => llm.dispose().then(() => null), describeError);
      }, { url: MODEL_PATH });
      expect(result).toMatchObject({ name: 'LoadError', code: 'io', isLoadError: true });
      expect(result.message).toMatch(/disk gone/);
    });

    it('resolves a relative URL against the page', async () => {
      // The page is /tests/browser/index.html.
      const result = await inPage(t, ({ continuation }) => continuation('../../models/stories260K.gguf', { cache: false }));
      expect(result.text).toBe(expected);
      expect(result.info.loadedFrom).toBe('network');
    });
  });

  describe.each(browser.opfs ? CACHE_FILES : [])('the OPFS download cache, through $name', ({ engineWorker }) => {
    beforeAll(() => replaceEngineWorker(t, { always: engineWorker }));
    afterAll(() => replaceEngineWorker(t));

    it('stores a download, and a second load reads it from OPFS with no request for the model', async () => {
      const workerScript = engineWorker ?? ENGINE_WORKER;
      const scriptRequestsBefore = t.requestsFor(workerScript).length;
      const workers = () => t.evaluate(() => window.engineWorkersStarted - window.engineWorkersReplaced);
      const workersBefore = await workers();
      const before = modelRequests();
      const first = await inPage(t, ({ continuation }, { url }) => continuation(url), { url: modelUrl() });
      expect(first.info.loadedFrom).toBe('network');
      expect(first.progress.some((p) => p.phase === 'download')).toBe(true);
      expect(modelRequests()).toBe(before + 1);

      const second = await inPage(t, ({ continuation }, { url }) => continuation(url), { url: modelUrl() });
      expect(second.info.loadedFrom).toBe('cache');
      expect(second.progress[0]).toMatchObject({ phase: 'cache', total: 1185376 });
      expect(second.text).toBe(expected);
      expect(modelRequests()).toBe(before + 1);

      const entries = await inPage(t, ({ wasmLlm }) => wasmLlm.LLM.cache.list());
      expect(entries).toContainEqual({
        url: modelUrl(),
        size: 1185376,
        sha256: '270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d',
        checksum: '0c90b7bce174f328',  // Checksum64, as Node's cache records it (tests/js/cache.test.mjs)
        savedAt: expect.any(Number),
      });
      // Each load ran in its own engine worker, started from this script
      // (not counting one that Firefox's fault made LLM.load replace).
      expect(await workers()).toBe(workersBefore + 2);
      expect(t.requestsFor(workerScript).length).toBeGreaterThan(scriptRequestsBefore);
    });

    it('LLM.cache.delete and clear remove entries; the next load downloads again', async () => {
      await inPage(t, ({ continuation }, { url }) => continuation(url), { url: modelUrl() });
      const result = await inPage(t, async ({ wasmLlm, continuation, opfsNames }, { url }) => {
        const { cache } = wasmLlm.LLM;
        const deleted = await cache.delete(url);
        const deletedAgain = await cache.delete(url);
        const afterDelete = await cache.list();
        const reload = await continuation(url);
        const listed = (await cache.list()).map((e) => e.url);
        await cache.clear();
        return { deleted, deletedAgain, afterDelete, reloadedFrom: reload.info.loadedFrom, listed,
          afterClear: await cache.list(), namesAfterClear: await opfsNames() };
      }, { url: modelUrl() });
      expect(result).toEqual({
        deleted: true, deletedAgain: false, afterDelete: [], reloadedFrom: 'network', listed: [modelUrl()],
        afterClear: [], namesAfterClear: [],
      });
    });

    it('cache: false neither reads nor writes the cache', async () => {
      await inPage(t, ({ wasmLlm }) => wasmLlm.LLM.cache.clear());
      const before = modelRequests();
      const result = await inPage(t, async ({ wasmLlm, continuation }, { url }) => {
        const first = await continuation(url, { cache: false });
        const second = await continuation(url, { cache: false });
        return { from: [first.info.loadedFrom, second.info.loadedFrom], entries: await wasmLlm.LLM.cache.list() };
      }, { url: modelUrl() });
      expect(result).toEqual({ from: ['network', 'network'], entries: [] });
      expect(modelRequests()).toBe(before + 2);
    });

    it('a damaged cached copy is dropped and the model downloaded again', async () => {
      const result = await inPage(t, async ({ continuation }, { url, fileName }) => {
        await continuation(url);
        // Overwrite the cached file with zeros of the same size.
        const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('wasm-llm');
        const file = await dir.getFileHandle(fileName);
        const writable = await file.createWritable();
        await writable.write(new Uint8Array((await file.getFile()).size));
        await writable.close();
        const reload = await continuation(url);
        const third = await continuation(url);
        return { reload: [reload.info.loadedFrom, reload.text], third: [third.info.loadedFrom, third.text] };
      }, { url: modelUrl(), fileName: cacheFileName(modelUrl()) });
      expect(result.reload).toEqual(['network', expected]);
      expect(result.third).toEqual(['cache', expected]);
    });

    it('bytes changed inside a tensor of the cached copy: checked, dropped and downloaded again, with or without sha256', async () => {
      const sha256 = '270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d';
      const result = await inPage(t, async ({ continuation }, { url, fileName, sha256 }) => {
        await continuation(url);
        const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('wasm-llm');
        const loads = [];
        for (const options of [{}, { sha256 }]) {
          // Flip 64 bytes of the weights, keeping the size.
          const file = await dir.getFileHandle(fileName);
          const bytes = new Uint8Array(await (await file.getFile()).arrayBuffer());
          for (let i = 600_000; i < 600_064; i++) bytes[i] ^= 0x5a;
          const writable = await file.createWritable();
          await writable.write(bytes);
          await writable.close();
          const reload = await continuation(url, options);
          const next = await continuation(url, options);
          loads.push([reload.info.loadedFrom, reload.text === next.text, next.info.loadedFrom, next.text]);
        }
        return loads;
      }, { url: modelUrl(), fileName: cacheFileName(modelUrl()), sha256 });
      expect(result).toEqual([['network', true, 'cache', expected], ['network', true, 'cache', expected]]);
    });

    it('a download that fails its sha256 check keeps nothing, not even a partial file', async () => {
      await inPage(t, ({ wasmLlm }) => wasmLlm.LLM.cache.clear());
      const result = await inPage(t, async ({ loadError, opfsNames }, { url }) => ({
        error: await loadError(url, { sha256: '0'.repeat(64) }), names: await opfsNames(),
      }), { url: modelUrl() });
      expect(result).toEqual({ error: expect.objectContaining({ code: 'sha256_mismatch' }), names: [] });
    });
  });

  describe.runIf(!browser.opfs)('no usable OPFS (WebKit here)', () => {
    it('every load downloads; nothing is cached and LLM.cache lists, deletes and clears nothing', async () => {
      const before = modelRequests();
      const result = await inPage(t, async ({ wasmLlm, continuation, opfsNames }, { url }) => {
        const { cache } = wasmLlm.LLM;
        const first = await continuation(url);
        const second = await continuation(url);
        const listed = await cache.list();
        const deleted = await cache.delete(url);
        await cache.clear();
        return {
          from: [first.info.loadedFrom, second.info.loadedFrom], texts: [first.text, second.text], listed, deleted,
          names: await opfsNames(),
        };
      }, { url: modelUrl() });
      expect(result).toEqual({
        from: ['network', 'network'], texts: [expected, expected], listed: [], deleted: false, names: null,
      });
      expect(modelRequests()).toBe(before + 2);
      expect(t.pageErrors).toEqual([]);
    });
  });

  describe('errors', () => {
    it('a file that is not GGUF, a 404 and a sha256 mismatch reject with LoadError, cache nothing, and the page recovers', async () => {
      await inPage(t, ({ wasmLlm }) => wasmLlm.LLM.cache.clear());
      const result = await inPage(t, async ({ wasmLlm, continuation, loadError, opfsNames }, { origin }) => {
        const notGguf = await loadError(`${origin}/README.md`);
        const missing = await loadError(`${origin}/models/missing.gguf`);
        const wrongHash = await loadError(`${origin}/models/stories260K.gguf`, { sha256: '0'.repeat(64) });
        const after = await continuation(`${origin}/models/stories260K.gguf`, { cache: false });
        return {
          notGguf, missing, wrongHash, afterText: after.text,
          entries: await wasmLlm.LLM.cache.list(), names: await opfsNames(),
        };
      }, { origin: t.origin });
      expect(result.notGguf).toMatchObject({ name: 'LoadError', code: 'bad_file', isLLMError: true, isLoadError: true });
      expect(result.notGguf.message).toMatch(/GGUF|magic/i);
      expect(result.missing).toMatchObject({ name: 'LoadError', code: 'not_found', isLoadError: true, status: 404 });
      expect(result.wrongHash).toMatchObject({ name: 'LoadError', code: 'sha256_mismatch', isLoadError: true });
      expect(result.wrongHash.message).toMatch(/sha256/);
      expect(result.afterText).toBe(expected);
      expect(result.entries).toEqual([]);
      expect(result.names).toEqual(browser.opfs ? [] : null);  // no partial download left behind
    });

    it('aborting a load rejects with AbortError', async () => {
      const result = await inPage(t, async ({ wasmLlm, describeError }, { url }) => {
        const controller = new AbortController();
        return wasmLlm.LLM.load(url, {
          cache: false,
          signal: controller.signal,
          onProgress: () => controller.abort(),
        }).then((llm) => llm.dispose().then(() => null), describeError);
      }, { url: MODEL_PATH });
      expect(result).toMatchObject({ name: 'AbortError', code: 'aborted', isLLMError: true });
    });

    it('a failed request and a generation that does not fit carry their codes; an unknown option is a TypeError', async () => {
      const result = await inPage(t, async ({ wasmLlm, loadError, describeError }, { url }) => {
        // A port nothing listens on: fetch itself fails.
        const refused = await loadError('http://127.0.0.1:1/model.gguf', { cache: false });
        const llm = await wasmLlm.LLM.load(url, { cache: false, contextSize: 16 });
        const long = await llm.generate('Once upon a time there was a dog. '.repeat(4)).then(() => null, describeError);
        const option = await llm.generate('Once', { max_tokens: 4 }).then(() => null, describeError);
        await llm.dispose();
        return { refused, long, option };
      }, { url: MODEL_PATH });
      expect(result.refused).toMatchObject({ name: 'LoadError', code: 'network', isLLMError: true });
      expect(result.long).toMatchObject({ name: 'GenerationError', code: 'context_full', isGenerationError: true });
      expect(result.option).toMatchObject({ name: 'TypeError', code: 'invalid_argument', isLLMError: false });
      expect(result.option.message).toBe("unknown generate option 'max_tokens' (did you mean 'maxTokens'?)");
    });

    it('an HTTP error status is a LoadError with the status', async () => {
      const forbidden = '/models/forbidden.gguf';
      const result = await t.answering(forbidden, (req, res, headers) => res.writeHead(403, headers).end('no'),
        () => inPage(t, ({ loadError }, { url }) => loadError(url, { cache: false }), { url: forbidden }));
      expect(result).toMatchObject({ name: 'LoadError', code: 'http_error', status: 403 });
      expect(t.requestsFor(forbidden)).toHaveLength(1);
    });

    it('dispose() rejects a running and a queued generation, and later calls', async () => {
      const result = await inPage(t, async ({ wasmLlm, describeError }, { url }) => {
        const llm = await wasmLlm.LLM.load(url);
        let firstToken;
        const started = new Promise((resolve) => (firstToken = resolve));
        const running = llm.generate('Once upon a time', { maxTokens: 400, temperature: 0, onToken: firstToken });
        const queued = llm.generate('Once', { maxTokens: 400, temperature: 0 });
        await started;
        await llm.dispose();
        const settle = (p) => p.then(() => 'resolved', describeError);
        return { running: await settle(running), queued: await settle(queued), later: await settle(llm.tokenize('x')) };
      }, { url: MODEL_PATH });
      for (const key of ['running', 'queued', 'later']) {
        expect(result[key], key).toMatchObject({ name: 'GenerationError', code: 'disposed', isGenerationError: true });
      }
    });

    it('a source that is not a model source is a TypeError', async () => {
      const result = await inPage(t, ({ loadError }) => loadError(42));
      expect(result).toMatchObject({ name: 'TypeError', code: 'invalid_argument' });
    });
  });
});
