// How often the engines fed from JS (llama.cpp via node-llama-cpp, wllama
// in Chromium) repeat a measurement: as cpp/engine/bench.h's BenchRuns
// defaults do for ours. At least once, then again while all runs so far took
// under a second, up to 5 runs; the median run of each phase is reported.
// Plain JS, no Node modules: the bench pages import it too.
export const BENCH_RUNS = { minRuns: 1, maxRuns: 5, minSeconds: 1 };

// runOnce() resolves to {prefillSeconds, decodeSeconds} of one run.
// Resolves to the median of each, and the number of runs.
export async function measureRuns(runOnce) {
  const prefill = [];
  const decode = [];
  let total = 0;
  while (prefill.length < BENCH_RUNS.minRuns || (prefill.length < BENCH_RUNS.maxRuns && total < BENCH_RUNS.minSeconds)) {
    const { prefillSeconds, decodeSeconds } = await runOnce();
    prefill.push(prefillSeconds);
    decode.push(decodeSeconds);
    total += prefillSeconds + decodeSeconds;
  }
  return { prefillSeconds: median(prefill), decodeSeconds: median(decode), runs: prefill.length };
}

// The middle value (the upper one of an even count), as bench.cpp's median().
function median(values) {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
}
