// The package where Node runs relaxed SIMD: under Node 24 (tools/setup.sh
// fetches it into build/node24; x64 Linux only, skipped elsewhere), LLM.load
// runs the relaxed-SIMD build unless relaxedSimd is false, and both builds
// give exactly the native CLI's text (greedy and seeded, 1 and 2 threads) on
// stories260K and on q4_0 and q4_K_M models, whose q4_0, q4_K and q6_K
// matrices go through the relaxed kernels. `npx wasm-llm` runs the relaxed CLI.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { modelPath, nativeContinuation, node24, node24Platform, repoRoot, syntheticModel } from './helpers.mjs';

const execFileP = promisify(execFile);
const prompt = 'Once upon a time';
// Greedy, then seeded sampling: LLM.generate's options and the CLI's flags.
const greedy = { js: { temperature: 0 }, cli: ['--temp', '0'] };
const seeded = {
  js: { temperature: 0.8, seed: 42, topK: 40, topP: 0.9 },
  cli: ['--temp', '0.8', '--seed', '42', '--top-k', '40', '--top-p', '0.9'],
};

// Node 24's stdout from `node24 ...args`.
async function runNode24(args) {
  const { stdout } = await execFileP(node24, args, { cwd: repoRoot, maxBuffer: 16 << 20 });
  return stdout;
}

// The last line of what the ES module `source` prints under Node 24, parsed.
async function reportOf(source) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-node24-'));
  try {
    const script = path.join(dir, 'check.mjs');
    fs.writeFileSync(script, source);
    return JSON.parse((await runNode24([script])).trim().split('\n').at(-1));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe.skipIf(!node24Platform)('under Node 24', () => {
  beforeAll(() => {
    if (!fs.existsSync(node24)) throw new Error(`${node24} is missing: bash tools/setup.sh fetches it`);
  });

  it('LLM.load runs the relaxed-SIMD build unless relaxedSimd is false; both give the native text', async () => {
    const models = [
      { model: modelPath, maxTokens: 120 },
      { model: await syntheticModel('q4_0'), maxTokens: 48 },
      { model: await syntheticModel('q4_K_M'), maxTokens: 48 },
    ];
    const report = await reportOf(`
      import { LLM } from ${JSON.stringify(path.join(repoRoot, 'js/index.js'))};
      const [prompt, greedy, seeded] = ${JSON.stringify([prompt, greedy.js, seeded.js])};
      const results = [];
      for (const { model, maxTokens } of ${JSON.stringify(models)}) {
        for (const threads of [1, 2]) {
          for (const relaxedSimd of [undefined, false]) {
            const llm = await LLM.load(model, { threads, relaxedSimd });
            const { kernels, threaded } = llm.info;
            results.push({
              model, threads, kernels, threaded,
              greedy: await llm.generate(prompt, { ...greedy, maxTokens }),
              seeded: await llm.generate(prompt, { ...seeded, maxTokens }),
            });
            await llm.dispose();
          }
        }
      }
      console.log(JSON.stringify({ node: process.version, results }));
    `);
    expect(report.node).toMatch(/^v24\./);
    const expected = [];
    for (const { model, maxTokens } of models) {
      const n = ['-n', String(maxTokens)];
      const text = {
        greedy: await nativeContinuation(prompt, [...greedy.cli, ...n], model),
        seeded: await nativeContinuation(prompt, [...seeded.cli, ...n], model),
      };
      for (const threads of [1, 2]) {
        for (const kernels of ['relaxed', 'simd128']) {
          expected.push({ model, threads, kernels, threaded: threads > 1, ...text });
        }
      }
    }
    expect(report.results).toEqual(expected);
  });

  it('npx wasm-llm runs the relaxed-SIMD CLI, with the native CLI\'s text', async () => {
    const model = await syntheticModel('q4_K_M');
    const cli = path.join(repoRoot, 'js/node/cli.js');
    expect(await runNode24([cli, 'info', '-m', model])).toMatch(/^kernels:\s+relaxed$/m);
    const n = ['-n', '48'];
    const generated = await runNode24([cli, 'generate', '-m', model, '-p', prompt, '-t', '2', ...n, ...greedy.cli]);
    expect(generated).toBe(`${prompt}${await nativeContinuation(prompt, [...n, ...greedy.cli], model)}\n`);
  });
});
