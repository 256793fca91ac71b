// A trap in the engine (a WebAssembly.RuntimeError: an out-of-bounds access,
// a null function pointer, an abort) leaves its memory in an unknown state.
// The request that trapped rejects with worker_failed, so does every other
// one, pending or later, none of them runs on the broken engine, and the
// worker is ended. An ordinary failure leaves the engine serving.
// The worker's request loop (worker/serve.js) and the caller's client
// (js/client.js) run here in one thread, joined by a port, around a host
// whose calls trap for real: they run a wasm function that executes
// `unreachable`.
import { describe, expect, it } from 'vitest';
import { WorkerClient } from '../../js/client.js';
import { GenerationError, LoadError } from '../../js/errors.js';
import { serve } from '../../worker/serve.js';

// (module (func (export "trap") unreachable))
const TRAP_MODULE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,  // magic, version
  0x01, 0x04, 0x01, 0x60, 0x00, 0x00,              // type section: () -> ()
  0x03, 0x02, 0x01, 0x00,                          // function section: one of type 0
  0x07, 0x08, 0x01, 0x04, 0x74, 0x72, 0x61, 0x70, 0x00, 0x00,  // export "trap"
  0x0a, 0x05, 0x01, 0x03, 0x00, 0x00, 0x0b,        // code: unreachable, end
]);
const trap = new WebAssembly.Instance(new WebAssembly.Module(TRAP_MODULE)).exports.trap;

// A host whose `trapping` calls trap in wasm, and whose `failing` calls throw
// an ordinary error; it counts the calls that reach it.
function fakeHost({ trapping = [], failing = [] } = {}) {
  const calls = [];
  const call = (name, result) => {
    calls.push(name);
    if (trapping.includes(name)) trap();
    if (failing.includes(name)) throw new Error(`${name} failed`);
    return result;
  };
  return {
    calls,
    load: async () => call('load', { architecture: 'llama' }),
    generate: async (prompt, options, onText) => {
      onText('Once');
      return call('generate', { generatedTokens: 1 });
    },
    tokenize: () => call('tokenize', [1, 2, 3]),
    detokenize: () => call('detokenize', 'text'),
  };
}

// A WorkerClient joined to serve(host) through an in-thread port that
// delivers each message in a later task, as a worker's port does.
async function connect(host) {
  const listeners = { message: [], error: [], exit: [] };
  const port = {
    terminated: 0,
    post: (msg) => setTimeout(() => onMessage(structuredClone(msg))),
    on: (event, listener) => {
      listeners[event].push(listener);
      return () => listeners[event].splice(listeners[event].indexOf(listener), 1);
    },
    terminate: () => {
      port.terminated += 1;
    },
    ref: () => {},
    unref: () => {},
  };
  const onMessage = serve(
    (msg) => setTimeout(() => listeners.message.slice().forEach((l) => l(structuredClone(msg)))),
    async () => host,
  );
  const client = await WorkerClient.start(port);
  return { client, port };
}

const settle = (promise) => promise.then((value) => ({ value }), (error) => ({ error }));

describe('a trap in the engine', () => {
  it('rejects that generation, the queued and the later calls with worker_failed, runs none of them, and ends the worker', async () => {
    const host = fakeHost({ trapping: ['generate'] });
    const { client, port } = await connect(host);
    const texts = [];
    const generation = settle(client.request('generate', { prompt: 'Once', options: {} }, {
      onEvent: (msg) => texts.push(msg.text),
    }));
    const queued = settle(client.request('tokenize', { text: 'a' }));
    const { error } = await generation;
    expect(error).toBeInstanceOf(GenerationError);
    expect(error.code).toBe('worker_failed');
    expect(error.message).toBe('the engine crashed (unreachable); load the model again');
    expect(error.cause).toMatchObject({ name: 'RuntimeError', message: 'unreachable' });
    expect(texts).toEqual(['Once']);

    const queuedError = (await queued).error;
    expect(queuedError).toBeInstanceOf(GenerationError);
    expect(queuedError.code).toBe('worker_failed');
    expect(queuedError.message).toMatch(/the engine crashed \(unreachable\)/);
    const later = await settle(client.request('detokenize', { ids: [1] }));
    expect(later.error.code).toBe('worker_failed');
    expect(later.error.message).toMatch(/the engine crashed \(unreachable\)/);
    expect(host.calls).toEqual(['generate']);
    expect(port.terminated).toBe(1);
  });

  it('rejects a trapped load with LoadError worker_failed', async () => {
    const { client, port } = await connect(fakeHost({ trapping: ['load'] }));
    const { error } = await settle(client.request('load', { source: {}, options: {} }, { kind: 'load' }));
    expect(error).toBeInstanceOf(LoadError);
    expect(error.code).toBe('worker_failed');
    expect(error.message).toMatch(/^the engine crashed \(unreachable\)/);
    expect(port.terminated).toBe(1);
  });

  it('the worker itself answers requests that reach it after the trap with the same error, without the engine', async () => {
    // (The client stops sending once it sees the trap; a request already on its
    // way meets the crash in the worker.)
    const host = fakeHost({ trapping: ['tokenize'] });
    const posted = [];
    const onMessage = serve((msg) => posted.push(msg), async () => host);
    await new Promise((resolve) => setTimeout(resolve));
    onMessage({ id: 1, type: 'tokenize', text: 'a' });
    onMessage({ id: 2, type: 'detokenize', ids: [1] });
    await new Promise((resolve) => setTimeout(resolve, 10));
    const errors = posted.filter((m) => m.type === 'error');
    expect(errors.map((m) => [m.id, m.error.code, m.error.fatal])).toEqual([[1, 'worker_failed', true], [2, 'worker_failed', true]]);
    expect(host.calls).toEqual(['tokenize']);
  });
});

describe('an ordinary failure', () => {
  it('rejects that call with code internal; the engine keeps serving', async () => {
    const host = fakeHost({ failing: ['tokenize'] });
    const { client, port } = await connect(host);
    const { error } = await settle(client.request('tokenize', { text: 'a' }));
    expect(error).toBeInstanceOf(GenerationError);
    expect(error.code).toBe('internal');
    expect(await client.request('detokenize', { ids: [1] })).toBe('text');
    expect(port.terminated).toBe(0);
  });
});
