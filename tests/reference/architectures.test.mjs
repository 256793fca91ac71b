// Each architecture of the table (cpp/model/architecture.h) against llama.cpp:
// a small synthetic model of the architecture, written by our `synth` (f32)
// and `quantize`, read by both engines; the next-token distributions must
// agree at every position of a text longer than a batch (64 tokens), so
// whatever a layer carries from one batch to the next (KV cache, convolution
// state) is checked too. The wasm build (the package's CLI in Node) must give
// the native logits bit for bit. One row per architecture.
import { afterAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cached, compareDistributions, modelCache, ourLogits, referenceLogits, repoRoot, resultsTable, runCli,
  sharedModels, storyText, textTokens } from './reference.mjs';

// Small shapes, with rows that are multiples of 256 so K-quants apply to
// every matrix, and stories260K's 512-token vocabulary (in the shared models
// folder): the reference's logits come through node-llama-cpp one token's
// Map at a time, which takes ~20 s per test with GPT-2's 50257 tokens.
const architectures = [
  // GPT-2 has as many key-value heads as query heads.
  { arch: 'gpt2', vocab: 'stories260K.gguf', shape: '256x4:4/4:768' },
  // 6 layers: convolutions at 0, 1, 3, 4, attention at 2 and 5 (real models' pattern).
  { arch: 'lfm2', vocab: 'stories260K.gguf', shape: '256x6:4/2:768' },
];
const types = ['f32', 'q8_0', 'q4_0', 'q4_K_M'];
const results = [];

// The cached file of a row in a type: named by everything it is made from.
function modelFile({ arch, vocab, shape }, type) {
  return `arch-${arch}-${shape}-${vocab.replace(/\.gguf$/, '')}-${type}.gguf`.replace(/[:/]/g, '_');
}

async function model(row, type) {
  const f32 = await cached(modelFile(row, 'f32'), (path) => runCli(['synth', '--arch', row.arch, '--shape', row.shape,
    '--type', 'f32', '--seed', '7', '--vocab', join(sharedModels, row.vocab), '-o', path]));
  if (type === 'f32') return f32;
  return cached(modelFile(row, type), (path) => runCli(['quantize', f32, path, type]));
}

// The logits file of the wasm build's `logits` command, with two threads.
async function wasmLogitsFile(path, tokens, outPath) {
  await promisify(execFile)(process.execPath, [join(repoRoot, 'js/node/cli.js'), 'logits', '-m', path,
    '--tokens', tokens.join(','), '-o', outPath, '--threads', '2'], { maxBuffer: 16 << 20 });
  return readFileSync(outPath);
}

afterAll(() => console.log(resultsTable(results)));

describe('every architecture matches llama.cpp', () => {
  for (const row of architectures) {
    for (const type of types) {
      it(`${row.arch} ${row.shape} ${type}`, async () => {
        const path = await model(row, type);
        const tokens = await textTokens(path, storyText);
        expect(tokens.length).toBeGreaterThan(128);  // past two batches
        const label = `${row.arch} ${type}`;
        const oursPath = join(modelCache, `${label.replace(/\W+/g, '-')}.logits.f32`);
        const ours = await ourLogits(path, tokens, oursPath);
        const wasm = await wasmLogitsFile(path, tokens, `${oursPath}.wasm`);
        expect(wasm.equals(readFileSync(oursPath))).toBe(true);
        const r = { label, ...compareDistributions(await referenceLogits(path, tokens), ours) };
        results.push(r);
        if (type === 'f32') {
          expect(r.top1).toBe(1);
          expect(r.meanKl).toBeLessThan(1e-4);
        } else {
          expect(r.top1).toBeGreaterThanOrEqual(0.99);
          expect(r.meanKl).toBeLessThan(1e-3);
        }
      });
    }
  }
});
