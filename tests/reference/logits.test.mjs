// Next-token distributions at every position agree with llama.cpp's, on the
// real stories260K model and on synthetic models in every supported type
// (written by our own `synth` and `quantize`, then read by both engines).
import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { cached, compareDistributions, llama, modelCache, ourLogits, referenceLogits, runCli, sharedModels }
  from './reference.mjs';

// About 165 tokens, so one disagreement is 0.6%, not the 1.7% of 60.
const text = 'Once upon a time, in a small village by the sea, there lived an old fisherman who ' +
  'told stories about the stars. Every night the children gathered around him, and he would point ' +
  'at the sky and say: "Each light up there is a lantern someone left burning for us." The children ' +
  'laughed, but they listened. One winter the storms came early, and the boats stayed on the shore ' +
  'for many weeks. The fisherman mended his nets by the fire and sang songs his mother had taught ' +
  'him, songs about whales and islands and a city under the waves. In spring, the youngest girl in ' +
  'the village, Mira, asked him to take her out on the water. He said yes, on one condition: that ' +
  'she would learn the names of every star before the summer ended.';

// A shape whose rows are multiples of 256, so K-quants apply to every matrix.
const shape = '256x4:4/2:768';
const floatTypes = ['f32', 'f16', 'bf16'];
const quantTypes = ['q8_0', 'q4_0', 'q4_1', 'q5_0', 'q5_1', 'q2_K', 'q3_K', 'q4_K', 'q5_K', 'q6_K', 'q4_K_M'];
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

async function synth(arch, vocab, type) {
  return cached(`synth-${arch}-${shape.replace(/[:/]/g, '_')}-${type}.gguf`, async (path) => {
    await runCli(['synth', '--arch', arch, '--shape', shape, '--type', type, '--seed', '7',
      '--vocab', join(sharedModels, 'vocab', vocab), '-o', path]);
  });
}

afterAll(() => {
  const rows = results.map((r) =>
    `| ${r.label} | ${r.positions} | ${(100 * r.top1).toFixed(1)}% | ${r.meanKl.toExponential(2)} | ${r.maxKl.toExponential(2)} |`);
  console.log(['| model | positions | top-1 agreement | mean KL | max KL |', '|---|---|---|---|---|', ...rows].join('\n'));
});

describe('logits match llama.cpp', () => {
  it('stories260K (real model, f32)', async () => {
    const r = await compare('stories260K f32', join(sharedModels, 'stories260K.gguf'));
    expect(r.top1).toBe(1);
    expect(r.meanKl).toBeLessThan(1e-4);
  });

  for (const type of floatTypes) {
    it(`synthetic llama ${shape} ${type}`, async () => {
      const r = await compare(`llama ${type}`, await synth('llama', 'ggml-vocab-llama-spm.gguf', type));
      expect(r.top1).toBe(1);
      expect(r.meanKl).toBeLessThan(1e-4);
    });
  }

  for (const type of quantTypes) {
    it(`synthetic llama ${shape} ${type}`, async () => {
      const f32 = await synth('llama', 'ggml-vocab-llama-spm.gguf', 'f32');
      const path = await cached(`synth-llama-${type}.gguf`, (out) => runCli(['quantize', f32, out, type]));
      const r = await compare(`llama ${type}`, path);
      expect(r.top1).toBeGreaterThanOrEqual(0.99);
      expect(r.meanKl).toBeLessThan(1e-3);
    });
  }

  for (const type of ['f32', 'q8_0']) {
    it(`synthetic qwen2 ${shape} ${type}`, async () => {
      const r = await compare(`qwen2 ${type}`, await synth('qwen2', 'ggml-vocab-gpt-2.gguf', type));
      expect(r.top1).toBeGreaterThanOrEqual(type === 'f32' ? 1 : 0.99);
      expect(r.meanKl).toBeLessThan(1e-3);
    });
  }
});
