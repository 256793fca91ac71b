// The relaxed-SIMD probe the browser worker picks its build with
// (worker/relaxed-simd.js), in Node: V8 runs relaxed SIMD without a flag from
// 11.4 on (Node 20 has 11.3). The flag turning the answer to yes shows that
// the probe module is well formed and that its relaxed instruction is what
// decides. In Chromium, tests/browser/engine.test.mjs sees the relaxed build load.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { runsRelaxedSimd } from '../../worker/relaxed-simd.js';

const [v8Major, v8Minor] = process.versions.v8.split('.').map(Number);
const v8ShipsRelaxedSimd = v8Major > 11 || (v8Major === 11 && v8Minor >= 4);

it(`says ${v8ShipsRelaxedSimd} in this Node (V8 ${process.versions.v8}) without flags`, () => {
  expect(runsRelaxedSimd()).toBe(v8ShipsRelaxedSimd);
});

it('says true with --experimental-wasm-relaxed-simd', async () => {
  const probe = new URL('../../worker/relaxed-simd.js', import.meta.url).href;
  const { stdout } = await promisify(execFile)(process.execPath, [
    '--experimental-wasm-relaxed-simd', '--input-type=module',
    '-e', `import { runsRelaxedSimd } from '${probe}'; console.log(runsRelaxedSimd());`,
  ]);
  expect(stdout.trim()).toBe('true');
});
