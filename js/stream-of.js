// Streams made of callbacks: an async iterator over the pieces a call
// produces through onToken, as llm.stream(), llm.chatStream() and a
// session's chatStream() return.

// An async generator over the pieces run(onPiece, signal) produces. run
// resolves to {returns, ...results}: the generator returns `returns`, and
// for each name in `promised` it carries a promise of that result (stream.stats),
// which a plain `for await` loop can reach; it rejects when run does. Breaking
// out of the loop aborts run through its signal.
export function streamOf(run, outerSignal, promised = ['stats']) {
  let settle;
  const outcome = new Promise((resolve, reject) => (settle = { resolve, reject }));
  const stream = pieces(run, outerSignal, settle);
  for (const name of promised) {
    const result = outcome.then((value) => value[name]);
    result.catch(() => {});  // unobserved, a failure is the loop's to report: never an unhandled rejection
    stream[name] = result;
  }
  return stream;
}

async function* pieces(run, outerSignal, settle) {
  const queue = [];
  let wake = null;
  let finished = false;
  let failure = null;
  let result;
  const stop = new AbortController();
  const signal = outerSignal ? anySignal(outerSignal, stop.signal) : stop.signal;
  const notify = () => {
    wake?.();
    wake = null;
  };
  const done = run((piece) => {
    queue.push(piece);
    notify();
  }, signal).then(
    (value) => {
      finished = true;
      result = value;
      settle.resolve(value);
      notify();
    },
    (error) => {
      finished = true;
      failure = error;
      settle.reject(error);
      notify();
    },
  );
  try {
    for (;;) {
      if (queue.length > 0) yield queue.shift();
      else if (finished) break;
      else await new Promise((resolve) => (wake = resolve));
    }
    if (failure) throw failure;
    return result.returns;
  } finally {
    if (!finished) {
      stop.abort();
      await done;
    }
  }
}

// An AbortSignal that fires when either signal does (AbortSignal.any needs Node 20).
function anySignal(a, b) {
  const controller = new AbortController();
  for (const s of [a, b]) {
    if (s.aborted) controller.abort(s.reason);
    else s.addEventListener('abort', () => controller.abort(s.reason), { once: true });
  }
  return controller.signal;
}
