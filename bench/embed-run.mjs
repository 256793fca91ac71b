// One embedding measurement in its own process: prints one JSON line
// {engine, texts, tokens_per_text, seconds, texts_s}, and for the engines in
// this process (ours in Node, llama.cpp) cpu_s: the process's CPU seconds
// (all its threads) during the timed call, a figure a busy machine disturbs less.
//   node bench/embed-run.mjs ENGINE MODEL TOKENS COUNT THREADS
// ENGINE: ours-node (the package in this Node), ours-chromium (the browser
// build in headless Chromium, bench/browser/ours-embed.html) or llama.cpp
// (node-llama-cpp's LlamaEmbeddingContext, native, one text per call: its API).
// Every engine embeds the same COUNT texts of TOKENS tokens each ([CLS], then
// "hello" repeated, then [SEP] with a BERT vocabulary), after a warm-up call.
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { embedTexts, timeEmbedding } from './embedding-workload.js';

const [engine, model, tokensArg, countArg, threadsArg] = process.argv.slice(2);
const tokens = Number(tokensArg);
const threads = Number(threadsArg);
const texts = embedTexts(tokens, Number(countArg));
const contextSize = 512;

// The CPU seconds `run` takes alongside its result (user and system, every thread of this process).
async function withCpu(run) {
  const before = process.cpuUsage();
  const seconds = await run();
  const { user, system } = process.cpuUsage(before);
  return { seconds, cpu: (user + system) / 1e6 };
}

async function oursNode() {
  const { LLM } = await import('../js/index.js');
  let cpu;
  const seconds = await timeEmbedding(LLM, model, { threads, contextSize }, texts, (run) =>
    withCpu(run).then((r) => ((cpu = r.cpu), r.seconds)));
  return { seconds, cpu };
}

async function oursChromium() {
  const { openTestPage } = await import('../tests/browser/browser.mjs');
  const { page, close } = await openTestPage({
    isolated: true,
    mounts: { '/bench-models/': path.dirname(path.resolve(model)) },
    pagePath: 'bench/browser/ours-embed.html',
    readyGlobal: 'bench',
  });
  try {
    const url = `/bench-models/${path.basename(model)}`;
    return { seconds: await page.evaluate((o) => window.bench.run(o), { url, threads, contextSize, texts }) };
  } finally {
    await close();
  }
}

async function llamaCpp() {
  const { getLlama, LlamaLogLevel } = await import('node-llama-cpp');
  const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
  const loaded = await llama.loadModel({ modelPath: model, useMmap: false });
  const context = await loaded.createEmbeddingContext({ contextSize, batchSize: contextSize, threads });
  try {
    await context.getEmbeddingFor(texts[0]);
    return await withCpu(async () => {
      const started = performance.now();
      for (const text of texts) await context.getEmbeddingFor(text);
      return (performance.now() - started) / 1000;
    });
  } finally {
    await context.dispose();
    await loaded.dispose();
  }
}

const run = { 'ours-node': oursNode, 'ours-chromium': oursChromium, 'llama.cpp': llamaCpp }[engine];
try {
  if (!run) throw new Error(`unknown engine '${engine}'`);
  const { seconds, cpu } = await run();
  console.log(JSON.stringify({ engine, texts: texts.length, tokens_per_text: tokens, threads, seconds,
    texts_s: texts.length / seconds, ...(cpu === undefined ? {} : { cpu_s: cpu }) }));
} catch (error) {
  console.error(`embed-run (${engine}): ${String(error?.message ?? error).replace(/\s+/g, ' ')}`);
  process.exit(1);
}
