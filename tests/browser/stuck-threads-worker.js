// The engine worker (worker/browser-worker.js) as Firefox now and then leaves
// it: creating a pthread worker never returns. Here the Worker constructor the
// wasm glue calls blocks this thread for good, as Firefox's does; the caller
// must notice and start another engine worker (startup.test.mjs).
import '../../worker/browser-worker.js';

self.Worker = function Worker() {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
};
