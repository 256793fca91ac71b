// Many calls at once, calls aborted at every stage, models disposed mid-call,
// user callbacks that throw: every promise settles, the calls that run settle
// in the order they were made, a throwing callback ends only its own call
// (never the process), and nothing piles up (memory, threads, pending calls).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import v8 from 'node:v8';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AbortError, GenerationError, LLM, LoadError } from '../../js/index.js';
import { serveFaults } from './fault-server.mjs';
import { modelPath, readModel, repoRoot } from './helpers.mjs';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

const PROMPTS = ['Once upon a time', 'The dog', 'Lily and Ben', 'One day'];
const short = { maxTokens: 3, temperature: 0 };
let llm;
const expected = { generate: [], tokenize: [], detokenize: [] };

// The OS threads of this process (Linux): engine workers are threads.
const threadCount = () => fs.readdirSync('/proc/self/task').length;

beforeAll(async () => {
  llm = await LLM.load(modelPath, { threads: 1 });
  for (const prompt of PROMPTS) {
    expected.generate.push(await llm.generate(prompt, short));
    const ids = await llm.tokenize(prompt);
    expected.tokenize.push(ids);
    expected.detokenize.push(await llm.detokenize(ids));
  }
});

afterAll(() => llm?.dispose());

// One batch of `n` overlapping calls on `llm`: generations (some aborted
// before they start, some at their first token, some whose onToken throws),
// tokenize and detokenize. Checks every outcome and that the calls that ran
// settled in call order.
async function overlappingCalls(n) {
  const settled = [];
  const calls = [];
  for (let i = 0; i < n; i++) {
    const p = i % PROMPTS.length;
    const kind = ['generate', 'generate', 'tokenize', 'detokenize'][i % 4];
    let call;
    let outcome;
    if (kind === 'tokenize') {
      call = llm.tokenize(PROMPTS[p]);
      outcome = { value: expected.tokenize[p] };
    } else if (kind === 'detokenize') {
      call = llm.detokenize(expected.tokenize[p]);
      outcome = { value: expected.detokenize[p] };
    } else if (i % 5 === 1) {  // aborted before it starts
      const controller = new AbortController();
      call = llm.generate(PROMPTS[p], { ...short, signal: controller.signal });
      controller.abort();
      outcome = { error: AbortError, early: true };
    } else if (i % 5 === 3) {  // aborted at its first token
      const controller = new AbortController();
      call = llm.generate(PROMPTS[p], { ...short, maxTokens: 50, signal: controller.signal, onToken: () => controller.abort() });
      outcome = { error: AbortError };
    } else if (i % 7 === 0) {  // its onToken throws
      const thrown = new Error(`callback ${i}`);
      call = llm.generate(PROMPTS[p], { ...short, onToken: () => { throw thrown; } });
      outcome = { thrown };
    } else {
      call = llm.generate(PROMPTS[p], short);
      outcome = { value: expected.generate[p] };
    }
    calls.push(call.then(
      (value) => { settled.push(i); return { i, value }; },
      (error) => { settled.push(i); return { i, error }; },
    ).then((result) => ({ ...result, outcome })));
  }
  const results = await Promise.all(calls);
  for (const { i, value, error, outcome } of results) {
    if (outcome.value !== undefined) expect({ i, value }).toEqual({ i, value: outcome.value });
    else if (outcome.thrown) expect(error).toBe(outcome.thrown);
    else expect(error, `call ${i}`).toBeInstanceOf(outcome.error);
  }
  const ran = settled.filter((i) => !results[i].outcome.early);
  expect(ran).toEqual([...ran].sort((a, b) => a - b));
  expect(llm.client.pending.size).toBe(0);
  expect(llm.client.running.size).toBe(0);
}

function memory() {
  gc();
  const { rss, heapUsed } = process.memoryUsage();
  return { rss, heapUsed };
}

describe('overlapping calls on one model', () => {
  it('hundreds of calls, aborted or not, all settle with their own results, in call order; memory stays flat', async () => {
    await overlappingCalls(150);  // warm-up: the heaps settle at their working size
    const before = memory();
    await overlappingCalls(150);
    await overlappingCalls(150);
    const after = memory();
    // 300 calls: a leak of 4 KB each would show in this JS heap, of 80 KB each
    // (a buffer of the engine's) in the process (workers and wasm heaps included).
    expect(after.heapUsed - before.heapUsed).toBeLessThan(1 << 20);
    expect(after.rss - before.rss).toBeLessThan(24 << 20);
    expect(await llm.generate(PROMPTS[0], short)).toBe(expected.generate[0]);
  });
});

describe('loads and disposal', () => {
  it('overlapping loads aborted at every stage all settle; the others work; no worker is left behind', async () => {
    const threadsBefore = threadCount();
    const stages = ['before', 'start', 'progress', 'init', 'never'];
    const outcomes = await Promise.all(Array.from({ length: 15 }, async (_, i) => {
      const stage = stages[i % stages.length];
      const controller = new AbortController();
      if (stage === 'before') controller.abort();
      const onProgress = (p) => {
        if ((stage === 'progress' && p.phase === 'read') || (stage === 'init' && p.phase === 'init')) controller.abort();
      };
      const loading = LLM.load(modelPath, { threads: 1, signal: controller.signal, onProgress });
      if (stage === 'start') controller.abort();
      try {
        const model = await loading;
        const text = await model.generate(PROMPTS[0], short);
        await model.dispose();
        return { stage, text };
      } catch (error) {
        return { stage, error };
      }
    }));
    for (const { stage, text, error } of outcomes) {
      if (stage === 'never') expect(text).toBe(expected.generate[0]);
      else expect(error, stage).toBeInstanceOf(AbortError);
    }
    // Terminated workers end their threads shortly after.
    for (let tries = 0; threadCount() > threadsBefore && tries < 100; tries++) await new Promise((r) => setTimeout(r, 50));
    expect(threadCount()).toBeLessThanOrEqual(threadsBefore);
  });

  it('dispose mid-call: the running and queued calls reject with GenerationError in call order; later calls fail', async () => {
    const model = await LLM.load(modelPath, { threads: 1 });
    const settled = [];
    const calls = Array.from({ length: 60 }, (_, i) => model.generate(PROMPTS[i % 4], { maxTokens: 20, temperature: 0 }).then(
      (text) => { settled.push(i); return text; },
      (error) => { settled.push(i); return error; },
    ));
    await calls[2];
    await model.dispose();
    const results = await Promise.all(calls);
    expect(results.slice(0, 3).every((r) => typeof r === 'string')).toBe(true);
    const failed = results.filter((r) => r instanceof GenerationError);
    expect(failed.length).toBeGreaterThan(40);
    expect(failed.every((e) => /the model was disposed/.test(e.message))).toBe(true);
    expect(results.every((r) => typeof r === 'string' || r instanceof GenerationError)).toBe(true);
    expect(settled).toEqual([...settled].sort((a, b) => a - b));
    await expect(model.generate(PROMPTS[0])).rejects.toBeInstanceOf(GenerationError);
    await expect(model.tokenize(PROMPTS[0])).rejects.toBeInstanceOf(GenerationError);
  });
});

describe('callbacks that throw', () => {
  it('a throwing onToken ends that generation with its error; the model keeps serving', async () => {
    const thrown = new TypeError('onToken failed');
    let calls = 0;
    const onToken = () => {
      calls += 1;
      throw thrown;
    };
    await expect(llm.generate(PROMPTS[0], { maxTokens: 40, temperature: 0, onToken })).rejects.toBe(thrown);
    expect(calls).toBe(1);
    expect(await llm.generate(PROMPTS[0], short)).toBe(expected.generate[0]);
  });

  it('a throwing onProgress ends that load with its error, and its download leaves nothing in the cache', async () => {
    const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-lifecycle-'));
    const server = await serveFaults(() => ({ file: readModel(), trickle: { bytes: 16 << 10, ms: 20 } }));
    try {
      const thrown = new Error('onProgress failed');
      const onProgress = (p) => {
        if (p.loaded > 200_000) throw thrown;
      };
      await expect(LLM.load(server.url, { threads: 1, cacheDir, onProgress })).rejects.toBe(thrown);
      for (let tries = 0; fs.readdirSync(cacheDir).length > 0 && tries < 100; tries++) await new Promise((r) => setTimeout(r, 50));
      expect(fs.readdirSync(cacheDir)).toEqual([]);
    } finally {
      await server.close();
      fs.rmSync(cacheDir, { recursive: true, force: true });
    }
  });
});

// Scripts run in their own Node process: what happens to the process itself.
describe('the Node process', () => {
  let scratch;
  beforeAll(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-process-'));
  });
  afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

  // Runs `source` (an ES module importing the package as `wasm-llm`) with Node; resolves to {code, stdout, stderr}.
  async function runScript(source, env = {}) {
    const file = path.join(scratch, `script-${Math.random().toString(36).slice(2)}.mjs`);
    const entry = JSON.stringify(path.join(repoRoot, 'js/index.js'));
    fs.writeFileSync(file, source.replaceAll("'wasm-llm'", entry));
    try {
      const { stdout, stderr } = await promisify(execFile)(process.execPath, [file], { env: { ...process.env, ...env } });
      return { code: 0, stdout, stderr };
    } catch (error) {
      return { code: error.code, stdout: error.stdout, stderr: error.stderr };
    }
  }

  it('survives throwing onToken and onProgress callbacks', async () => {
    const result = await runScript(`
      import { LLM } from 'wasm-llm';
      const model = ${JSON.stringify(modelPath)};
      const load = await LLM.load(model, { threads: 1, onProgress() { throw new Error('from onProgress'); } }).catch((e) => e.message);
      const llm = await LLM.load(model, { threads: 1 });
      const generate = await llm.generate('Once upon a time', { maxTokens: 10, onToken() { throw new Error('from onToken'); } })
        .catch((e) => e.message);
      const after = await llm.generate('Once upon a time', { maxTokens: 3, temperature: 0 });
      await llm.dispose();
      console.log(JSON.stringify({ load, generate, after }));
    `);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ load: 'from onProgress', generate: 'from onToken', after: expected.generate[0] });
  });

  it('an aborted download leaves no partial file, even when the process ends right after', async () => {
    const cacheDir = path.join(scratch, 'cache');
    const server = await serveFaults(() => ({ file: readModel(), trickle: { bytes: 16 << 10, ms: 20 } }));
    try {
      const result = await runScript(`
        import fs from 'node:fs';
        import { LLM } from 'wasm-llm';
        const controller = new AbortController();
        let partial = [];
        const onProgress = (p) => {
          if (p.loaded > 200_000 && !controller.signal.aborted) {
            partial = fs.readdirSync(${JSON.stringify(cacheDir)}).filter((n) => n.endsWith('.part'));
            controller.abort();
          }
        };
        const error = await LLM.load(${JSON.stringify(server.url)}, { threads: 1, cacheDir: ${JSON.stringify(cacheDir)},
          signal: controller.signal, onProgress }).catch((e) => e.name);
        console.log(JSON.stringify({ error, partial }));
      `);
      expect(result.code).toBe(0);
      const { error, partial } = JSON.parse(result.stdout);
      expect(error).toBe('AbortError');
      expect(partial).toHaveLength(1);  // the download was being cached when it was aborted
      expect(fs.readdirSync(cacheDir)).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
