// Models that are not one GGUF file, in Chromium: a llama2.c checkpoint
// (its tokenizer found beside its URL, or both picked as files) gives the
// native CLI's text of stories260K.gguf; a synthetic model split in 3 loads
// from its first file's URL (the others fetched at once, progress over the
// whole, each cached in OPFS, the next load with no request), and a 404,
// a file of another model, a lying file and an abort mid-file are clean
// failures that leave nothing in OPFS.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readGguf, writeGguf } from '../fuzz/gguf-kv.mjs';
import { nativeContinuation, syntheticModel } from '../js/helpers.mjs';
import { runCli, sharedModels } from '../reference/reference.mjs';
import { openTestPage } from './browser.mjs';

const prompt = 'Once upon a time';
const greedy = { maxTokens: 40, temperature: 0 };
const cliArgs = ['-n', '40', '--temp', '0'];
let dir;
let parts;  // the split model's file names, served at /split/
let t;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-split-page-'));
  const model = await syntheticModel('q4_0');
  const { stdout } = await runCli(['split', '--split-max-tensors', '14', model, path.join(dir, 'synth')]);
  parts = stdout.trim().split('\n').map((f) => path.basename(f));
  // Broken variants: file 3 lying about the count, and file 3 of another model.
  const lying = readGguf(path.join(dir, parts[2]));
  lying.kvs.find((kv) => kv.key === 'split.count').value = 4;
  writeGguf(path.join(dir, 'lying-3.gguf'), lying.kvs, lying.tensors);
  const other = (await runCli(['split', '--split-max-tensors', '4', path.join(sharedModels, 'stories260K.gguf'),
    path.join(dir, 'other')])).stdout.trim().split('\n');
  fs.copyFileSync(other[2], path.join(dir, 'foreign-3.gguf'));
  t = await openTestPage({ isolated: true, mounts: { '/split/': dir } });
}, 120_000);

afterAll(async () => {
  await t?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

// Runs body(helpers, args) in the page; errors come back as descriptions.
function inPage(body, args = {}) {
  return t.page.evaluate(
    async ({ source, args, prompt, greedy }) => {
      const { LLM } = window.wasmLlm;
      const describeError = (e) => ({ name: e.name, code: e.code, message: e.message });
      const load = async (source, options = {}) => {
        const progress = [];
        try {
          const llm = await LLM.load(source, { ...options, onProgress: (p) => progress.push(p) });
          try {
            return { text: await llm.generate(prompt, greedy), from: llm.info.loadedFrom, progress };
          } finally {
            await llm.dispose();
          }
        } catch (error) {
          return { error: describeError(error), progress };
        }
      };
      const opfsNames = async () => {
        const root = await navigator.storage.getDirectory();
        const names = [];
        for await (const name of (await root.getDirectoryHandle('wasm-llm', { create: true })).keys()) names.push(name);
        return names.sort();
      };
      const fn = new Function(`return (${source})`)();
      return fn({ LLM, load, opfsNames }, args);
    },
    { source: body.toString(), args, prompt, greedy },
  );
}

describe('llama2.c checkpoints in Chromium', () => {
  it('give the native text of stories260K.gguf, greedy and seeded, the tokenizer beside the URL or picked', async () => {
    const expected = {
      greedy: await nativeContinuation(prompt, cliArgs),
      seeded: await nativeContinuation(prompt, ['-n', '40', '--temp', '0.8', '--seed', '42']),
    };
    const result = await inPage(async ({ LLM }, { prompt, greedy }) => {
      const texts = async (source, options) => {
        const llm = await LLM.load(source, options);
        try {
          return {
            greedy: await llm.generate(prompt, greedy),
            seeded: await llm.generate(prompt, { maxTokens: 40, temperature: 0.8, seed: 42 }),
          };
        } finally {
          await llm.dispose();
        }
      };
      const file = async (url, name) => new File([await (await fetch(url)).arrayBuffer()], name);
      return {
        byUrl: await texts('/models/llama2c/stories260K.bin', { cache: false }),
        picked: await texts(await file('/models/llama2c/stories260K.bin', 'stories260K.bin'),
          { tokenizer: await file('/models/llama2c/tok512.bin', 'tok512.bin') }),
      };
    }, { prompt, greedy });
    expect(result).toEqual({ byUrl: expected, picked: expected });
  });
});

describe('split GGUF models in Chromium', () => {
  const url = (name) => `/split/${name}`;

  it('load from the first file\'s URL: all files at once, progress over the whole, each cached', async () => {
    const expected = await nativeContinuation(prompt, cliArgs, await syntheticModel('q4_0'));
    await inPage(({ LLM }) => LLM.cache.clear());
    const first = await inPage(({ load }, { first }) => load(first), { first: url(parts[0]) });
    expect(first.error).toBeUndefined();
    expect(first.text).toBe(expected);
    expect(first.from).toBe('network');
    for (const part of parts) expect(t.requestsFor(url(part))).toHaveLength(1);
    const total = parts.reduce((sum, p) => sum + fs.statSync(path.join(dir, p)).size, 0);
    const downloads = first.progress.filter((p) => p.phase === 'download');
    expect(downloads.every((p) => p.total === total)).toBe(true);
    expect(downloads.at(-1).loaded).toBe(total);
    expect(first.progress.at(-1)).toEqual({ phase: 'done', loaded: total, total });
    const entries = await inPage(({ LLM }) => LLM.cache.list());
    expect(entries.map((e) => e.url).sort()).toEqual(parts.map((p) => `${t.origin}${url(p)}`).sort());

    const again = await inPage(({ load }, { first }) => load(first), { first: url(parts[0]) });
    expect(again).toMatchObject({ text: expected, from: 'cache' });
    for (const part of parts) expect(t.requestsFor(url(part))).toHaveLength(1);
    await inPage(({ LLM }) => LLM.cache.clear());
  });

  // The server answers requests for file `index` of the split model with answer(req, res, headers) while body() runs.
  const withFileAnswered = (index, answer, body) => t.answering(url(parts[index]), answer, body);
  const serve = (file) => (req, res, headers) => {
    const bytes = fs.readFileSync(path.join(dir, file));
    res.writeHead(200, { ...headers, 'Content-Length': bytes.length }).end(bytes);
  };

  it('fail cleanly on a 404, a file of another model and a lying file, leaving OPFS empty', async () => {
    const first = url(parts[0]);
    const loadFirst = () => inPage(({ load }, { first }) => load(first), { first });
    const missing = await withFileAnswered(1, (req, res, headers) => res.writeHead(404, headers).end('no'), loadFirst);
    expect(missing.error).toMatchObject({ name: 'LoadError', code: 'not_found' });
    expect(missing.error.message).toContain(`${parts[1]}: HTTP 404`);
    const foreign = await withFileAnswered(2, serve('foreign-3.gguf'), loadFirst);
    expect(foreign.error).toMatchObject({ name: 'LoadError', code: 'bad_file' });
    expect(foreign.error.message).toMatch(/the files are not of one model/);
    const lying = await withFileAnswered(2, serve('lying-3.gguf'), loadFirst);
    expect(lying.error).toMatchObject({ name: 'LoadError', code: 'bad_file' });
    expect(lying.error.message).toMatch(/file 3 of the split model says it is file 3 of 4/);
    expect(await inPage(({ opfsNames }) => opfsNames())).toEqual([]);
  });

  it('abort while a file streams, leaving OPFS empty', async () => {
    // File 3 is held unanswered, and its request aborts the load (files 1 and 2 are streaming then).
    const held = [];
    const onFile3 = (req, res) => {
      held.push(res);
      t.page.evaluate(() => window.abortSplitLoad()).catch(() => {});
    };
    const result = await withFileAnswered(2, onFile3, () => inPage(({ load }, { first }) => {
      const controller = new AbortController();
      window.abortSplitLoad = () => controller.abort();
      return load(first, { signal: controller.signal });
    }, { first: url(parts[0]) }));
    for (const res of held) res.destroy();
    expect(held.length).toBe(1);
    expect(result.error).toMatchObject({ name: 'AbortError', code: 'aborted' });
    // The load rejects at once; the worker then drops its partial files.
    const names = () => inPage(({ opfsNames }) => opfsNames());
    for (let tries = 0; (await names()).length > 0 && tries < 100; tries++) await new Promise((r) => setTimeout(r, 50));
    expect(await names()).toEqual([]);
  });
});
