// The wasm build generates exactly the native CLI's text (design-notes §2),
// with one and two threads, greedy and seeded sampling.
import { describe, expect, it } from 'vitest';
import { LLM } from '../../js/index.js';
import { modelPath, nativeContinuation } from './helpers.mjs';

const prompt = 'Once upon a time';
const cases = [
  { name: 'greedy', js: { maxTokens: 120, temperature: 0 }, cli: ['-n', '120', '--temp', '0'] },
  {
    name: 'seeded sampling',
    js: { maxTokens: 120, temperature: 0.8, seed: 42, topK: 40, topP: 0.9 },
    cli: ['-n', '120', '--temp', '0.8', '--seed', '42', '--top-k', '40', '--top-p', '0.9'],
  },
];

describe.each([1, 2])('stories260K with %i thread(s)', (threads) => {
  it.each(cases)('$name matches the native CLI', async ({ js, cli }) => {
    const expected = await nativeContinuation(prompt, [...cli, '-t', String(threads)]);
    const llm = await LLM.load(modelPath, { threads });
    try {
      expect(llm.info.threads).toBe(threads);
      expect(llm.info.threaded).toBe(threads > 1);
      expect(await llm.generate(prompt, js)).toBe(expected);
      // Every pool thread (a worker_threads worker under the wasm pthreads) ran work.
      expect(llm.lastStats.threadsUsed).toBe(threads);
    } finally {
      await llm.dispose();
    }
  });
});
