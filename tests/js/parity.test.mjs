// The wasm build generates exactly the native CLI's text (design-notes §2):
// wasm SIMD128 kernels in Node (relaxed SIMD where this Node runs it; Node 24:
// node24.test.mjs) against the native build's AVX2 (or reference) kernels,
// with one and two threads, greedy and seeded sampling, on the real
// stories260K, on a synthetic model in every tensor type, and on every
// architecture.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { LLM } from '../../js/index.js';
import { architectureModel, architectures } from '../reference/architectures.mjs';
import { quickSubset, repoRoot, runCli } from '../reference/reference.mjs';
import { modelPath, nativeContinuation, nodeKernels, syntheticModel } from './helpers.mjs';

const execFileP = promisify(execFile);
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
    expect(llm.info.kernels).toBe(nodeKernels);
    for (const { js, cli } of cases) {
      const expected = await nativeContinuation(prompt, [...cli, '-n', String(maxTokens), '-t', String(threads)], model);
      let stats;
      expect(await llm.generate(prompt, { ...js, maxTokens, onStats: (s) => (stats = s) })).toBe(expected);
      // A long text was compared: all of maxTokens, or most of it where the
      // model sampled its end token (a random-weight model may; the native
      // CLI's text ended at the same token, as the texts are equal).
      expect(['max_tokens', 'end_of_generation']).toContain(stats.stopReason);
      if (stats.stopReason === 'max_tokens') expect(stats.generatedTokens).toBe(maxTokens);
      else expect(stats.generatedTokens).toBeGreaterThanOrEqual(maxTokens / 2);
      // Every pool thread (a worker_threads worker under the wasm pthreads) ran work.
      expect(stats.threadsUsed).toBe(threads);
    }
  } finally {
    await llm.dispose();
  }
}

describe.each([1, 2])('with %i thread(s)', (threads) => {
  it('stories260K matches the native CLI', () => expectParity(modelPath, threads, 120));

  const types = ['f32', 'f16', 'bf16', 'q8_0', 'q4_0', 'q4_1', 'q5_0', 'q5_1', 'q2_K', 'q3_K', 'q4_K', 'q5_K', 'q6_K',
    'q4_K_M'];
  // npm test: each type with one thread count, taking turns; test:full: both.
  it.each(quickSubset(types, (i) => i % 2 === threads - 1))('a synthetic %s model matches the native CLI', async (type) => {
    await expectParity(await syntheticModel(type), threads, 48);
  });
});

// Every architecture beyond llama (tests/reference/architectures.mjs) in q4_0
// (whose matrices the wasm build repacks), long enough to cross the sliding
// windows and wrap the local layers' ring of slots.
describe.each(architectures.map((row, index) => ({ ...row, index })))('$arch', (row) => {
  // npm test: one thread count each, taking turns; test:full: both.
  it.each(quickSubset([1, 2], (i) => i === row.index % 2))('q4_0 with %i thread(s) matches the native CLI', async (threads) => {
    await expectParity(await architectureModel(row, 'q4_0'), threads, 120);
  });
});

// The wasm build repacks q4_0 matrices at load (cpp/quant/repack.h), so the
// q4_0 case above runs its own kernels: check it really does (the 28 layer
// matrices and the q6_K output; the q4_0 embeddings are read row by row), and
// that the native build keeps the file's layout for both (its AVX2 kernels
// repack q4_K and q5_0 only).
it('the wasm build repacks the q4_0 matrices of that model at load; the native build does not', async () => {
  const model = await syntheticModel('q4_0');
  const bench = ['bench', '-m', model, '-p', '4', '-n', '2', '-t', '1'];
  const wasm = JSON.parse((await execFileP(process.execPath, [join(repoRoot, 'js/node/cli.js'), ...bench])).stdout);
  const native = JSON.parse((await runCli(bench)).stdout);
  expect(wasm.kernels).toBe(nodeKernels);
  expect(wasm.repacked_tensors).toBe(4 * 7 + 1);
  expect(native.repacked_tensors).toBe(0);
});
