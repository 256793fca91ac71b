// Caller side of the engine worker: starts it, sends requests with ids and
// routes the worker's answers back to them. The worker runs requests one at a
// time in the order sent, so calls made during a generation simply queue.
// Every request's promise settles: with its result, its error, AbortError as
// soon as its signal fires, or an error if the worker dies.
import { Worker } from 'node:worker_threads';
import { AbortError, GenerationError, LoadError, errorFromDescription } from './errors.js';

export class WorkerClient {
  // Starts the worker with wasm variant 'mt' or 'st' and `threads` engine threads.
  static async start(variant, threads) {
    const worker = new Worker(new URL('./node-worker.js', import.meta.url), { workerData: { variant, threads } });
    const listeners = {};
    try {
      await new Promise((resolve, reject) => {
        const fail = (message, cause) => reject(new LoadError(`cannot start the engine worker: ${message}`, { cause }));
        listeners.message = (msg) => (msg.type === 'ready' ? resolve() : fail(msg.message));
        listeners.error = (error) => fail(error.message, error);
        listeners.exit = (code) => fail(`it exited with code ${code}`);
        for (const [event, listener] of Object.entries(listeners)) worker.on(event, listener);
      });
    } catch (error) {
      worker.terminate();
      throw error;
    } finally {
      // Only ours: the Worker keeps internal listeners of its own.
      for (const [event, listener] of Object.entries(listeners)) worker.off(event, listener);
    }
    return new WorkerClient(worker);
  }

  constructor(worker) {
    this.worker = worker;
    this.nextId = 1;
    this.pending = new Map();  // id → {resolve, reject, onEvent, kind}
    this.deathError = null;
    worker.on('message', (msg) => this.#onMessage(msg));
    worker.on('error', (error) => this.#onDeath(error));
    worker.on('exit', (code) => this.#onDeath(new Error(`the engine worker exited with code ${code}`)));
    worker.unref();  // an idle model must not keep the process alive
  }

  // Sends request {type, ...payload}; onEvent(msg) gets its progress/text
  // messages. `kind` ('load' or 'generation') picks the error type if the
  // worker dies. `transfer` lists objects to move to the worker.
  request(type, payload, { signal, onEvent, kind = 'generation', transfer = [] } = {}) {
    if (this.deathError) return Promise.reject(deathErrorFor(kind, this.deathError));
    if (signal?.aborted) return Promise.reject(new AbortError());
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.worker.postMessage({ type: 'abort', id });
        this.#settle(id, () => reject(new AbortError()));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const cleanup = () => signal?.removeEventListener('abort', onAbort);
      this.pending.set(id, { resolve, reject, onEvent, kind, cleanup });
      if (this.pending.size === 1) this.worker.ref();
      try {
        this.worker.postMessage({ id, type, ...payload }, transfer);
      } catch (error) {
        this.#settle(id, () => reject(deathErrorFor(kind, error)));
      }
    });
  }

  terminate() {
    this.deathError ??= new Error('the model was disposed');
    return this.worker.terminate();
  }

  #onMessage(msg) {
    const entry = this.pending.get(msg.id);
    if (!entry) return;  // already settled (aborted)
    if (msg.type === 'done') this.#settle(msg.id, () => entry.resolve(msg.result));
    else if (msg.type === 'error') this.#settle(msg.id, () => entry.reject(errorFromDescription(msg.error)));
    else entry.onEvent?.(msg);
  }

  #settle(id, settle) {
    const entry = this.pending.get(id);
    if (!entry) return;
    this.pending.delete(id);
    entry.cleanup();
    if (this.pending.size === 0) this.worker.unref();
    settle();
  }

  #onDeath(error) {
    this.deathError ??= error;
    for (const [id, entry] of this.pending) this.#settle(id, () => entry.reject(deathErrorFor(entry.kind, error)));
  }
}

function deathErrorFor(kind, cause) {
  const message = `the engine is not available: ${cause.message}`;
  return kind === 'load' ? new LoadError(message, { cause }) : new GenerationError(message, { cause });
}
