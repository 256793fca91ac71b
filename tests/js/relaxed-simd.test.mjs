// The relaxed-SIMD probe the engine workers and the CLI pick their build with
// (worker/relaxed-simd.js), in this Node: V8 runs relaxed SIMD without a flag
// from 11.4 on (Node 22; Node 20 has 11.3). With Node 20, the flag turning the
// answer to yes shows that the probe module is well formed and that its
// relaxed instruction is what decides. Node 24 loading the relaxed build:
// node24.test.mjs; Chromium: tests/browser/engine.test.mjs.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { runsRelaxedSimd, wasmBuild } from '../../worker/relaxed-simd.js';
import { v8RunsRelaxedSimd } from './helpers.mjs';

it(`says ${v8RunsRelaxedSimd} in this Node (V8 ${process.versions.v8}) without flags`, () => {
  expect(runsRelaxedSimd()).toBe(v8RunsRelaxedSimd);
});

it('picks the relaxed build where it runs, unless told not to', () => {
  expect(wasmBuild('mt', true)).toBe(v8RunsRelaxedSimd ? 'mt-relaxed' : 'mt');
  expect(wasmBuild('st', true)).toBe(v8RunsRelaxedSimd ? 'st-relaxed' : 'st');
  expect(wasmBuild('mt', false)).toBe('mt');
  expect(wasmBuild('st', false)).toBe('st');
});

// Only where the flag is needed (Node 24 no longer accepts it).
it.runIf(!v8RunsRelaxedSimd)('says true with --experimental-wasm-relaxed-simd', async () => {
  const probe = new URL('../../worker/relaxed-simd.js', import.meta.url).href;
  const { stdout } = await promisify(execFile)(process.execPath, [
    '--experimental-wasm-relaxed-simd', '--input-type=module',
    '-e', `import { runsRelaxedSimd } from '${probe}'; console.log(runsRelaxedSimd());`,
  ]);
  expect(stdout.trim()).toBe('true');
});
