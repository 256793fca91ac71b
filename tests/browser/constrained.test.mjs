// Constrained output in Chromium: for every case of tests/js/constrained-cases.mjs
// (JSON schemas, JSON modes, GBNF grammars), the first seeds give exactly the
// native CLI's text, on stories260K and on the 49k-token BPE model.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROMPT, SAMPLING, SAMPLING_FLAGS, bpeModel, constrainedCases } from '../js/constrained-cases.mjs';
import { modelPath, nativeContinuation } from '../js/helpers.mjs';
import { openTestPage } from './browser.mjs';

const SEEDS = 3;
const MAX_TOKENS = 64;
let scratchDir;
let t;

beforeAll(async () => {
  scratchDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-constrained-'));
  fs.copyFileSync(await bpeModel(), path.join(scratchDir, 'bpe.gguf'));  // served from /scratch/
  t = await openTestPage({ isolated: true, mounts: { '/scratch/': scratchDir } });
});

afterAll(async () => {
  await t?.close();
  fs.rmSync(scratchDir, { recursive: true, force: true });
});

describe.each([
  { model: 'stories260K', url: '/models/stories260K.gguf', file: () => modelPath },
  { model: 'synthetic 49k BPE', url: '/scratch/bpe.gguf', file: bpeModel },
])('$model', ({ url, file }) => {
  it('every case and seed gives the native CLI\'s text', async () => {
    const cases = constrainedCases();
    const requests = [];
    for (const c of cases) {
      for (let seed = 0; seed < SEEDS; seed += 1) requests.push({ options: { ...c.options, ...SAMPLING, seed, maxTokens: MAX_TOKENS } });
    }
    const texts = await t.page.evaluate(
      async ({ url, prompt, requests }) => {
        const llm = await window.wasmLlm.LLM.load(url, { threads: 1 });
        try {
          const out = [];
          for (const r of requests) out.push(await llm.generate(prompt, r.options));
          return out;
        } finally {
          await llm.dispose();
        }
      },
      { url, prompt: PROMPT, requests },
    );
    const modelFile = await file();
    let i = 0;
    for (const c of cases) {
      for (let seed = 0; seed < SEEDS; seed += 1) {
        const flags = [...c.flags(scratchDir), ...SAMPLING_FLAGS, '--seed', String(seed), '-n', String(MAX_TOKENS), '-t', '1'];
        expect(texts[i], `${c.name}, seed ${seed}`).toBe(await nativeContinuation(PROMPT, flags, modelFile));
        i += 1;
      }
    }
  });
});
