// Shared pieces of the reference comparisons: where things are, how to run
// our native CLI, and llama.cpp (through node-llama-cpp) as the reference.
import { execFile } from 'node:child_process';
import { mkdirSync, existsSync, readFileSync, renameSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const sharedModels = process.env.WASM_LLM_SHARED
  ? join(process.env.WASM_LLM_SHARED, 'models')
  : resolve(repoRoot, '../shared/models');
export const cli = join(repoRoot, 'build/native/wasm-llm');
// Generated models (synthetic weights) are cached here between runs.
export const modelCache = join(repoRoot, 'build/models');

// npm run test:full (tools/test.mjs --full) sets WASM_LLM_FULL=1: every type of
// every architecture in every engine. npm test keeps at least one check of
// each architecture, type, build and engine.
export const fullMatrix = process.env.WASM_LLM_FULL === '1';

// What a quick run keeps of `items`: all of them in the full matrix, else
// those whose index `keep(index)` accepts.
export function quickSubset(items, keep) {
  return fullMatrix ? items : items.filter((_, i) => keep(i));
}

export async function runCli(args, { timeout = 600_000 } = {}) {
  const { stdout, stderr } = await execFileP(cli, args, { timeout, maxBuffer: 256 << 20 });
  return { stdout, stderr };
}

// Builds `file` in the model cache with `make(path)` unless it is already there
// and newer than the CLI that would build it.
export async function cached(file, make) {
  mkdirSync(modelCache, { recursive: true });
  const path = join(modelCache, file);
  if (!existsSync(path) || statSync(path).mtimeMs < statSync(cli).mtimeMs) {
    // Written under a name of its own, then renamed: the Node and browser
    // suites run side by side (tools/test.mjs) and may make the same model.
    const partial = join(modelCache, `.${process.pid}-${file}`);
    await make(partial);
    renameSync(partial, path);
  }
  return path;
}

let llamaPromise;
export async function llama() {
  if (!llamaPromise) {
    llamaPromise = import('node-llama-cpp').then(({ getLlama, LlamaLogLevel }) =>
      getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error }));
  }
  return llamaPromise;
}

// Next-token logits at every position of `tokens`, from llama.cpp.
export async function referenceLogits(modelPath, tokens) {
  const l = await llama();
  const model = await l.loadModel({ modelPath });
  const context = await model.createContext({ contextSize: Math.max(256, tokens.length + 16), threads: 1 });
  try {
    const seq = context.getSequence();
    const items = tokens.map((t) => [t, { generateNext: { logits: true } }]);
    const out = await seq.controlledEvaluate(items);
    const nVocab = model.tokens.count ?? model.fileInsights?.vocabSize;
    return out.map((o) => toFloat32(o.next.logits, nVocab));
  } finally {
    await context.dispose();
    await model.dispose();
  }
}

function toFloat32(logits, nVocab) {
  if (logits instanceof Float32Array) return logits;
  if (Array.isArray(logits)) return Float32Array.from(logits);
  const out = new Float32Array(nVocab ?? logits.size).fill(-Infinity);
  for (const [token, value] of logits) out[token] = value;
  return out;
}

// Our next-token logits at every position (the CLI's `logits` command).
export async function ourLogits(modelPath, tokens, outPath) {
  mkdirSync(dirname(outPath), { recursive: true });
  await runCli(['logits', '-m', modelPath, '--tokens', tokens.join(','), '-o', outPath, '--threads', '2']);
  const bytes = readFileSync(outPath);
  const all = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  const nVocab = all.length / tokens.length;
  return tokens.map((_, i) => all.subarray(i * nVocab, (i + 1) * nVocab));
}

export function softmax(logits) {
  let max = -Infinity;
  for (const v of logits) max = Math.max(max, v);
  const p = new Float64Array(logits.length);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += (p[i] = Math.exp(logits[i] - max));
  for (let i = 0; i < p.length; i++) p[i] /= sum;
  return p;
}

export function argmax(values) {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
  return best;
}

// KL(p || q) in nats.
export function klDivergence(p, q) {
  let kl = 0;
  for (let i = 0; i < p.length; i++) if (p[i] > 0) kl += p[i] * Math.log(p[i] / Math.max(q[i], 1e-30));
  return kl;
}

// Compares two engines' per-position logits: top-1 agreement and mean KL.
export function compareDistributions(reference, ours) {
  let agree = 0;
  let kl = 0;
  let maxKl = 0;
  for (let i = 0; i < reference.length; i++) {
    const p = softmax(reference[i]);
    const q = softmax(ours[i]);
    if (argmax(p) === argmax(q)) agree++;
    const d = klDivergence(p, q);
    kl += d;
    maxKl = Math.max(maxKl, d);
  }
  return { positions: reference.length, top1: agree / reference.length, meanKl: kl / reference.length, maxKl };
}

// About 165 tokens of prose, so one disagreement is 0.6%, not the 1.7% of 60.
export const referenceText = 'Once upon a time, in a small village by the sea, there lived an old fisherman who ' +
  'told stories about the stars. Every night the children gathered around him, and he would point ' +
  'at the sky and say: "Each light up there is a lantern someone left burning for us." The children ' +
  'laughed, but they listened. One winter the storms came early, and the boats stayed on the shore ' +
  'for many weeks. The fisherman mended his nets by the fire and sang songs his mother had taught ' +
  'him, songs about whales and islands and a city under the waves. In spring, the youngest girl in ' +
  'the village, Mira, asked him to take her out on the water. He said yes, on one condition: that ' +
  'she would learn the names of every star before the summer ended.';

// BOS and referenceText in the model's own tokenizer (llama.cpp's), at most 200 tokens.
async function referenceTokens(modelPath) {
  const l = await llama();
  const model = await l.loadModel({ modelPath, vocabOnly: true });
  const tokens = [model.tokens.bos, ...model.tokenize(referenceText)].filter((t) => t !== undefined && t !== null);
  await model.dispose();
  return tokens.slice(0, 200);
}

// Where compareWithLlamaCpp(label, ...) writes our logits.
export function logitsFile(label) {
  return join(modelCache, `${label.replace(/\W+/g, '-')}.logits.f32`);
}

// Both engines' next-token distributions at every position of
// referenceTokens: {label, tokens, positions, top1, meanKl, maxKl}.
export async function compareWithLlamaCpp(label, modelPath) {
  const tokens = await referenceTokens(modelPath);
  const ref = await referenceLogits(modelPath, tokens);
  const ours = await ourLogits(modelPath, tokens, logitsFile(label));
  return { label, tokens, ...compareDistributions(ref, ours) };
}

// A Markdown table of compareWithLlamaCpp results.
export function comparisonTable(results) {
  const rows = results.map((r) =>
    `| ${r.label} | ${r.positions} | ${(100 * r.top1).toFixed(1)}% | ${r.meanKl.toExponential(2)} | ${r.maxKl.toExponential(2)} |`);
  return ['| model | positions | top-1 agreement | mean KL | max KL |', '|---|---|---|---|---|', ...rows].join('\n');
}
