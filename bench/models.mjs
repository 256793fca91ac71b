// The benchmarks' models: synthetic weights of real shapes, and the Llama
// twin each architecture is held against, written by our own `synth` (f16)
// and `quantize` (as one would convert a real model), cached in
// build/bench-models and written again when the CLI is newer.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const cli = join(repo, 'build/native/wasm-llm');
const vocabDir = resolve(repo, '../shared/models/vocab');
const cacheDir = join(repo, 'build/bench-models');
// A model written after the CLI was last built (else written again).
const fresh = (p) => existsSync(p) && statSync(p).mtimeMs > statSync(cli).mtimeMs;

// The model file of `shape` (a `synth --shape` name) with the tokenizer of
// `vocab` (a file in ../shared/models/vocab), in tensor type `type`. Each
// file is written under another name and renamed when complete, so a bench
// stopped halfway leaves no truncated model that the next one takes as fresh.
export async function benchModel({ shape, vocab }, type) {
  mkdirSync(cacheDir, { recursive: true });
  const path = join(cacheDir, `${shape}-${type}.gguf`);
  if (fresh(path)) return path;
  const f16 = join(cacheDir, `${shape}-f16.gguf`);
  if (!fresh(f16)) {
    console.error(`bench: writing ${f16}`);
    await execFileP(cli, ['synth', '--shape', shape, '--type', 'f16', '--vocab', join(vocabDir, vocab), '-o', `${f16}.partial`]);
    renameSync(`${f16}.partial`, f16);
  }
  if (type !== 'f16') {
    console.error(`bench: writing ${path}`);
    await execFileP(cli, ['quantize', f16, `${path}.partial`, type]);
    renameSync(`${path}.partial`, path);
  }
  return path;
}

// What `wasm-llm info` says of a model: its architecture, sizes, parameter
// count and whether the output is tied to the embedding.
async function modelInfo(path) {
  const { stdout } = await execFileP(cli, ['info', '-m', path]);
  const field = (re) => {
    const m = stdout.match(re);
    if (!m) throw new Error(`wasm-llm info -m ${path} printed no ${re}`);
    return m.slice(1).map(Number);
  };
  const [dim, layers, heads, kvHeads, headDim] =
    field(/^shape: +dim (\d+), (\d+) layers, (\d+) heads \((\d+) kv heads, head dim (\d+)\)/m);
  return { arch: stdout.match(/^architecture: +(\S+)/m)?.[1], dim, layers, heads, kvHeads, headDim,
    parameters: field(/^parameters: +(\d+)/m)[0], tied: /^output: +tied/m.test(stdout) };
}

// The Llama model that an architecture's speed is held against: `shape`'s
// width, layers, heads, head width, vocabulary and tied output, in Llama's
// blocks, with the FFN width (a multiple of 256, as K-quants need) that
// brings its weight count to the shape's. Same weights, so the same bytes to
// read per token in the same type, and the same per-call costs of its small
// matrices; what is left between the two is the architecture. null for a
// shape that is Llama already.
export async function llamaTwin(shapeDef, type) {
  const path = join(cacheDir, `${shapeDef.shape}-llama-twin-${type}.gguf`);
  if (fresh(path)) return path;  // only other architectures have one
  const original = await modelInfo(await benchModel(shapeDef, type));
  if (original.arch === 'llama') return null;
  const { dim, layers, heads, kvHeads, headDim, tied } = original;
  const synthTwin = async (ffn, out) => {
    await execFileP(cli, ['synth', '--shape', `${dim}x${layers}:${heads}/${kvHeads}:${ffn}`, '--arch', 'llama',
      '--head-dim', String(headDim), ...(tied ? ['--tied'] : []), '--ctx', String(shapeDef.ctx), '--type', 'f16',
      '--vocab', join(vocabDir, shapeDef.vocab), '-o', out]);
    return out;
  };
  // Everything but the FFN from a twin of the narrowest FFN; each 256 more
  // of its width adds 3 matrices of dim × 256 per layer.
  const f16 = join(cacheDir, `${shapeDef.shape}-llama-twin-f16.gguf.partial`);
  try {
    const rest = (await modelInfo(await synthTwin(256, f16))).parameters;
    const ffn = 256 * Math.max(1, Math.round((original.parameters - rest) / (3 * dim * layers * 256) + 1));
    console.error(`bench: writing ${path} (FFN ${ffn})`);
    await synthTwin(ffn, f16);
    await execFileP(cli, ['quantize', f16, `${path}.partial`, type]);
    renameSync(`${path}.partial`, path);
  } finally {
    rmSync(f16, { force: true });
  }
  return path;
}
