// Saved states (llm.saveState() / loadState(); the CLI's --prompt-cache FILE)
// in the wasm build in Node. After the same prompt the state's bytes are the
// native CLI's, byte for byte; a state saved natively continues in wasm, and
// one saved in wasm continues natively, with the text of a run that reuses
// nothing, on stories260K and on the architectures with a sliding-window
// ring (gemma3) and a convolution state (lfm2). The CLI run as wasm in Node
// writes the same file. Bytes come as a Uint8Array, an ArrayBuffer, a view
// into a larger buffer or a Blob; anything that is not a state of this model
// fitting its context is refused with code 'bad_state', and the model then
// generates as from an empty cache.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LLM } from '../../js/index.js';
import { architectureModel, architectures } from '../reference/architectures.mjs';
import { runCli } from '../reference/reference.mjs';
import { modelPath, nativeContinuation, repoRoot, syntheticModel } from './helpers.mjs';

const STORY = 'Once upon a time, there was a little girl named Lily. She loved to play in the park with her dog. ';
const MORE = ' Then the sun came out and';
const SEEDED = { js: { maxTokens: 24, temperature: 0.8, seed: 3 }, cli: ['-n', '24', '--temp', '0.8', '--seed', '3'] };
let dir;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-state-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

// The native CLI's state after `prompt` (the file --prompt-cache writes).
async function nativeState(model, prompt, name) {
  const file = path.join(dir, `${name}.native`);
  await runCli(['generate', '-m', model, '-p', prompt, '-n', '0', '--prompt-cache', file]);
  return fs.readFileSync(file);
}

const MODELS = [
  { name: 'stories260K', path: async () => modelPath, prompt: STORY },
  // Past gemma3's ring (a window of 32 + a batch) and lfm2's first convolution checkpoint.
  ...['gemma3', 'lfm2'].map((arch) => ({
    name: `${arch}-q4_0`,
    path: () => architectureModel(architectures.find((r) => r.arch === arch), 'q4_0'),
    prompt: STORY.repeat(4),
  })),
];

describe.each(MODELS)('$name: a state goes between the native build and wasm', ({ name, path: modelOf, prompt }) => {
  let model;
  let native;
  beforeAll(async () => {
    model = await modelOf();
    native = await nativeState(model, prompt, name);
  });

  it('the same bytes after the same prompt; each continues the other with the native text', async () => {
    const expected = await nativeContinuation(prompt + MORE, SEEDED.cli, model);
    const llm = await LLM.load(model, { threads: 2 });
    try {
      await llm.generate(prompt, { maxTokens: 0 });
      const ours = await llm.saveState();
      expect(ours).toBeInstanceOf(Uint8Array);
      expect(ours.byteOffset).toBe(0);
      expect(ours.byteLength).toBe(ours.buffer.byteLength);
      expect(Buffer.from(ours).equals(native)).toBe(true);

      // Native, continuing from the state saved in wasm.
      const file = path.join(dir, `${name}.wasm`);
      fs.writeFileSync(file, ours);
      const { stdout, stderr } = await runCli(['generate', '-m', model, '-p', prompt + MORE, ...SEEDED.cli,
        '--prompt-cache', file]);
      expect(stdout).toBe(`${prompt}${MORE}${expected}\n`);
      const [, promptTokens, cached] = /prompt (\d+) tokens \((\d+) cached\)/.exec(stderr).map(Number);
      expect(cached).toBeGreaterThan(promptTokens - 12);

      // Wasm, continuing from the native state, in a model that held something else.
      await llm.generate('The cat sat on the mat.', { maxTokens: 4 });
      await llm.loadState(native);
      let stats;
      expect(await llm.generate(prompt + MORE, { ...SEEDED.js, onStats: (s) => (stats = s) })).toBe(expected);
      expect(stats.cachedTokens).toBe(cached);
    } finally {
      await llm.dispose();
    }
  });
});

describe('the bytes loadState takes', () => {
  let llm;
  let state;
  let expected;
  beforeAll(async () => {
    llm = await LLM.load(modelPath, { threads: 1 });
    state = await nativeState(modelPath, STORY, 'stories-inputs');
    expected = await nativeContinuation(STORY + MORE, SEEDED.cli);
  });
  afterAll(() => llm?.dispose());

  it.each([
    ['a Uint8Array', () => new Uint8Array(state)],
    ['an ArrayBuffer', () => new Uint8Array(state).buffer],
    ['a view into a larger buffer', () => {
      const larger = new Uint8Array(state.length + 100);
      larger.set(state, 50);
      return new DataView(larger.buffer, 50, state.length);
    }],
    ['a Blob', () => new Blob([state])],
  ])('%s', async (_, bytes) => {
    await llm.generate('Something else entirely.', { maxTokens: 2 });
    await llm.loadState(bytes());
    let stats;
    expect(await llm.generate(STORY + MORE, { ...SEEDED.js, onStats: (s) => (stats = s) })).toBe(expected);
    expect(stats.cachedTokens).toBeGreaterThan(0);
  });

  it('the wasm CLI in Node writes and reuses the native file', async () => {
    const file = path.join(dir, 'node-cli.state');
    const nodeCli = path.join(repoRoot, 'js/node/cli.js');
    const args = ['generate', '-m', modelPath, '-p', STORY, '-n', '0', '--prompt-cache', file];
    await promisify(execFile)(process.execPath, [nodeCli, ...args]);
    expect(fs.readFileSync(file).equals(state)).toBe(true);
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [nodeCli, 'generate', '-m', modelPath,
      '-p', STORY + MORE, ...SEEDED.cli, '--prompt-cache', file]);
    expect(stdout).toBe(`${STORY}${MORE}${expected}\n`);
    expect(stderr).toMatch(/\((\d+) cached\)/);
  });
});

describe('what loadState refuses', () => {
  let state;
  beforeAll(async () => {
    state = await nativeState(modelPath, STORY, 'stories-refusals');
  });

  // Loads `bytes` into a model (`options` for LLM.load) that held 'The cat'
  // and more: the error, and how many tokens of the next prompt came from the
  // cache (a state refused by its header leaves the cache as it was; one
  // refused in its body, empty); the next text must be the native one.
  async function refused(bytes, { model = modelPath, options = {} } = {}) {
    const llm = await LLM.load(model, { threads: 1, ...options });
    try {
      await llm.generate('The cat', { maxTokens: 2 });
      const error = await llm.loadState(bytes).then(() => null, (e) => e);
      let stats;
      const text = await llm.generate('The cat ran', { maxTokens: 8, temperature: 0, onStats: (s) => (stats = s) });
      expect(text).toBe(await nativeContinuation('The cat ran', ['-n', '8', '--temp', '0'], model));
      return { error, cached: stats.cachedTokens };
    } finally {
      await llm.dispose();
    }
  }

  // kept: whether 'The cat' stays in the cache (the state did not touch it).
  it.each([
    ['truncated', () => state.subarray(0, state.length - 100),
      /the state is \d+ bytes but its header describes \d+ \(it is truncated\)/, true],
    ['damaged', () => {
      const damaged = Buffer.from(state);
      damaged[damaged.length - 200] ^= 4;
      return damaged;
    }, /the state is damaged: its checksum is/, false],
    ['not a state at all', () => new TextEncoder().encode('hello, this is not a saved state of any model at all'),
      /not a saved state/, true],
    ['empty', () => new Uint8Array(0), /the state is truncated/, true],
  ])('%s bytes', async (_, bytes, message, kept) => {
    const { error, cached } = await refused(bytes());
    expect(error).toMatchObject({ name: 'GenerationError', code: 'bad_state' });
    expect(error.message).toMatch(message);
    expect(cached > 0).toBe(kept);
  });

  it("another model's state", async () => {
    const { error } = await refused(state, { model: await syntheticModel('q8_0') });
    expect(error).toMatchObject({ code: 'bad_state' });
    expect(error.message).toMatch(/the state was saved from another model \(model id [0-9a-f]{16}; this model's is/);
  });

  it('a state longer than the context', async () => {
    const { error } = await refused(state, { options: { contextSize: 16 } });
    expect(error).toMatchObject({ code: 'bad_state' });
    expect(error.message).toMatch(/the state holds \d+ tokens but the context holds 16/);
  });

  it('what is not bytes, as a TypeError', async () => {
    const llm = await LLM.load(modelPath, { threads: 1 });
    try {
      for (const value of ['state', [1, 2, 3], null, undefined]) {
        await expect(llm.loadState(value)).rejects.toMatchObject({ name: 'TypeError', code: 'invalid_argument' });
      }
      await expect(llm.saveState({ path: 'x' })).rejects.toThrow(/unknown saveState option 'path'/);
    } finally {
      await llm.dispose();
    }
  });
});
