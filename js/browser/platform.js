// What LLM needs from a browser (see js/llm.js): a module Web Worker for the
// engine, threads where the page can run them, URLs relative to
// the page, and the OPFS download cache. Nothing here may import node:
// modules: bundlers follow every import from js/browser.js.
import { describeCommonSource, registryDownload } from '../sources.js';
import { openOpfsCache } from './opfs-cache.js';
import { canTransferStreams, streamPort } from './stream-port.js';
import { canRunThreads } from './threads.js';

const MAX_DEFAULT_THREADS = 4;

export const browserPlatform = {
  // The pthreads build needs SharedArrayBuffer, which needs cross-origin
  // isolation (COOP: same-origin and COEP: require-corp on the page).
  threadsSupported: canRunThreads,

  defaultThreads() {
    if (!browserPlatform.threadsSupported()) return 1;
    return Math.max(1, Math.min(MAX_DEFAULT_THREADS, navigator.hardwareConcurrency || 1));
  },

  // The worker picks the relaxed-SIMD build of `variant` if relaxedSimd and the browser runs it.
  startWorker(variant, threads, relaxedSimd) {
    // This exact form lets Vite, webpack and others find and bundle the worker.
    const worker = new Worker(new URL('../../worker/browser-worker.js', import.meta.url), {
      type: 'module',
      name: `wasm-llm engine (${variant}, ${threads} thread${threads === 1 ? '' : 's'})`,
    });
    worker.postMessage({ type: 'init', variant, threads, relaxedSimd });
    return webWorkerPort(worker);
  },

  // Sources: a registry name, a URL (absolute, relative to the page, or
  // 'hf:owner/repo/file'), bytes, a Blob or File, or a ReadableStream.
  async resolveSource(source, options) {
    const download = registryDownload(source);
    if (download) {
      return { description: { kind: 'url', url: download.url, cache: options.cache }, transfer: [], sha256: download.sha256 };
    }
    const common = describeCommonSource(source, options);
    if (common) return withStreamsThatPost(common);
    if (typeof source === 'string') {
      const url = new URL(source, globalThis.location?.href);
      if (/^https?:$/.test(url.protocol)) return describeCommonSource(url.href, options);
      throw new TypeError(`cannot load '${source}': only http(s) URLs can be fetched`);
    }
    throw new TypeError('the model source must be a model name, a URL, bytes, a Blob or a ReadableStream');
  },

  // The page's view of the OPFS cache: list and delete entries.
  cache: {
    async list() {
      return (await openOpfsCache())?.list() ?? [];
    },
    async delete(url) {
      return (await openOpfsCache())?.delete(url) ?? false;
    },
    async clear() {
      await (await openOpfsCache())?.clear();
    },
  },
};

// `resolved`, with a stream to hand over (bytes and ReadableStreams) as a
// MessagePort where the browser cannot transfer streams (WebKit); the
// browser worker reads that kind, 'stream-port', with portStream().
function withStreamsThatPost(resolved) {
  const { description } = resolved;
  if (description.kind !== 'stream' || canTransferStreams()) return resolved;
  const port = streamPort(description.stream);
  return { description: { kind: 'stream-port', port, size: description.size }, transfer: [port] };
}

// A Web Worker as the port js/client.js talks to. A browser worker has no
// exit event; an uncaught error in it (or a script that fails to load) is
// reported as 'error', and the client then treats the worker as dead.
function webWorkerPort(worker) {
  return {
    post: (message, transfer) => worker.postMessage(message, transfer),
    on(event, listener) {
      let handler;
      if (event === 'message') handler = (e) => listener(e.data);
      else if (event === 'error') handler = (e) => listener(new Error(e.message || 'the engine worker failed'));
      else return () => {};
      const types = event === 'error' ? ['error', 'messageerror'] : ['message'];
      for (const type of types) worker.addEventListener(type, handler);
      return () => {
        for (const type of types) worker.removeEventListener(type, handler);
      };
    },
    terminate: () => worker.terminate(),
    ref() {},
    unref() {},
  };
}
