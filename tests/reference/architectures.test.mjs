// Every architecture beyond llama (tests/reference/logits.test.mjs) against
// llama.cpp: next-token distributions at every position of a synthetic model
// of its structure, written by our `synth` (and `quantize`), read by both
// engines. One row per architecture; the sequences are long enough to cross
// sliding windows and more than two batches.
import { afterAll, describe, expect, it } from 'vitest';
import { architectureModel, architectures } from './architectures.mjs';
import { compareWithLlamaCpp, comparisonTable } from './reference.mjs';

const quantTypes = ['q8_0', 'q4_0', 'q4_K_M'];
const results = [];

async function compare(label, modelPath) {
  const r = await compareWithLlamaCpp(label, modelPath);
  results.push(r);
  return r;
}

afterAll(() => console.log(comparisonTable(results)));

describe.each(architectures)('$arch logits match llama.cpp', (row) => {
  it('f32', async () => {
    const r = await compare(`${row.arch} f32`, await architectureModel(row));
    expect(r.positions).toBeGreaterThan(150);
    expect(r.top1).toBe(1);
    expect(r.meanKl).toBeLessThan(1e-4);
  });

  it.each(quantTypes)('%s', async (type) => {
    const r = await compare(`${row.arch} ${type}`, await architectureModel(row, type));
    expect(r.top1).toBeGreaterThanOrEqual(0.99);
    expect(r.meanKl).toBeLessThan(1e-3);
  });
});
