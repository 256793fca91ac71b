// Next-token distributions at every position agree with llama.cpp's, on the
// real stories260K model and on synthetic models in every supported type
// (written by our own `synth` and `quantize`, then read by both engines).
import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { cached, compareDistributions, modelCache, ourLogits, referenceLogits, resultsTable, runCli, sharedModels,
  storyText, textTokens } from './reference.mjs';

// A shape whose rows are multiples of 256, so K-quants apply to every matrix.
const shape = '256x4:4/2:768';
const floatTypes = ['f32', 'f16', 'bf16'];
const quantTypes = ['q8_0', 'q4_0', 'q4_1', 'q5_0', 'q5_1', 'q2_K', 'q3_K', 'q4_K', 'q5_K', 'q6_K', 'q4_K_M'];
const results = [];

async function compare(label, modelPath) {
  const tokens = await textTokens(modelPath, storyText);
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

afterAll(() => console.log(resultsTable(results)));

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
