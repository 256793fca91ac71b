// The request loop of an engine worker, the same in Node and in browsers
// (design-notes §3). Requests {id, type, ...} run one at a time in arrival
// order; each gets progress/text events and exactly one final 'done' or
// 'error' message. {type: 'abort', id} aborts that request, whether it is
// running or still waiting.
//
//   caller → worker: {id, type: 'load', source, options} | {id, type: 'generate', prompt, options}
//                    | {id, type: 'tokenize', text, addSpecial, parseSpecial} | {id, type: 'detokenize', ids}
//                    | {id, type: 'bench', promptTokens, generateTokens}
//                    | {id, type: 'embed', texts, options} | {id, type: 'rank', query, documents}
//                    | {id, type: 'saveState'} | {id, type: 'loadState', bytes}
//                    | {type: 'abort', id}
//   worker → caller: {type: 'ready'} | {type: 'init-error', message}  (once, at start)
//                    | {type: 'creating-threads', threads}, {type: 'thread-created'} after each,
//                      {type: 'threads-created'} (at start, from a browser's threaded build: see js/client.js)
//                    | {id, type: 'progress', progress} | {id, type: 'text', text}
//                    | {id, type: 'done', result} | {id, type: 'error', error}
// A result that is bytes (saveState's) is transferred, not copied.
//
// A trap in the engine (WebAssembly.RuntimeError: an out-of-bounds access, an
// abort) stops it halfway through an operation, and its memory can no longer
// be trusted. That request's error is `fatal` (code worker_failed); the
// caller then ends the worker, and any request still reaching it gets the
// same error without touching the engine.
import { describeError } from '../js/errors.js';

// post(message, transfer): sends to the caller. Returns onMessage(message)
// for the caller's messages. createHost() → Promise<EngineHost>.
export function serve(post, createHost) {
  const aborts = new Map();  // request id → AbortController
  let queue = Promise.resolve();
  let host = null;
  let crash = null;  // the error description of the trap that ended the engine

  const handlers = {
    load: (msg, signal) =>
      host.load(msg.source, msg.options, (progress) => post({ id: msg.id, type: 'progress', progress }), signal),
    generate: (msg, signal) =>
      host.generate(msg.prompt, msg.options, (text) => post({ id: msg.id, type: 'text', text }), signal),
    tokenize: (msg) => host.tokenize(msg.text, msg.addSpecial, msg.parseSpecial),
    detokenize: (msg) => host.detokenize(msg.ids),
    bench: (msg) => host.bench(msg.promptTokens, msg.generateTokens),
    embed: (msg, signal) => host.embed(msg.texts, msg.options, signal),
    rank: (msg, signal) => host.rank(msg.query, msg.documents, signal),
    saveState: () => host.saveState(),
    loadState: (msg) => host.loadState(msg.bytes),
  };

  async function handle(msg, controller) {
    const kind = msg.type === 'load' ? 'load' : 'generation';
    try {
      if (crash) {
        post({ id: msg.id, type: 'error', error: { ...crash, kind } });
        return;
      }
      if (!handlers[msg.type]) throw new Error(`unknown request type '${msg.type}'`);
      const result = await handlers[msg.type](msg, controller.signal);
      post({ id: msg.id, type: 'done', result }, result instanceof Uint8Array ? [result.buffer] : []);
    } catch (error) {
      const trap = trapOf(error);
      if (trap) {
        crash = {
          code: 'worker_failed',
          message: `the engine crashed (${trap.message}); load the model again`,
          cause: { name: trap.name, message: trap.message },
          fatal: true,
        };
      }
      post({ id: msg.id, type: 'error', error: crash ? { ...crash, kind } : describeError(error, kind) });
    } finally {
      aborts.delete(msg.id);
    }
  }

  function skipAborted(msg) {
    aborts.delete(msg.id);
    post({ id: msg.id, type: 'error', error: { kind: 'abort', message: 'the request was aborted before it started' } });
  }

  createHost().then(
    (created) => {
      host = created;
      post({ type: 'ready' });
    },
    (error) => post({ type: 'init-error', message: String(error?.message ?? error) }),
  );

  return (msg) => {
    if (msg.type === 'abort') {
      aborts.get(msg.id)?.abort();
      return;
    }
    // The abort controller is registered before the request waits its turn,
    // so an early abort is not lost.
    const controller = new AbortController();
    aborts.set(msg.id, controller);
    queue = queue.then(() => (controller.signal.aborted ? skipAborted(msg) : handle(msg, controller)));
  };
}

// The wasm trap behind `error` (itself or its cause), or null.
function trapOf(error) {
  for (let e = error; e instanceof Error; e = e.cause) {
    if (e instanceof WebAssembly.RuntimeError) return e;
  }
  return null;
}
