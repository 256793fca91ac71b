// One llama.cpp (node-llama-cpp, native) measurement, run in its own process
// so its peak memory is its own: prints one JSON line like `wasm-llm bench`.
//   node bench/llama-cpp-run.mjs MODEL PROMPT_TOKENS GEN_TOKENS THREADS
import { performance } from 'node:perf_hooks';
import { benchPrompt } from './bench-prompt.js';
import { measureRuns } from './bench-runs.js';
import { peakRssMib } from './proc.mjs';

const [modelPath, promptArg, genArg, threadsArg] = process.argv.slice(2);
const nPrompt = Number(promptArg);
const nGen = Number(genArg);
const threads = Number(threadsArg);

const { getLlama, LlamaLogLevel } = await import('node-llama-cpp');
const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
const t0 = performance.now();
const model = await llama.loadModel({ modelPath, useMmap: false });
const context = await model.createContext({ contextSize: nPrompt + nGen + 16, batchSize: Math.max(512, nPrompt), threads });
const t1 = performance.now();
const sequence = context.getSequence();

// The same prompt as `wasm-llm bench`.
const prompt = benchPrompt(nPrompt, model.fileInfo.metadata.tokenizer.ggml.tokens.length);
// Warm-up, not timed, as `wasm-llm bench` does (and llama-bench): one batch
// of the prompt (up to 64 tokens), then one decode step.
await sequence.evaluateWithoutGeneratingNewTokens(prompt.slice(0, 64));
await sequence.evaluateWithoutGeneratingNewTokens([prompt[0]]);

// Measured runs (bench-runs.js): the prompt from an empty context, then
// greedy decoding one token at a time.
const { prefillSeconds, decodeSeconds, runs } = await measureRuns(async () => {
  await sequence.clearHistory();
  const t1w = performance.now();
  await sequence.evaluateWithoutGeneratingNewTokens(prompt);
  const t2 = performance.now();
  let generated = 0;
  for await (const _token of sequence.evaluate([prompt[nPrompt - 1]], { temperature: 0 })) {
    if (++generated >= nGen) break;
  }
  const t3 = performance.now();
  return { prefillSeconds: (t2 - t1w) / 1000, decodeSeconds: (t3 - t2) / 1000 };
});

console.log(JSON.stringify({
  engine: 'llama.cpp-native', model: modelPath, threads, load_s: (t1 - t0) / 1000,
  prefill_tokens: nPrompt, prefill_tok_s: nPrompt / prefillSeconds,
  decode_tokens: nGen, decode_tok_s: nGen / decodeSeconds, runs, peak_rss_mib: peakRssMib(),
}));
await context.dispose();
await model.dispose();
