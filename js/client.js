// Caller side of the engine worker: sends requests with ids and routes the
// worker's answers back to them. The worker runs requests one at a time in the
// order sent, so calls made during a generation simply queue.
// Every request's promise settles: with its result, its error, AbortError as
// soon as its signal fires, or an error when the worker dies or is disposed.
//
// The worker is reached through a port, so Node's worker_threads and the
// browser's Web Worker look the same here:
//   { post(message, transfer), on(event, listener) → off() for 'message' | 'error' | 'exit',
//     terminate(), ref(), unref() }
import { AbortError, GenerationError, LoadError, errorFromDescription } from './errors.js';

export class WorkerClient {
  // Waits for the worker's 'ready' message; rejects with LoadError if it fails
  // to start, or with AbortError as soon as `signal` fires (the worker fetches
  // and compiles the wasm binary first, which a stalled network can hold up).
  static async start(port, { signal } = {}) {
    const offs = [];
    try {
      await new Promise((resolve, reject) => {
        const fail = (message, cause) => reject(new LoadError(`cannot start the engine worker: ${message}`, { cause }));
        offs.push(port.on('message', (msg) => {
          if (msg.type === 'ready') resolve();
          else if (msg.type === 'init-error') fail(msg.message);
        }));
        offs.push(port.on('error', (error) => fail(error?.message ?? String(error), error)));
        offs.push(port.on('exit', (code) => fail(`it exited with code ${code}`)));
        const onAbort = () => reject(new AbortError('loading was aborted'));
        if (signal?.aborted) onAbort();
        signal?.addEventListener('abort', onAbort, { once: true });
        offs.push(() => signal?.removeEventListener('abort', onAbort));
      });
    } catch (error) {
      port.terminate();
      throw error;
    } finally {
      for (const off of offs) off();
    }
    return new WorkerClient(port);
  }

  constructor(port) {
    this.port = port;
    this.nextId = 1;
    this.pending = new Map();  // id → {resolve, reject, onEvent, kind, cleanup}
    this.deathError = null;
    port.on('message', (msg) => this.#onMessage(msg));
    port.on('error', (error) => this.#onDeath(error instanceof Error ? error : new Error(error?.message ?? 'worker error')));
    port.on('exit', (code) => this.#onDeath(new Error(`the engine worker exited with code ${code}`)));
    port.unref();  // an idle model must not keep a Node process alive
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
        this.port.post({ type: 'abort', id });
        this.#settle(id, () => reject(new AbortError()));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const cleanup = () => signal?.removeEventListener('abort', onAbort);
      this.pending.set(id, { resolve, reject, onEvent, kind, cleanup });
      if (this.pending.size === 1) this.port.ref();
      try {
        this.port.post({ id, type, ...payload }, transfer);
      } catch (error) {
        this.#settle(id, () => reject(deathErrorFor(kind, error)));
      }
    });
  }

  // Stops the worker; pending and later requests reject.
  async terminate() {
    this.#onDeath(new Error('the model was disposed'));
    await this.port.terminate();
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
    if (this.pending.size === 0) this.port.unref();
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
