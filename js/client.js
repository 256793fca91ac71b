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

// How long terminate() lets a running load clean up before the worker is stopped.
const TERMINATE_GRACE_MS = 5000;
// How long a worker creating its threads' workers may go without creating
// one, between its 'creating-threads' and 'threads-created' messages (with a
// 'thread-created' after each). It waits for no network then (the scripts
// load later), only for this thread: Firefox creates a worker inside a worker
// through a synchronous round trip to the page's thread, and now and then
// that never returns. A timer that fires more than LATE_TIMER_MS late means
// this thread was busy, so the worker waits anew.
const THREAD_START_MS = 5000;
const LATE_TIMER_MS = 1000;

// What a worker that stalled creating its threads' workers (see
// THREAD_START_MS) would fail with; LLM.load starts another beside it.
export class ThreadStartError extends LoadError {}

export class WorkerClient {
  // Waits for the worker's 'ready' message; rejects with LoadError if it fails
  // to start, or with AbortError as soon as `signal` fires (the worker fetches
  // and compiles the wasm binary first, which a stalled network can hold up).
  // A stall creating its threads' workers does not end the wait, since a slow
  // machine can stall as long: onStall(ThreadStartError) reports it, and
  // onStall(null) that the worker went on after all.
  static async start(port, { signal, onStall = () => {} } = {}) {
    const offs = [];
    try {
      await new Promise((resolve, reject) => {
        const fail = (message, cause) => reject(new LoadError(`cannot start the engine worker: ${message}`, {
          code: 'worker_failed',
          cause,
        }));
        let threads = 0;
        let stalled = false;
        let stopWatchdog = () => {};
        offs.push(() => stopWatchdog());
        const stall = () => {
          stalled = true;
          onStall(new ThreadStartError(
            `cannot start the engine worker: it stalled creating its ${threads} thread workers: none created for ${THREAD_START_MS / 1000} s`,
            { code: 'worker_failed' },
          ));
        };
        // The worker began creating its threads' workers, or created one, or (done) all.
        const progressed = (done) => {
          stopWatchdog();
          stopWatchdog = done ? () => {} : watchdog(THREAD_START_MS, stall);
          if (stalled) onStall(null);
          stalled = false;
        };
        offs.push(port.on('message', (msg) => {
          if (msg.type === 'ready') resolve();
          else if (msg.type === 'init-error') fail(msg.message);
          else if (msg.type === 'creating-threads') {
            threads = msg.threads;
            progressed(false);
          } else if (msg.type === 'thread-created') progressed(false);
          else if (msg.type === 'threads-created') progressed(true);
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

  #onNoLoad = null;  // ends terminate()'s wait for running loads

  constructor(port) {
    this.port = port;
    this.nextId = 1;
    this.pending = new Map();   // id → {resolve, reject, onEvent, kind, cleanup}: the caller still waits
    this.running = new Map();   // id → request type: the worker has not answered yet (an aborted call too)
    this.death = null;          // {code, message, cause} once the worker is gone
    port.on('message', (msg) => this.#onMessage(msg));
    port.on('error', (error) => this.#onExit('worker_failed', error?.message ?? 'worker error', error));
    port.on('exit', (code) => this.#onExit('worker_failed', `the engine worker exited with code ${code}`));
    port.unref();  // an idle model must not keep a Node process alive
  }

  // Sends request {type, ...payload}; onEvent(msg) gets its progress/text
  // messages. `kind` ('load' or 'generation') picks the error type if the
  // worker dies. `transfer` lists objects to move to the worker.
  // If onEvent throws, the request is aborted and rejects with that error.
  request(type, payload, { signal, onEvent, kind = 'generation', transfer = [] } = {}) {
    if (this.death) return Promise.reject(requestError(kind, 'the engine is not available', this.death));
    if (signal?.aborted) return Promise.reject(new AbortError(undefined, { cause: signal.reason }));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const onAbort = () => this.#abort(id, new AbortError(undefined, { cause: signal.reason }));
      signal?.addEventListener('abort', onAbort, { once: true });
      const cleanup = () => signal?.removeEventListener('abort', onAbort);
      this.pending.set(id, { resolve, reject, onEvent, kind, cleanup });
      this.running.set(id, type);
      // The worker keeps Node alive while it has work, aborted work included:
      // an aborted download still removes its partial file.
      if (this.running.size === 1) this.port.ref();
      try {
        this.port.post({ id, type, ...payload }, transfer);
      } catch (error) {
        // Something in the request cannot be sent (a locked stream, a value that does not clone).
        this.#finished(id);
        const failure = { code: 'invalid_argument', message: error.message, cause: error };
        this.#settle(id, () => reject(requestError(kind, 'cannot send the request to the engine worker', failure)));
      }
    });
  }

  // Stops the worker; pending and later requests reject. A load still
  // running in the worker is aborted and may first remove its partial cache
  // file (for at most a few seconds).
  async terminate() {
    this.#onDeath('disposed', 'the model was disposed');
    await this.#loadsFinished(TERMINATE_GRACE_MS);
    await this.port.terminate();
  }

  #onMessage(msg) {
    if (msg.type === 'done' || msg.type === 'error') this.#finished(msg.id);
    if (msg.type === 'error' && msg.error.fatal) this.#onCrash(msg);
    const entry = this.pending.get(msg.id);
    if (!entry) return;  // already settled (aborted)
    if (msg.type === 'done') this.#settle(msg.id, () => entry.resolve(msg.result));
    else if (msg.type === 'error') this.#settle(msg.id, () => entry.reject(errorFromDescription(msg.error)));
    else {
      try {
        entry.onEvent?.(msg);
      } catch (error) {
        // The caller's callback threw: that call ends with its error.
        this.#abort(msg.id, error);
      }
    }
  }

  // The engine trapped (worker/serve.js): that request rejects with the
  // worker's error, every other one (pending or later) as if the worker had
  // died, and the worker, whose engine can do nothing more, is ended.
  #onCrash(msg) {
    const error = errorFromDescription(msg.error);
    const entry = this.pending.get(msg.id);
    if (entry) this.#settle(msg.id, () => entry.reject(error));
    this.#onExit('worker_failed', error.message, error.cause);
    this.port.terminate();
  }

  // Tells the worker to stop request `id` and rejects it with `error` now.
  #abort(id, error) {
    const entry = this.pending.get(id);
    if (!entry) return;
    this.port.post({ type: 'abort', id });
    this.#settle(id, () => entry.reject(error));
  }

  #settle(id, settle) {
    const entry = this.pending.get(id);
    if (!entry) return;
    this.pending.delete(id);
    entry.cleanup();
    settle();
  }

  // The worker has answered request `id`.
  #finished(id) {
    if (!this.running.delete(id)) return;
    if (this.running.size === 0) this.port.unref();
    if (!this.#loadRunning()) this.#onNoLoad?.();
  }

  #loadRunning() {
    return [...this.running.values()].includes('load');
  }

  // Resolves once no load runs in the worker (each is told to abort), or after `ms`.
  #loadsFinished(ms) {
    if (!this.#loadRunning()) return Promise.resolve();
    for (const [id, type] of this.running) if (type === 'load') this.port.post({ type: 'abort', id });
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#onNoLoad = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  // The worker died or failed: nothing it ran will answer.
  #onExit(code, message, cause) {
    this.#onDeath(code, message, cause);
    this.running.clear();
    this.#onNoLoad?.();
  }

  // code: 'disposed' or 'worker_failed'.
  #onDeath(code, message, cause) {
    this.death ??= { code, message, cause };
    const error = (kind) => requestError(kind, 'the engine is not available', this.death);
    for (const [id, entry] of this.pending) this.#settle(id, () => entry.reject(error(entry.kind)));
  }
}

// Calls onTimeout() once `ms` have passed on time (a timer this thread ran
// late gets `ms` more). Returns cancel().
function watchdog(ms, onTimeout) {
  let timer;
  const wait = () => {
    const due = performance.now() + ms;
    timer = setTimeout(() => (performance.now() - due > LATE_TIMER_MS ? wait() : onTimeout()), ms);
  };
  wait();
  return () => clearTimeout(timer);
}

// The LoadError or GenerationError (by `kind`) for a request that failed on
// this side: "<context>: <message>", with the failure's code and cause.
function requestError(kind, context, { code, message, cause }) {
  const ErrorType = kind === 'load' ? LoadError : GenerationError;
  return new ErrorType(`${context}: ${message}`, { code, cause });
}
