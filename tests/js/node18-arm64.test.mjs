// The package on a Raspberry Pi's Node: Debian's arm64 Node 18 under qemu
// (../shared/tools/pi-node.sh), single- and multi-threaded, gives exactly the
// native CLI's text.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { modelPath, nativeContinuation, repoRoot } from './helpers.mjs';

const piNode = path.resolve(repoRoot, '../shared/tools/pi-node.sh');

it('runs on arm64 Node 18 with 1 and 2 threads', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-pi-'));
  const script = path.join(dir, 'check.mjs');
  fs.writeFileSync(script, `
    import { LLM } from ${JSON.stringify(path.join(repoRoot, 'js/index.js'))};
    const results = [];
    for (const threads of [1, 2]) {
      const llm = await LLM.load(${JSON.stringify(modelPath)}, { threads });
      const greedy = await llm.generate('Once upon a time', { maxTokens: 40, temperature: 0 });
      const seeded = await llm.generate('Once upon a time', { maxTokens: 40, temperature: 0.8, seed: 9 });
      results.push({ threads, threaded: llm.info.threaded, greedy, seeded });
      await llm.dispose();
    }
    console.log(JSON.stringify({ node: process.version, arch: process.arch, results }));
  `);
  try {
    const { stdout } = await promisify(execFile)('bash', [piNode, script], { maxBuffer: 16 << 20 });
    const report = JSON.parse(stdout.trim().split('\n').at(-1));
    expect(report.arch).toBe('arm64');
    expect(report.node).toMatch(/^v18\./);
    const greedy = await nativeContinuation('Once upon a time', ['-n', '40', '--temp', '0']);
    const seeded = await nativeContinuation('Once upon a time', ['-n', '40', '--temp', '0.8', '--seed', '9']);
    expect(report.results).toEqual([
      { threads: 1, threaded: false, greedy, seeded },
      { threads: 2, threaded: true, greedy, seeded },
    ]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
