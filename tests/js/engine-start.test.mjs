// LLM.load's start of an engine worker of a browser's threaded build, which
// reports creating its thread workers ('creating-threads', 'thread-created'
// after each, 'threads-created'). A worker that goes 5 s without creating one
// has stalled: stuck for good (a Firefox fault) or only slow, so it is not
// ended; another starts beside it, three in all, the first ready is used and
// the rest ended. Here, on fake timers, each worker follows a script: the
// delay before each thread worker it creates (Infinity: stuck for good).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LLM } from '../../js/llm.js';

const THREADS = 2;

// A port to a fake engine worker that creates its thread workers after
// `delays` ms each (Infinity: never), is ready once it has them all, and
// answers a load at once.
function fakeWorker(delays) {
  const listeners = { message: [], error: [], exit: [] };
  const timers = [];
  const send = (msg) => {
    if (!port.ended) for (const listener of [...listeners.message]) listener(msg);
  };
  const after = (ms, fn) => {
    if (Number.isFinite(ms)) timers.push(setTimeout(fn, ms));
  };
  const port = {
    ended: false,
    post: (msg) => {
      if (msg.type === 'load') after(0, () => send({ id: msg.id, type: 'done', result: { architecture: 'llama' } }));
    },
    on: (event, listener) => {
      listeners[event].push(listener);
      return () => listeners[event].splice(listeners[event].indexOf(listener), 1);
    },
    terminate: () => {
      port.ended = true;
      for (const timer of timers) clearTimeout(timer);
    },
    ref() {},
    unref() {},
  };
  after(0, () => send({ type: 'creating-threads', threads: THREADS }));
  let at = 0;
  for (const delay of delays) {
    at += delay;
    after(at, () => send({ type: 'thread-created' }));
  }
  after(at, () => {
    send({ type: 'threads-created' });
    send({ type: 'ready' });
  });
  return port;
}

const STUCK = [Infinity];
// A time in ms, give or take the few the fake workers' 0 ms timers add.
const about = (ms) => expect.closeTo(ms, -1);

// Loads with workers following `scripts` in turn (then ones with no delay),
// aborting after `abortAfter` ms if given; resolves to {loaded, ms} or the
// error's {name, code, message}, with `workers` (the ports started), `used`
// (those not ended) and `warnings`.
async function load(scripts, { abortAfter } = {}) {
  const ports = [];
  class TestLLM extends LLM {
    static platform = {
      defaultThreads: () => THREADS,
      threadsSupported: () => true,
      resolveSource: async () => ({ description: { kind: 'url', url: 'https://example.com/m.gguf' }, transfer: [] }),
      startWorker: () => {
        const port = fakeWorker(scripts[ports.length] ?? []);
        ports.push(port);
        return port;
      },
    };
  }
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
  const started = Date.now();
  const aborter = new AbortController();
  if (abortAfter !== undefined) setTimeout(() => aborter.abort(), abortAfter);
  const loading = TestLLM.load('https://example.com/m.gguf', { signal: aborter.signal }).then(
    () => ({ loaded: true }),
    (error) => ({ name: error.name, code: error.code, message: error.message }),
  );
  await vi.runAllTimersAsync();
  const result = await loading;
  return {
    ...result, ms: Date.now() - started, workers: ports.length, used: ports.filter((p) => !p.ended).length,
    warnings: warn.mock.calls.map((args) => args[0]),
  };
}

describe('starting an engine worker that reports creating its threads', () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] }));
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('a quick one is used alone', async () => {
    expect(await load([[10, 10]])).toMatchObject({ loaded: true, workers: 1, used: 1, warnings: [] });
  });

  it('a slow one that never goes 5 s without creating a thread worker is used alone', async () => {
    expect(await load([[4000, 4000]])).toMatchObject({ loaded: true, ms: about(8000), workers: 1, used: 1, warnings: [] });
  });

  it('a stalled one that goes on is used if ready first: the one started beside it is ended, with no warning', async () => {
    expect(await load([[7000, 10], STUCK])).toMatchObject({
      loaded: true, ms: about(7010), workers: 2, used: 1, warnings: [],
    });
  });

  it('a stalled one that a later one beats is ended, with a warning', async () => {
    expect(await load([[9000, 10], [100, 100]])).toMatchObject({
      loaded: true, ms: about(5200), workers: 2, used: 1,
      warnings: ['wasm-llm: ended 1 engine worker that stalled creating thread workers; using another started beside it'],
    });
  });

  it('no other starts while one that stalled has gone on', async () => {
    // The first stalls at 5 s, creates one at 6 s, stalls again at 11 s; the
    // second, started at 5 s, creates one then and stalls at 10 s: only at 11 s
    // have all stalled, and a third starts.
    expect(await load([[6000, 20_000], [0, 20_000]])).toMatchObject({ loaded: true, ms: about(11_000), workers: 3, used: 1 });
  });

  it('two stuck in a row: a third is used, with one warning', async () => {
    expect(await load([STUCK, STUCK])).toMatchObject({
      loaded: true, ms: about(10_000), workers: 3, used: 1,
      warnings: ['wasm-llm: ended 2 engine workers that stalled creating thread workers; using another started beside them'],
    });
  });

  it('an abort while two run ends both', async () => {
    expect(await load([STUCK, STUCK], { abortAfter: 7000 })).toMatchObject({
      name: 'AbortError', ms: about(7000), workers: 2, used: 0, warnings: [],
    });
  });

  it('three stuck: LoadError worker_failed, every worker ended', async () => {
    expect(await load([STUCK, STUCK, STUCK])).toEqual({
      name: 'LoadError', code: 'worker_failed', ms: about(15_000), workers: 3, used: 0, warnings: [],
      message: 'cannot start the engine worker: it stalled creating its 2 thread workers: none created for 5 s (tried 3 times)',
    });
  });
});
