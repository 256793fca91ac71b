// The worker_threads entry that owns the engine (design-notes §3): it takes
// requests {id, type, ...} one at a time and answers with progress/text
// events and one final 'done' or 'error' message per request. An
// {type: 'abort', id} message aborts that request.
import { parentPort, workerData } from 'node:worker_threads';
import { describeError } from './errors.js';
import { EngineHost } from './engine-host.js';

const aborts = new Map();  // request id → AbortController
let host;
let queue = Promise.resolve();

const handlers = {
  load: (msg, signal) =>
    host.load(msg.source, msg.options, (progress) => post({ id: msg.id, type: 'progress', progress }), signal),
  generate: (msg, signal) =>
    host.generate(msg.prompt, msg.options, (text) => post({ id: msg.id, type: 'text', text }), signal),
  tokenize: (msg) => host.tokenize(msg.text, msg.addSpecial, msg.parseSpecial),
  detokenize: (msg) => host.detokenize(msg.ids),
};

function post(message) {
  parentPort.postMessage(message);
}

async function handle(msg, controller) {
  try {
    const result = await handlers[msg.type](msg, controller.signal);
    post({ id: msg.id, type: 'done', result });
  } catch (error) {
    post({ id: msg.id, type: 'error', error: describeError(error, msg.type === 'load' ? 'load' : 'generation') });
  } finally {
    aborts.delete(msg.id);
  }
}

parentPort.on('message', (msg) => {
  if (msg.type === 'abort') {
    aborts.get(msg.id)?.abort();
    return;
  }
  // Requests run in arrival order, one at a time; the abort controller is
  // registered before the request waits so an early abort is not lost.
  const controller = new AbortController();
  aborts.set(msg.id, controller);
  queue = queue.then(() => (controller.signal.aborted ? skipAborted(msg) : handle(msg, controller)));
});

function skipAborted(msg) {
  aborts.delete(msg.id);
  post({ id: msg.id, type: 'error', error: { kind: 'abort', message: 'the request was aborted before it started' } });
}

try {
  host = await EngineHost.create(workerData.variant, workerData.threads);
  post({ type: 'ready' });
} catch (error) {
  post({ type: 'init-error', message: String(error?.message ?? error) });
}
