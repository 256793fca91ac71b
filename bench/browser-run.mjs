// One measurement of ours in Firefox ESR or WebKitGTK (Debian's, through the
// browser tests' drivers), run in its own process like chromium-run.mjs:
// prints one JSON line like `wasm-llm bench`.
//   node bench/browser-run.mjs firefox|webkit MODEL PROMPT_TOKENS GEN_TOKENS THREADS
// The page (bench/browser/ours.html, cross-origin isolated so threads are
// possible where the engine has SharedArrayBuffer) loads MODEL from the local
// server and runs llm.bench() after two short warm-up runs, which give the
// engine's optimizing wasm tier time to replace the baseline code. Threads
// are checked by the engine's own report (the page throws if it runs fewer
// threads than asked, or not all of them ran work); chromium-run.mjs also
// checks them with Linux, reading Chromium's thread names. Peak memory is the
// largest peak RSS among the browser's processes (the one holding the page,
// its workers and the wasm memory).
import path from 'node:path';
import { openTestPage } from '../tests/browser/browser.mjs';
import { descendants, peakRssMib } from './proc.mjs';

// KV positions beyond prompt + decode, as llama-cpp-run.mjs gives llama.cpp.
const CONTEXT_SLACK = 16;
const WARM_UP = { promptTokens: 16, generateTokens: 4 };
const WARM_UP_RUNS = 2;

const [browser, model, promptArg, genArg, threadsArg] = process.argv.slice(2);
const promptTokens = Number(promptArg);
const generateTokens = Number(genArg);
const threads = Number(threadsArg);

async function measure() {
  const t = await openTestPage({
    browser,
    isolated: true,
    mounts: { '/bench-models/': path.dirname(path.resolve(model)) },
    pagePath: 'bench/browser/ours.html',
    readyGlobal: 'bench',
  });
  try {
    const options = {
      url: `/bench-models/${path.basename(model)}`, threads, contextSize: promptTokens + generateTokens + CONTEXT_SLACK,
      promptTokens, generateTokens,
    };
    const loaded = await t.evaluate((o) => window.bench.load(o), options);
    for (let i = 0; i < WARM_UP_RUNS; i++) await t.evaluate((o) => window.bench.run(o), { ...options, ...WARM_UP });
    const r = await t.evaluate((o) => window.bench.run(o), options);
    return {
      engine: `ours-${browser}`, browser: t.version, model, threads, threaded: loaded.threaded, kernels: loaded.kernels,
      load_s: loaded.loadSeconds,
      prefill_tokens: r.promptTokens, prefill_tok_s: r.promptTokens / r.prefillSeconds,
      decode_tokens: r.decodeTokens, decode_tok_s: r.decodeTokens / r.decodeSeconds, runs: r.runs,
      peak_rss_mib: Math.max(0, ...descendants(process.pid).map(peakRssMib)),
    };
  } finally {
    await t.close();
  }
}

try {
  console.log(JSON.stringify(await measure()));
} catch (error) {
  // One line: the benchmark shows the last line of stderr as the reason.
  console.error(`browser-run (${browser}): ${String(error?.message ?? error).replace(/\s+/g, ' ')}`);
  process.exit(1);
}
