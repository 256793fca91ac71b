// `node bench/browser-load.mjs [--threads N]`: how fast headless Chromium
// loads a ~140 MB model (synthetic SmolLM2-135M, q8_0) into the wasm heap:
// from the network (localhost) while caching it in OPFS, from OPFS, and from
// the network with caching off. Prints one JSON line per load.
// Throughput is file bytes over the time from the first to the last byte
// (progress events); `totalMs` also counts starting the worker and the engine.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openTestPage } from '../tests/browser/browser.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const modelsDir = path.join(repo, 'build/bench-models');
const modelName = 'smollm2-135m-synth-q8_0.gguf';
const threadsArg = process.argv.indexOf('--threads');
const threads = threadsArg > 0 ? Number(process.argv[threadsArg + 1]) : undefined;

const modelFile = path.join(modelsDir, modelName);
if (!fs.existsSync(modelFile)) {
  fs.mkdirSync(modelsDir, { recursive: true });
  execFileSync(path.join(repo, 'build/native/wasm-llm'), [
    'synth', '--shape', 'smollm2-135m', '--type', 'q8_0',
    '--vocab', path.resolve(repo, '../shared/models/vocab/ggml-vocab-gpt-2.gguf'), '-o', modelFile,
  ], { stdio: 'inherit' });
}

const t = await openTestPage({ isolated: true, mounts: { '/bench-models/': modelsDir } });
try {
  for (const [label, cache] of [['network, writing OPFS', true], ['OPFS', true], ['network, no cache', false]]) {
    const result = await t.page.evaluate(
      async ({ url, cache, threads }) => {
        const events = [];
        const started = performance.now();
        const llm = await window.wasmLlm.LLM.load(url, {
          cache,
          threads,
          contextSize: 256,
          onProgress: (p) => events.push({ ...p, at: performance.now() }),
        });
        const totalMs = performance.now() - started;
        await llm.dispose();
        const data = events.filter((e) => e.phase === 'download' || e.phase === 'cache');
        const streamMs = data.at(-1).at - data[0].at;
        const bytes = data.at(-1).loaded - data[0].loaded;
        return { from: llm.info.loadedFrom, threads: llm.info.threads, size: data.at(-1).total, totalMs, streamMs, bytes };
      },
      { url: `/bench-models/${modelName}`, cache, threads },
    );
    const mbps = (bytes, ms) => Math.round(bytes / 1e6 / (ms / 1000));
    console.log(JSON.stringify({
      load: label,
      loadedFrom: result.from,
      threads: result.threads,
      megabytes: +(result.size / 1e6).toFixed(1),
      totalMs: Math.round(result.totalMs),
      streamMBps: mbps(result.bytes, result.streamMs),
      overallMBps: mbps(result.size, result.totalMs),
    }));
  }
} finally {
  await t.close();
}
