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
        const fail = (message, cause) => reject(new LoadError(`cannot start the engine worker: ${message}`, {
          code: 'worker_failed',
          cause,
        }));
        offs.push(port.on('message', (msg) => {
          if (msg.type === 'ready') resolve();
          else if (msg.type === 'init-error') fail(msg.message);
        }));
        offs.push(port.on('error', (error) => fail(error?.message ?? String(error), error)));
        offs.push(port.on('exit', (code) => fail(`it exited with code ${code}`)));
        const onAbort = () => reject(new AbortError('loading was aborted', { cause: signal.reason }));
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
    this.death = null;  // {code, message, cause} once the worker is gone
    port.on('message', (msg) => this.#onMessage(msg));
    port.on('error', (error) => this.#onDeath('worker_failed', error?.message ?? 'worker error', error));
    port.on('exit', (code) => this.#onDeath('worker_failed', `the engine worker exited with code ${code}`));
    port.unref();  // an idle model must not keep a Node process alive
  }

  // Sends request {type, ...payload}; onEvent(msg) gets its progress/text
  // messages. `kind` ('load' or 'generation') picks the error type if the
  // worker dies. `transfer` lists objects to move to the worker.
  request(type, payload, { signal, onEvent, kind = 'generation', transfer = [] } = {}) {
    if (this.death) return Promise.reject(requestError(kind, 'the engine is not available', this.death));
    if (signal?.aborted) return Promise.reject(new AbortError(undefined, { cause: signal.reason }));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.port.post({ type: 'abort', id });
        this.#settle(id, () => reject(new AbortError(undefined, { cause: signal.reason })));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const cleanup = () => signal?.removeEventListener('abort', onAbort);
      this.pending.set(id, { resolve, reject, onEvent, kind, cleanup });
      if (this.pending.size === 1) this.port.ref();
      try {
        this.port.post({ id, type, ...payload }, transfer);
      } catch (error) {
        // Something in the request cannot be sent (a locked stream, a value that does not clone).
        const failure = { code: 'invalid_argument', message: error.message, cause: error };
        this.#settle(id, () => reject(requestError(kind, 'cannot send the request to the engine worker', failure)));
      }
    });
  }

  // Stops the worker; pending and later requests reject.
  async terminate() {
    this.#onDeath('disposed', 'the model was disposed');
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

  // code: 'disposed' or 'worker_failed'.
  #onDeath(code, message, cause) {
    this.death ??= { code, message, cause };
    const error = (kind) => requestError(kind, 'the engine is not available', this.death);
    for (const [id, entry] of this.pending) this.#settle(id, () => entry.reject(error(entry.kind)));
  }
}

// The LoadError or GenerationError (by `kind`) for a request that failed on
// this side: "<context>: <message>", with the failure's code and cause.
function requestError(kind, context, { code, message, cause }) {
  const ErrorType = kind === 'load' ? LoadError : GenerationError;
  return new ErrorType(`${context}: ${message}`, { code, cause });
}
