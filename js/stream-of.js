// Streams made of callbacks: an async iterator over the pieces a call
// produces through onToken, as llm.stream() and a session's chatStream() return.

// An async iterator over the pieces run(onToken, signal) produces, returning
// what run resolves to. Breaking out of the loop aborts run through its signal.
export async function* streamOf(run, outerSignal) {
  const pieces = [];
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
    pieces.push(piece);
    notify();
  }, signal).then(
    (value) => {
      finished = true;
      result = value;
      notify();
    },
    (error) => {
      finished = true;
      failure = error;
      notify();
    },
  );
  try {
    for (;;) {
      if (pieces.length > 0) yield pieces.shift();
      else if (finished) break;
      else await new Promise((resolve) => (wake = resolve));
    }
    if (failure) throw failure;
    return result;
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
