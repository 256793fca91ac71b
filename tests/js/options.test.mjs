// Options are checked against what index.d.ts documents: every documented
// option is accepted (a call with all of them works), every other one is
// rejected with a TypeError that names it and, for a likely misspelling,
// the option meant.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LLM } from '../../js/index.js';
import {
  BENCH_OPTIONS, EMBED_OPTIONS, FORMAT_CHAT_OPTIONS, GENERATE_OPTIONS, LOAD_OPTIONS, RANK_OPTIONS, TOKENIZE_OPTIONS,
  TOOL_OPTIONS,
} from '../../js/option-names.js';
import { interfaceMembers } from './declarations.mjs';
import { modelPath } from './helpers.mjs';

let llm;
let tmpDir;

beforeAll(async () => {
  llm = await LLM.load(modelPath, { threads: 1 });
  tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-options-'));
});

afterAll(async () => {
  await llm?.dispose();
  fs.rmSync(tmpDir, { recursive: true, force: true });
});

// What a call rejects with (or throws).
async function failure(call) {
  try {
    await call();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

describe('the options each call accepts', () => {
  it('are the ones index.d.ts documents', () => {
    expect(LOAD_OPTIONS).toEqual(interfaceMembers('LoadOptions'));
    expect(GENERATE_OPTIONS).toEqual(interfaceMembers('GenerateOptions'));
    expect(TOKENIZE_OPTIONS).toEqual(interfaceMembers('TokenizeOptions'));
    expect(FORMAT_CHAT_OPTIONS).toEqual(interfaceMembers('FormatChatOptions'));
    expect(BENCH_OPTIONS).toEqual(interfaceMembers('BenchOptions'));
    expect(EMBED_OPTIONS).toEqual(interfaceMembers('EmbedOptions'));
    expect(RANK_OPTIONS).toEqual(interfaceMembers('RankOptions'));
    expect(TOOL_OPTIONS).toEqual(interfaceMembers('ToolOptions'));
  });

  it('LLM.load takes every documented option at once', async () => {
    // A llama2.c checkpoint: the one kind of model that takes a tokenizer file.
    const checkpoint = path.join(path.dirname(modelPath), 'llama2c', 'stories260K.bin');
    const progress = [];
    const options = {
      threads: 2, contextSize: 128, memoryLimit: 256 << 20,
      sha256: 'b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696', cache: false,
      relaxedSimd: false, cacheDir: tmpDir, modelsDir: tmpDir, size: fs.statSync(checkpoint).size,
      tokenizer: path.join(path.dirname(checkpoint), 'tok512.bin'),
      onProgress: (p) => progress.push(p.phase), signal: new AbortController().signal,
    };
    expect(Object.keys(options)).toEqual(interfaceMembers('LoadOptions'));
    const loaded = await LLM.load(checkpoint, options);
    try {
      expect(loaded.info).toMatchObject({ threads: 2, contextSize: 128, kernels: 'simd128' });
      expect(progress.at(-1)).toBe('done');
    } finally {
      await loaded.dispose();
    }
  });

  it('generate, tokenize, formatChat and bench take every documented option at once', async () => {
    const pieces = [];
    let stats;
    const generate = {
      maxTokens: 30, temperature: 0.5, topK: 20, topP: 0.9, minP: 0.02, repeatPenalty: 1.1, repeatLastN: 32,
      frequencyPenalty: 0.1, presencePenalty: 0.1, seed: 5, stop: ['zzz'], addSpecial: true, parseSpecial: false,
      grammar: 'root ::= [a-z ]+', cachePrompt: false, signal: new AbortController().signal,
      onToken: (p) => pieces.push(p), onStats: (s) => (stats = s),
    };
    // format and grammar exclude each other: format gets a call of its own.
    expect([...Object.keys(generate), 'format'].sort()).toEqual(interfaceMembers('GenerateOptions').sort());
    const text = await llm.generate('Once upon a time', generate);
    expect(pieces.join('')).toBe(text);
    expect(text).toMatch(/^[a-z ]+$/);
    expect(stats.generatedTokens).toBe(30);
    const digit = { type: 'json_schema', schema: { type: 'integer', minimum: 0, maximum: 9 } };
    const value = JSON.parse(await llm.generate('Once upon a time', { format: digit, maxTokens: 8 }));
    expect(Number.isInteger(value) && value >= 0 && value <= 9).toBe(true);

    const tokenize = { addSpecial: false, parseSpecial: true };
    expect(Object.keys(tokenize)).toEqual(interfaceMembers('TokenizeOptions'));
    expect((await llm.tokenize('Once', tokenize))[0]).not.toBe(1);  // no BOS
    const formatChat = { addGenerationPrompt: false, tools: [], toolChoice: 'none' };
    expect(Object.keys(formatChat)).toEqual(interfaceMembers('FormatChatOptions'));
    expect(llm.formatChat([{ role: 'user', content: 'Hi' }], formatChat)).toBe('<|im_start|>user\nHi<|im_end|>\n');
    const bench = { promptTokens: 8, generateTokens: 4 };
    expect(Object.keys(bench)).toEqual(interfaceMembers('BenchOptions'));
    expect(await llm.bench(bench)).toMatchObject({ promptTokens: 8, generatedTokens: 4 });
    const embed = { normalize: false, pooling: 'mean', signal: new AbortController().signal };
    expect(Object.keys(embed)).toEqual(interfaceMembers('EmbedOptions'));
    expect((await llm.embed('Once', embed)).length).toBe(llm.info.embeddingSize);
    const rank = { signal: new AbortController().signal };
    expect(Object.keys(rank)).toEqual(interfaceMembers('RankOptions'));
    // Accepted; stories260K has no classification head to rank with.
    await expect(llm.rank('Once', ['upon a time'], rank)).rejects.toMatchObject({ code: 'unsupported' });
  });
});

describe('an option no call documents', () => {
  it.each([
    ['LLM.load', 'load', (options) => LLM.load(modelPath, { threads: 1, ...options })],
    ['generate', 'generate', (options) => llm.generate('Once', options)],
    ['chat', 'generate', (options) => llm.chat([{ role: 'user', content: 'Hi' }], options)],
    ['stream', 'generate', async (options) => {
      for await (const piece of llm.stream('Once', options)) expect(piece).toBeUndefined();
    }],
    ['tokenize', 'tokenize', (options) => llm.tokenize('Once', options)],
    ['formatChat', 'formatChat', (options) => llm.formatChat([{ role: 'user', content: 'Hi' }], options)],
    ['bench', 'bench', (options) => llm.bench({ promptTokens: 4, generateTokens: 4, ...options })],
    ['embed', 'embed', (options) => llm.embed('Once', options)],
    ['rank', 'rank', (options) => llm.rank('Once', ['upon'], options)],
  ])('is a TypeError from %s that names it', async (_, kind, run) => {
    const error = await failure(() => run({ verbose: true }));
    expect(error).toBeInstanceOf(TypeError);
    expect(error.code).toBe('invalid_argument');
    expect(error.message).toBe(`unknown ${kind} option 'verbose'`);
  });

  it.each([
    ['generate', 'max_tokens', 'maxTokens'], ['generate', 'n_predict', 'maxTokens'], ['generate', 'temp', 'temperature'],
    ['generate', 'temprature', 'temperature'], ['generate', 'top_k', 'topK'], ['generate', 'TopP', 'topP'],
    ['generate', 'repetition_penalty', 'repeatPenalty'], ['generate', 'stops', 'stop'], ['generate', 'onTokens', 'onToken'],
    ['load', 'context_size', 'contextSize'], ['load', 'n_ctx', 'contextSize'], ['load', 'n_threads', 'threads'],
    ['load', 'onprogress', 'onProgress'], ['load', 'relaxedSIMD', 'relaxedSimd'],
  ])('%s: %s suggests %s', async (call, name, meant) => {
    const run = call === 'load' ? () => LLM.load(modelPath, { [name]: 1 }) : () => llm.generate('Once', { [name]: 1 });
    const error = await failure(run);
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toBe(`unknown ${call} option '${name}' (did you mean '${meant}'?)`);
  });

  it('suggests nothing for a name like none of the options, and options must be an object', async () => {
    expect((await failure(() => llm.generate('Once', { stream: true }))).message).toBe("unknown generate option 'stream'");
    const notObject = await failure(() => llm.generate('Once', 40));
    expect(notObject).toBeInstanceOf(TypeError);
    expect(notObject.message).toBe('generate options must be an object');
    expect((await failure(() => LLM.load(modelPath, 'fast'))).code).toBe('invalid_argument');
  });
});
