// Every architecture beyond llama (tests/reference/logits.test.mjs) against
// llama.cpp: next-token distributions at every position of a synthetic model
// of its structure, written by our `synth` (and `quantize`), read by both
// engines. One row per architecture; the sequences are long enough to cross
// sliding windows and more than two batches.
import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { cached, compareDistributions, llama, modelCache, ourLogits, referenceLogits, runCli, sharedModels }
  from './reference.mjs';

const text = 'Once upon a time, in a small village by the sea, there lived an old fisherman who ' +
  'told stories about the stars. Every night the children gathered around him, and he would point ' +
  'at the sky and say: "Each light up there is a lantern someone left burning for us." The children ' +
  'laughed, but they listened. One winter the storms came early, and the boats stayed on the shore ' +
  'for many weeks. The fisherman mended his nets by the fire and sang songs his mother had taught ' +
  'him, songs about whales and islands and a city under the waves. In spring, the youngest girl in ' +
  'the village, Mira, asked him to take her out on the water. He said yes, on one condition: that ' +
  'she would learn the names of every star before the summer ended.';

// shape: `synth` arguments; rows of 256 so every K-quant applies.
export const architectures = [
  // Head width 128 beside a width of 256 (attention.key_length).
  { arch: 'qwen3', vocab: 'ggml-vocab-qwen2.gguf', synth: ['--shape', '256x4:4/2:768', '--head-dim', '128'] },
  { arch: 'smollm3', vocab: 'ggml-vocab-llama-bpe.gguf', synth: ['--shape', '256x4:4/2:768'] },
  // A window of 32 positions: 165 tokens cross it and wrap the local layers' ring.
  { arch: 'gemma3', vocab: 'ggml-vocab-llama-spm.gguf',
    synth: ['--shape', '256x6:4/1:768', '--head-dim', '128', '--sliding-window', '32'] },
  // Gemma 2's output is always the embedding (tied, so less peaked than the
  // others): 4 layers keep llama.cpp's own rounding (f16 queries and
  // probabilities in its attention) below the top-2 gaps.
  { arch: 'gemma2', vocab: 'ggml-vocab-llama-spm.gguf',
    synth: ['--shape', '256x4:4/2:768', '--head-dim', '128', '--sliding-window', '32'] },
];
const quantTypes = ['q8_0', 'q4_0', 'q4_K_M'];
const results = [];

async function tokensFor(modelPath) {
  const l = await llama();
  const model = await l.loadModel({ modelPath, vocabOnly: true });
  const tokens = [model.tokens.bos, ...model.tokenize(text)].filter((t) => t !== undefined && t !== null);
  await model.dispose();
  return tokens.slice(0, 200);
}

async function compare(label, modelPath) {
  const tokens = await tokensFor(modelPath);
  const ref = await referenceLogits(modelPath, tokens);
  const ours = await ourLogits(modelPath, tokens, join(modelCache, `${label.replace(/\W+/g, '-')}.logits.f32`));
  const r = { label, ...compareDistributions(ref, ours) };
  results.push(r);
  return r;
}

function synthF32({ arch, vocab, synth }) {
  return cached(`arch-${arch}-f32.gguf`, (path) =>
    runCli(['synth', '--arch', arch, ...synth, '--type', 'f32', '--seed', '7', '--vocab', join(sharedModels, 'vocab', vocab),
      '-o', path]));
}

afterAll(() => {
  const rows = results.map((r) =>
    `| ${r.label} | ${r.positions} | ${(100 * r.top1).toFixed(1)}% | ${r.meanKl.toExponential(2)} | ${r.maxKl.toExponential(2)} |`);
  console.log(['| model | positions | top-1 agreement | mean KL | max KL |', '|---|---|---|---|---|', ...rows].join('\n'));
});

describe.each(architectures)('$arch logits match llama.cpp', (row) => {
  it('f32', async () => {
    const r = await compare(`${row.arch} f32`, await synthF32(row));
    expect(r.positions).toBeGreaterThan(150);
    expect(r.top1).toBe(1);
    expect(r.meanKl).toBeLessThan(1e-4);
  });

  it.each(quantTypes)('%s', async (type) => {
    const f32 = await synthF32(row);
    const path = await cached(`arch-${row.arch}-${type}.gguf`, (out) => runCli(['quantize', f32, out, type]));
    const r = await compare(`${row.arch} ${type}`, path);
    expect(r.top1).toBeGreaterThanOrEqual(0.99);
    expect(r.meanKl).toBeLessThan(1e-3);
  });
});
