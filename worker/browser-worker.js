// The engine worker in browsers: a module Web Worker that owns the wasm
// instance (Emscripten's ES module glue; the threaded build starts its pthread
// pool as nested workers) and serves the page's requests (serve.js), as
// node-worker.js does in Node. Downloads are cached in OPFS.
//
// Started by js/browser/platform.js; its first message is
// {type: 'init', variant: 'mt' | 'st', threads, relaxedSimd}, every later one
// a request.
import { openOpfsCache } from '../js/browser/opfs-cache.js';
import { portStream } from '../js/browser/stream-port.js';
import { canRunThreads } from '../js/browser/threads.js';
import { streamReader } from '../js/readers.js';
import { EngineHost } from './engine-host.js';
import { callerSourceReader } from './model-loader.js';
import { wasmBuild } from './relaxed-simd.js';
import { serve } from './serve.js';

// Static imports (one per build) so bundlers see and copy every build: the
// variants, each also compiled with relaxed SIMD.
const GLUE = {
  mt: () => import('../dist/wasm/wasm-llm-mt-web.js'),
  st: () => import('../dist/wasm/wasm-llm-st-web.js'),
  'mt-relaxed': () => import('../dist/wasm/wasm-llm-mt-relaxed-web.js'),
  'st-relaxed': () => import('../dist/wasm/wasm-llm-st-relaxed-web.js'),
};
// Each build's wasm binary, fetched here rather than by the glue (see instantiateFrom).
const WASM = {
  mt: new URL('../dist/wasm/wasm-llm-mt-web.wasm', import.meta.url).href,
  st: new URL('../dist/wasm/wasm-llm-st-web.wasm', import.meta.url).href,
  'mt-relaxed': new URL('../dist/wasm/wasm-llm-mt-relaxed-web.wasm', import.meta.url).href,
  'st-relaxed': new URL('../dist/wasm/wasm-llm-st-relaxed-web.wasm', import.meta.url).href,
};
// The threaded builds' pthread worker scripts by URL, for bundlers: they are
// classic workers that import() the glue, so both must stay as built. The
// glue's own `new Worker(new URL(...))` would make a bundler turn the worker
// script into a module; these plain URLs make it copy the files unchanged.
const THREADED_FILES = {
  mt: {
    glue: new URL('../dist/wasm/wasm-llm-mt-web.js', import.meta.url).href,
    'wasm-llm-mt-web.worker.js': new URL('../dist/wasm/wasm-llm-mt-web.worker.js', import.meta.url).href,
  },
  'mt-relaxed': {
    glue: new URL('../dist/wasm/wasm-llm-mt-relaxed-web.js', import.meta.url).href,
    'wasm-llm-mt-relaxed-web.worker.js': new URL('../dist/wasm/wasm-llm-mt-relaxed-web.worker.js', import.meta.url).href,
  },
};

// post(message) sends to the caller.
async function createHost({ variant, threads, relaxedSimd }, post) {
  // The page picked the threaded build by what it can use; this worker may have less.
  if (variant === 'mt' && !canRunThreads()) [variant, threads] = ['st', 1];
  const build = wasmBuild(variant, relaxedSimd);
  const { default: createWasmLlm } = await GLUE[build]();
  const wasm = instantiateFrom((await sameOriginUrls({ wasm: WASM[build] })).wasm);
  const settings = { nThreads: threads, instantiateWasm: wasm.instantiateWasm };
  if (THREADED_FILES[build]) {
    const files = await sameOriginUrls(THREADED_FILES[build]);
    settings.locateFile = (name, prefix) => files[name] ?? prefix + name;
    settings.mainScriptUrlOrBlob = files.glue;
  }
  const threaded = Boolean(THREADED_FILES[build]);
  const created = threaded ? reportingThreads(threads, post, () => createWasmLlm(settings)) : createWasmLlm(settings);
  const module = await Promise.race([created, wasm.failure, pthreadPoolFailure(settings)]);
  return new EngineHost(module, threads, {
    readers: { 'stream-port': readPortStream },
    cache: () => openOpfsCache(),
    yieldToEventLoop,
  });
}

// Calls create(), in which the glue creates the pthread pool's `threads`
// workers, and tells the caller as it goes: 'creating-threads', a
// 'thread-created' after each, 'threads-created'. Firefox builds a worker
// inside a worker through a synchronous round trip to the page's thread that
// now and then never returns, and nothing here can end that wait: the caller
// watches these messages and starts another engine worker beside one that
// stalls (js/client.js, js/llm.js).
function reportingThreads(threads, post, create) {
  const PlainWorker = self.Worker;
  self.Worker = class extends PlainWorker {
    constructor(...args) {
      super(...args);
      post({ type: 'thread-created' });
    }
  };
  post({ type: 'creating-threads', threads });
  try {
    const created = create();
    post({ type: 'threads-created' });
    return created;
  } finally {
    self.Worker = PlainWorker;
  }
}

// A 'stream-port' source (js/browser/platform.js): the caller's bytes or
// stream, read in the page and sent through a port.
function readPortStream({ port, size }) {
  return callerSourceReader(streamReader(portStream(port), size));
}

// The glue's instantiateWasm hook, fetching the binary at `url` once, and
// `failure`, which rejects with the reason if that (or handing the instance
// to the glue) fails. The glue's own loader answers a failed fetch by
// fetching again, then with a synchronous XHR that blocks this worker (and
// can hang under request interception), and reports neither the URL nor the
// HTTP status.
function instantiateFrom(url) {
  let fail;
  const failure = new Promise((_, reject) => {
    fail = reject;
  });
  const instantiateWasm = (imports, receiveInstance) => {
    instantiateBinary(url, imports).then(({ instance, module }) => receiveInstance(instance, module)).catch(fail);
    return {};  // the exports come later, through receiveInstance
  };
  return { instantiateWasm, failure };
}

async function instantiateBinary(url, imports) {
  let response;
  try {
    response = await fetch(url, { credentials: 'same-origin' });
  } catch (error) {
    throw new Error(`cannot fetch the wasm binary ${url}: ${error.message}`, { cause: error });
  }
  if (!response.ok) throw new Error(`cannot fetch the wasm binary ${url}: HTTP ${response.status}`);
  // Compiling while downloading needs the right MIME type; a server without it gets the buffered path.
  if (response.headers.get('content-type')?.split(';')[0].trim() === 'application/wasm') {
    return WebAssembly.instantiateStreaming(response, imports);
  }
  return WebAssembly.instantiate(await response.arrayBuffer(), imports);
}

// `urls` with data: URLs (bundlers inline small files so) turned into blob:
// URLs: a worker started from a data: URL has an opaque origin and could not
// import the glue.
async function sameOriginUrls(urls) {
  const out = {};
  for (const [name, url] of Object.entries(urls)) {
    out[name] = url.startsWith('data:') ? URL.createObjectURL(await (await fetch(url)).blob()) : url;
  }
  return out;
}

// Rejects if a worker of the threaded build's pthread pool fails to start.
// The glue creates the pool synchronously in the factory call (on the object
// it was given) and then waits for every worker to report in; one whose
// script does not load would otherwise leave the load waiting forever.
function pthreadPoolFailure(settings) {
  return new Promise((_, reject) => {
    for (const worker of settings.PThread?.unusedWorkers ?? []) {
      const fail = (event) => reject(new Error(`a pthread worker failed to start: ${event.message || 'its script did not load'}`));
      worker.addEventListener('error', fail, { once: true });
    }
  });
}

// A macrotask turn through a MessageChannel: lets queued messages (an abort)
// in between generation steps. setTimeout(0) would do too, but browsers clamp
// nested timeouts to 4 ms, which would cost more than a token.
const turns = new MessageChannel();
const waiting = [];
turns.port1.onmessage = () => waiting.shift()();
function yieldToEventLoop() {
  return new Promise((resolve) => {
    waiting.push(resolve);
    turns.port2.postMessage(null);
  });
}

let onRequest = null;
const post = (message, transfer) => self.postMessage(message, transfer);
self.addEventListener('message', ({ data }) => {
  if (onRequest) onRequest(data);
  else if (data?.type === 'init') onRequest = serve(post, () => createHost(data, post));
});
