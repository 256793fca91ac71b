// The engine worker (worker/browser-worker.js) as Firefox now and then leaves
// it: creating a pthread worker never returns. Here the Worker constructor the
// wasm glue calls blocks this thread for good, as Firefox's does; the caller
// must notice and start another engine worker (startup.test.mjs).
// With ?ms=A,B,… it is a slow worker instead: creating the first pthread
// worker blocks for A ms, the second for B ms, and so on (0 past the list).
import '../../worker/browser-worker.js';

const delays = new URLSearchParams(self.location.search).get('ms')?.split(',').map(Number);
const blockFor = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

if (delays) {
  const PlainWorker = self.Worker;
  let created = 0;
  self.Worker = class extends PlainWorker {
    constructor(...args) {
      blockFor(delays[created++] ?? 0);
      super(...args);
    }
  };
} else {
  self.Worker = function Worker() {
    blockFor(Infinity);
  };
}
