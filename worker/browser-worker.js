// The engine worker in browsers: a module Web Worker that owns the wasm
// instance (Emscripten's ES module glue; the threaded build starts its pthread
// pool as nested workers) and serves the page's requests (serve.js), as
// node-worker.js does in Node. Downloads are cached in OPFS.
//
// Started by js/browser/platform.js; its first message is
// {type: 'init', variant: 'mt' | 'st', threads}, every later one a request.
import { openOpfsCache } from '../js/browser/opfs-cache.js';
import { EngineHost } from './engine-host.js';
import { serve } from './serve.js';

// Static imports (one per variant) so bundlers see and copy both builds.
const GLUE = {
  mt: () => import('../dist/wasm/wasm-llm-mt-web.js'),
  st: () => import('../dist/wasm/wasm-llm-st-web.js'),
};

async function createHost({ variant, threads }) {
  const { default: createWasmLlm } = await GLUE[variant]();
  const settings = { nThreads: threads };
  const created = createWasmLlm(settings);
  const module = await Promise.race([created, pthreadPoolFailure(settings)]);
  return new EngineHost(module, threads, {
    readers: {},
    cache: () => openOpfsCache(),
    yieldToEventLoop,
  });
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
self.addEventListener('message', ({ data }) => {
  if (onRequest) onRequest(data);
  else if (data?.type === 'init') onRequest = serve((message) => self.postMessage(message), () => createHost(data));
});
