// Options are checked against their one declaration (js/option-table.js):
// index.d.ts, the engine's bindings, the native CLI and docs/api.md agree
// with it; every declared option is accepted (a call with all of them
// works), every other one is rejected with a TypeError that names it and,
// for a likely misspelling, the option meant.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LLM } from '../../js/index.js';
import {
  BENCH_OPTIONS, EMBED_OPTIONS, FORMAT_CHAT_OPTIONS, GENERATE_OPTIONS, LOAD_OPTIONS, RANK_OPTIONS, TOKENIZE_OPTIONS,
  TOOL_OPTIONS,
} from '../../js/option-names.js';
import { INT_MAX, INT_MIN, OPTION_TABLE } from '../../js/option-table.js';
import ts from 'typescript';
import { interfaceMembers } from './declarations.mjs';
import { modelPath, repoRoot } from './helpers.mjs';

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

const readSource = (file) => fs.readFileSync(path.join(repoRoot, file), 'utf8');

// {member: its type's text} of index.d.ts's `interface name`, in order.
function interfaceMemberTypes(name) {
  const file = ts.createSourceFile('index.d.ts', readSource('js/index.d.ts'), ts.ScriptTarget.Latest, true);
  const found = file.statements.find((s) => ts.isInterfaceDeclaration(s) && s.name.text === name);
  if (!found) throw new Error(`index.d.ts declares no interface ${name}`);
  return Object.fromEntries(found.members.map((m) => [m.name.text, m.type.getText(file)]));
}
const tableOptions = () => Object.entries(OPTION_TABLE).flatMap(([call, options]) => options.map((o) => ({ call, ...o })));

// The interface of index.d.ts that declares each call's options.
const INTERFACES = {
  load: 'LoadOptions', generate: 'GenerateOptions', tools: 'ToolOptions', tokenize: 'TokenizeOptions',
  formatChat: 'FormatChatOptions', bench: 'BenchOptions', embed: 'EmbedOptions', rank: 'RankOptions',
  state: 'StateOptions', session: 'SessionOptions',
};

// Whether a TypeScript type (index.d.ts's text for it) is one the table's type allows.
function typeAgrees(option, tsType) {
  const union = tsType.split('|').map((t) => t.trim()).sort();
  switch (option.type) {
    case 'integer':
    case 'number': return tsType === 'number';
    case 'boolean': return tsType === 'boolean';
    case 'string': return tsType === 'string';
    case 'strings': return union.length === 2 && union.includes('string') && union.some((t) => /^(readonly )?string\[\]$/.test(t));
    case 'function': return /^\(.*\) => \w+$/.test(tsType);
    case 'signal': return tsType === 'AbortSignal';
    case 'enum': return JSON.stringify(union) === JSON.stringify(option.values.map((v) => `'${v}'`).sort());
    case 'object': return !['number', 'boolean', 'string'].includes(tsType);
    default: return false;
  }
}

// The value of a C++ range bound as bindings.cpp and the CLI write them.
const PENALTY_SHIFT = Number(/kMaxPenaltyLastN = 1 << (\d+);/.exec(readSource('cpp/sampler/sampler.h'))[1]);
const CPP_CONSTANTS = {
  INT32_MAX: INT_MAX, INT32_MIN: INT_MIN, kIntMax: INT_MAX, kIntMin: INT_MIN, kMaxSafeInteger: Number.MAX_SAFE_INTEGER,
  kMaxSeed: Number.MAX_SAFE_INTEGER, 'Sampler::kMaxPenaltyLastN': 2 ** PENALTY_SHIFT,
};
function cppValue(expression) {
  const text = expression.trim();
  if (text in CPP_CONSTANTS) return CPP_CONSTANTS[text];
  if (/^-?\d+$/.test(text)) return Number(text);
  if (text === '(int64_t{1} << 53) - 1') return Number.MAX_SAFE_INTEGER;
  throw new Error(`a C++ bound the test cannot read: ${text}`);
}

// A docs/api.md range as the page writes it: 1 to 256, 0 to 2³¹−1, −2³¹ to 2³¹−1.
function rangeText([min, max]) {
  const superscript = (n) => String(n).replace(/\d/g, (d) => '⁰¹²³⁴⁵⁶⁷⁸⁹'[d]);
  const number = (n) => {
    const sign = n < 0 ? '−' : '';
    const size = Math.abs(n);
    for (let k = 10; k <= 53; k += 1) {
      if (size === 2 ** k) return `${sign}2${superscript(k)}`;
      if (size === 2 ** k - 1) return `${sign}2${superscript(k)}−1`;
    }
    return `${sign}${size}`;
  };
  return `${number(min)} to ${number(max)}`;
}

// The docs/api.md section that documents each call's options, as the lines
// from its heading to the next heading of its level or above.
const DOC_SECTIONS = {
  load: '### Load options', generate: '### Generation options', tools: '## Tool calls', formatChat: '## Generating',
  tokenize: '### Tokens, benchmark, dispose', bench: '### Tokens, benchmark, dispose', embed: '## Embeddings and reranking',
  rank: '## Embeddings and reranking', state: '## Saved states', session: '## Sessions and the KV cache',
};
function docSection(heading) {
  const lines = readSource('docs/api.md').split('\n');
  const start = lines.indexOf(heading);
  if (start < 0) throw new Error(`docs/api.md has no heading ${heading}`);
  const level = heading.indexOf(' ');
  const end = lines.findIndex((line, i) => i > start && /^#+ /.test(line) && line.indexOf(' ') <= level);
  return lines.slice(start + 1, end < 0 ? undefined : end);
}
// The section's table rows and list items (with their continuation lines) and paragraphs.
function docBlocks(lines) {
  const blocks = [];
  for (const line of lines) {
    if (line.trim() === '' || line.startsWith('|') || /^\s*- /.test(line) || blocks.length === 0) blocks.push(line);
    else blocks[blocks.length - 1] += `\n${line}`;
  }
  return blocks;
}

describe('the option table', () => {
  it('has each call\'s options: index.d.ts declares them with types that agree', () => {
    for (const [call, options] of Object.entries(OPTION_TABLE)) {
      const declared = interfaceMemberTypes(INTERFACES[call]);
      expect(options.map((o) => o.name), call).toEqual(Object.keys(declared));
      for (const option of options) {
        expect(typeAgrees(option, declared[option.name]), `${call}.${option.name}: ${option.type} vs ${declared[option.name]}`).toBe(true);
      }
    }
    expect(Object.keys(OPTION_TABLE).sort()).toEqual(Object.keys(INTERFACES).sort());
  });

  it('gives ranges only to integers, and defaults within them', () => {
    for (const option of tableOptions()) {
      if (option.range) expect(option.type, option.name).toBe('integer');
      const [min, max] = option.range ?? [];
      if (option.range && option.default !== undefined) expect(option.default >= min && option.default <= max, option.name).toBe(true);
    }
  });

  it('names the keys the engine\'s bindings read, with the ranges they check', () => {
    const bindings = readSource('cpp/wasm/bindings.cpp');
    for (const option of tableOptions().filter((o) => o.engine)) {
      expect(bindings, `${option.call}.${option.name}`).toContain(`"${option.engine}"`);
      // integer_or(options, "key", fallback, lo, hi) or integer_in(value, lo, hi, "key").
      const key = option.engine;
      const read = new RegExp(`integer_or\\(\\w+, "${key}", [^,]+, ([^,]+), ([^)]+)\\)|integer_in\\(\\w+, ([^,]+), ([^,]+), "${key}"\\)`).exec(bindings);
      if (option.range) {
        expect(read, `bindings.cpp checks no range of ${key}`).not.toBeNull();
        const [lo, hi] = read[1] ? [read[1], read[2]] : [read[3], read[4]];
        expect([cppValue(lo), cppValue(hi)], `${option.call}.${option.name}`).toEqual(option.range);
      } else {
        expect(read, `bindings.cpp checks a range of ${key} the table has none for`).toBeNull();
      }
    }
  });

  it('names the native CLI\'s generate flags, with the same ranges', () => {
    const source = readSource('cpp/cli/cmd_generate.cpp');
    const known = /\.options = \{([^}]*)\}/.exec(source)[1];
    for (const option of OPTION_TABLE.generate.filter((o) => o.cli)) {
      for (const flag of option.cli) expect(known, option.name).toContain(`"${flag}"`);
      if (!option.range) continue;
      // const int64_t var, args.get_int({flags}, ...) and then: if (var < lo || var > hi)
      const flags = option.cli.map((f) => `"${f}"`).join(', ');
      const variable = new RegExp(`const int64_t (\\w+), args\\.get_int\\(\\{${flags}\\}`).exec(source)?.[1];
      expect(variable, `the CLI reads ${flags} as an integer`).toBeDefined();
      const check = new RegExp(`if \\(${variable} < ([^|]+) \\|\\| ${variable} > ([^)]+)\\)`).exec(source);
      expect(check, `the CLI checks the range of ${flags}`).not.toBeNull();
      expect([cppValue(check[1]), cppValue(check[2])], option.name).toEqual(option.range);
    }
  });

  it('is what docs/api.md documents: each option in its call\'s section, with its range', () => {
    for (const option of tableOptions()) {
      const blocks = docBlocks(docSection(DOC_SECTIONS[option.call]));
      const named = blocks.filter((b) => new RegExp(`\`[^\`]*\\b${option.name}\\b[^\`]*\``).test(b));
      expect(named.length, `docs/api.md's ${DOC_SECTIONS[option.call]} names no \`${option.name}\``).toBeGreaterThan(0);
      if (option.range) {
        expect(named.some((b) => b.includes(rangeText(option.range))), `${option.name}: ${rangeText(option.range)}`).toBe(true);
      }
    }
  });
});

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
