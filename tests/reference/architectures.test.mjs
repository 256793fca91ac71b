// Every architecture beyond llama (tests/reference/logits.test.mjs) against
// llama.cpp: next-token distributions at every position of a synthetic model
// of its structure, written by our `synth` (and `quantize`), read by both
// engines. One row per architecture (architectures.mjs); the sequences cross
// sliding windows and more than two batches, so whatever a layer carries from
// one batch to the next (KV cache, convolution state) is checked too. The
// wasm build (the package's CLI in Node) gives the native logits bit for bit.
import { afterAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { architectureModel, architectures } from './architectures.mjs';
import { compareWithLlamaCpp, comparisonTable, logitsFile, modelCache, quickSubset, repoRoot } from './reference.mjs';

const quantTypes = ['q8_0', 'q4_0', 'q4_K_M'];
const results = [];

async function compare(label, modelPath) {
  const r = await compareWithLlamaCpp(label, modelPath);
  results.push(r);
  // The same tokens through the wasm CLI, two threads: the native file's bytes.
  const wasmPath = join(modelCache, `${label.replace(/\W+/g, '-')}.wasm.logits.f32`);
  await promisify(execFile)(process.execPath, [join(repoRoot, 'js/node/cli.js'), 'logits', '-m', modelPath,
    '--tokens', r.tokens.join(','), '-o', wasmPath, '--threads', '2'], { maxBuffer: 16 << 20 });
  expect(readFileSync(wasmPath).equals(readFileSync(logitsFile(label)))).toBe(true);
  return r;
}

afterAll(() => console.log(comparisonTable(results)));

// Every architecture in f32 and, in npm test, one quantized type each, taking
// turns, so that every type is checked on some architecture; npm run
// test:full checks every type on every architecture.
describe.each(architectures.map((row, index) => ({ ...row, index })))('$arch logits match llama.cpp', (row) => {
  it('f32', async () => {
    const r = await compare(`${row.arch} f32`, await architectureModel(row));
    expect(r.positions).toBeGreaterThan(150);
    expect(r.top1).toBe(1);
    expect(r.meanKl).toBeLessThan(1e-4);
  });

  it.each(quickSubset(quantTypes, (i) => i === row.index % quantTypes.length))('%s', async (type) => {
    const r = await compare(`${row.arch} ${type}`, await architectureModel(row, type));
    expect(r.top1).toBeGreaterThanOrEqual(0.99);
    expect(r.meanKl).toBeLessThan(1e-3);
  });
});
