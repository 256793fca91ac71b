// A model larger than 2 GiB (TinyLlama's shape in f16: 2.05 GiB of weights),
// so the weights reach wasm heap addresses at and above 2^31: the wasm CLI
// (whose file reads go through Emscripten's Node file system, core/file_io.h)
// and LLM.load (which streams the file into the heap from JS) both give the
// native CLI's greedy text.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LLM } from '../../js/index.js';
import { nativeContinuation, repoRoot } from './helpers.mjs';

const execFileP = promisify(execFile);
const prompt = 'Once upon a time';
const TOKENS = 4;
let dir;
let model;
let expected;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-large-'));
  model = path.join(dir, 'tinyllama-f16.gguf');
  await execFileP(path.join(repoRoot, 'build/native/wasm-llm'), [
    'synth', '--shape', 'tinyllama-1.1b', '--type', 'f16', '--ctx', '64',
    '--vocab', path.resolve(repoRoot, '../shared/models/vocab/ggml-vocab-llama-spm.gguf'), '-o', model,
  ]);
  expect(fs.statSync(model).size).toBeGreaterThan(2 ** 31);
  expected = await nativeContinuation(prompt, ['-n', String(TOKENS), '--temp', '0'], model);
}, 120_000);

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

it('the wasm CLI generates the native text', async () => {
  const { stdout } = await execFileP(process.execPath, [
    path.join(repoRoot, 'js/node/cli.js'), 'generate', '-m', model, '-p', prompt, '-n', String(TOKENS), '--temp', '0',
  ], { maxBuffer: 1 << 20 });
  expect(stdout).toBe(`${prompt}${expected}\n`);
}, 120_000);

it('LLM.load generates the native text', async () => {
  const llm = await LLM.load(model, { threads: 2 });
  try {
    expect(llm.info.memory.weights).toBeGreaterThan(2 ** 31);
    expect(await llm.generate(prompt, { maxTokens: TOKENS, temperature: 0 })).toBe(expected);
  } finally {
    await llm.dispose();
  }
}, 120_000);
