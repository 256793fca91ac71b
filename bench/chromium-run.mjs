// One measurement of an engine in headless Chromium (Debian's), run in its own
// process like llama-cpp-run.mjs: prints one JSON line like `wasm-llm bench`.
//   node bench/chromium-run.mjs ours|wllama MODEL PROMPT_TOKENS GEN_TOKENS THREADS
// The engine's page (bench/browser/ENGINE.html, cross-origin isolated so
// threads are possible) loads MODEL from the local server and runs a prefill
// of PROMPT_TOKENS tokens and GEN_TOKENS greedy decode steps, timed inside the
// engine and repeated while short (the median run: bench-runs.js), after a
// short warm-up run and once V8 has finished optimizing the wasm code in the
// background (tier-up), so both engines are measured at their steady speed
// without compile threads competing for the cores.
// Threads are checked twice: by what the engine reports (the page throws if
// it runs fewer threads than asked), and by Linux: in the page's renderer
// process, where the page's workers and their pthreads run as threads named
// DedicatedWorker, at least THREADS of those must have run for BUSY_SHARE of
// the busiest one's time during the measured run. Peak memory is the
// renderer process's peak RSS (page, workers and wasm memory), comparable to
// the other engines' peak RSS.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { openTestPage } from '../tests/browser/browser.mjs';
import { commandLine, descendants, peakRssMib, threadTimes, threadTimesSince } from './proc.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const WORKER_THREAD = 'DedicatedWorker';
const BUSY_SHARE = 0.33;
// KV positions beyond prompt + decode, as llama-cpp-run.mjs gives llama.cpp.
const CONTEXT_SLACK = 16;
const WARM_UP = { promptTokens: 16, generateTokens: 4 };
const SETTLE_MAX_MS = 60_000;

const [engine, model, promptArg, genArg, threadsArg] = process.argv.slice(2);
const promptTokens = Number(promptArg);
const generateTokens = Number(genArg);
const threads = Number(threadsArg);

// The renderer process holding the page: of Chromium's renderers (children
// of this process's browser), the one with the most memory once the model is in.
function pageRenderer() {
  const renderers = descendants(process.pid).filter((pid) => commandLine(pid).includes(' --type=renderer '));
  if (renderers.length === 0) throw new Error('found no Chromium renderer process');
  return renderers.reduce((a, b) => (peakRssMib(b) > peakRssMib(a) ? b : a));
}

// Waits until the renderer's threads other than workers are (nearly) idle:
// V8 compiles optimized code for hot wasm functions on background threads.
async function settle(pid) {
  const windowMs = 250;
  const deadline = Date.now() + SETTLE_MAX_MS;
  while (Date.now() < deadline) {
    const before = threadTimes(pid);
    await sleep(windowMs);
    if (otherThreadsCpuSeconds(threadTimesSince(before, threadTimes(pid))) < 0.05 * windowMs / 1000) return;
  }
}

// CPU seconds of the threads other than workers in a threadTimesSince() result.
function otherThreadsCpuSeconds(ran) {
  let ns = 0;
  for (const t of ran.values()) if (t.name !== WORKER_THREAD) ns += t.runNs;
  return ns / 1e9;
}

// Worker threads that ran for at least BUSY_SHARE of the busiest one's time.
function busyWorkerThreads(ran) {
  const times = [...ran.values()].filter((t) => t.name === WORKER_THREAD).map((t) => t.runNs);
  const busiest = Math.max(0, ...times);
  return times.filter((ns) => ns > 0 && ns >= BUSY_SHARE * busiest).length;
}

async function measure() {
  // Without it the page would only time out waiting to be ready.
  if (engine === 'wllama' && !fs.existsSync(path.join(repo, 'node_modules/@wllama/wllama/esm/index.js'))) {
    throw new Error('@wllama/wllama is not installed: run tools/setup.sh (npm install)');
  }
  const { page, close } = await openTestPage({
    isolated: true,
    mounts: { '/bench-models/': path.dirname(path.resolve(model)) },
    pagePath: `bench/browser/${engine}.html`,
    readyGlobal: 'bench',
  });
  const pageErrors = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  try {
    const options = {
      url: `/bench-models/${path.basename(model)}`, threads, contextSize: promptTokens + generateTokens + CONTEXT_SLACK,
      promptTokens, generateTokens,
    };
    const loaded = await page.evaluate((o) => window.bench.load(o), options);
    const renderer = pageRenderer();
    await page.evaluate((o) => window.bench.run(o), { ...options, ...WARM_UP });
    await settle(renderer);
    const before = threadTimes(renderer);
    const r = await page.evaluate((o) => window.bench.run(o), options);
    const ran = threadTimesSince(before, threadTimes(renderer));
    const busy = busyWorkerThreads(ran);
    if (busy < threads) throw new Error(`only ${busy} worker threads of the renderer were busy, for ${threads} threads`);
    return {
      engine: `${engine}-chromium`, model, threads, threaded: loaded.threaded, busy_threads: busy,
      kernels: loaded.kernels,  // ours, as `wasm-llm bench` prints it (wllama has none: left out)
      load_s: loaded.loadSeconds,
      prefill_tokens: r.promptTokens, prefill_tok_s: r.promptTokens / r.prefillSeconds,
      decode_tokens: r.decodeTokens, decode_tok_s: r.decodeTokens / r.decodeSeconds, runs: r.runs,
      peak_rss_mib: peakRssMib(renderer),
      // CPU time of the renderer's other threads during the run (compiles, GC,
      // messages): large values mean the engine shared the cores.
      other_threads_cpu_s: otherThreadsCpuSeconds(ran),
    };
  } catch (error) {
    if (pageErrors.length) error.message += ` (page errors: ${pageErrors.join('; ')})`;
    throw error;
  } finally {
    await close();
  }
}

try {
  console.log(JSON.stringify(await measure()));
} catch (error) {
  // One line: the benchmark shows the last line of stderr as the reason.
  console.error(`chromium-run (${engine}): ${String(error?.message ?? error).replace(/\s+/g, ' ')}`);
  process.exit(1);
}
