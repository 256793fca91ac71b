// The wasm build generates exactly the native CLI's text (design-notes §2):
// wasm SIMD128 kernels in Node against the native build's AVX2 (or reference)
// kernels, with one and two threads, greedy and seeded sampling, on the real
// stories260K and on a synthetic model in every tensor type.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LLM } from '../../js/index.js';
import { cached, runCli, sharedModels } from '../reference/reference.mjs';
import { modelPath, nativeContinuation } from './helpers.mjs';

const prompt = 'Once upon a time';
const cases = [
  { name: 'greedy', js: { temperature: 0 }, cli: ['--temp', '0'] },
  {
    name: 'seeded sampling',
    js: { temperature: 0.8, seed: 42, topK: 40, topP: 0.9 },
    cli: ['--temp', '0.8', '--seed', '42', '--top-k', '40', '--top-p', '0.9'],
  },
];

async function expectParity(model, threads, maxTokens) {
  const llm = await LLM.load(model, { threads });
  try {
    expect(llm.info.threads).toBe(threads);
    expect(llm.info.threaded).toBe(threads > 1);
    for (const { js, cli } of cases) {
      const expected = await nativeContinuation(prompt, [...cli, '-n', String(maxTokens), '-t', String(threads)], model);
      expect(expected.length).toBeGreaterThan(maxTokens);  // real text, not an early stop
      expect(await llm.generate(prompt, { ...js, maxTokens })).toBe(expected);
      // Every pool thread (a worker_threads worker under the wasm pthreads) ran work.
      expect(llm.lastStats.threadsUsed).toBe(threads);
    }
  } finally {
    await llm.dispose();
  }
}

describe.each([1, 2])('with %i thread(s)', (threads) => {
  it('stories260K matches the native CLI', () => expectParity(modelPath, threads, 120));

  // Rows of 256 so every K-quant applies to every matrix.
  const types = ['f32', 'f16', 'bf16', 'q8_0', 'q4_0', 'q4_1', 'q5_0', 'q5_1', 'q2_K', 'q3_K', 'q4_K', 'q5_K', 'q6_K',
    'q4_K_M'];
  it.each(types)('a synthetic %s model matches the native CLI', async (type) => {
    const model = await cached(`parity-256x4-${type}.gguf`, (path) =>
      runCli(['synth', '--shape', '256x4:4/2:768', '--type', type, '--seed', '11', '--ctx', '512',
        '--vocab', join(sharedModels, 'vocab', 'ggml-vocab-llama-spm.gguf'), '-o', path]));
    await expectParity(model, threads, 48);
  });
});
