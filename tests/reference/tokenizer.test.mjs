// Our tokenizer against llama.cpp (node-llama-cpp): every vocab file (the
// SentencePiece, byte-level BPE, WordPiece and Unigram ones) x every corpus
// string x parse_special off/on must give the same ids, and BOS/EOS must be
// added as llama.cpp adds them. The CLI tokenizes the whole corpus in
// one process per (file, mode) with `tokenize --jsonl`.
import {execFileSync} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from 'vitest';
import {cliPath, modelsDir, patchGguf, readCorpus, variants, vocabFiles} from './tokenizer_reference.mjs';

const corpus = readCorpus();
let llama;
let tmpDir;
let corpusFile;

beforeAll(async () => {
  if (!fs.existsSync(cliPath)) throw new Error(`${cliPath} not found: build the native CLI first`);
  const {getLlama, LlamaLogLevel} = await import('node-llama-cpp');
  // Vocab-only files make llama.cpp log a missing-tensor error: expected, so dropped.
  const expected = /missing tensor|failed to load model/;
  llama = await getLlama({
    gpu: false, build: 'never', logLevel: LlamaLogLevel.error,
    logger: (level, message) => { if (!expected.test(message)) console.error(`[llama.cpp] ${message}`); },
  });
  tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-tok-'));
  corpusFile = path.join(tmpDir, 'corpus.jsonl');
  fs.writeFileSync(corpusFile, corpus.map((s) => JSON.stringify(s)).join('\n') + '\n');
});

afterAll(() => {
  if (tmpDir) fs.rmSync(tmpDir, {recursive: true, force: true});
});

function cli(args) {
  return execFileSync(cliPath, ['tokenize', ...args], {encoding: 'utf8', maxBuffer: 1 << 28});
}

// Ids of every corpus string from one CLI run.
function cliCorpus(modelPath, special) {
  const args = ['-m', modelPath, '--no-bos', '--jsonl', '--file', corpusFile];
  if (special) args.push('--special');
  const lines = cli(args).trimEnd().split('\n');
  expect(lines.length).toBe(corpus.length);
  return lines.map((l) => JSON.parse(l));
}

// The first few differences, readable in the failure message.
function firstMismatches(modelPath) {
  return async () => {
    const model = await llama.loadModel({modelPath, vocabOnly: true});
    try {
      const mismatches = [];
      let compared = 0;
      for (const special of [false, true]) {
        const ours = cliCorpus(modelPath, special);
        corpus.forEach((text, i) => {
          const expected = Array.from(model.tokenize(text, special));
          compared++;
          if (JSON.stringify(ours[i]) !== JSON.stringify(expected) && mismatches.length < 5) {
            mismatches.push({index: i, text, special, expected, actual: ours[i]});
          }
        });
      }
      expect(compared).toBe(2 * corpus.length);
      expect(mismatches).toEqual([]);

      // add_special: BOS/EOS around the same ids, as the vocab's flags say
      // (WordPiece: always [CLS] and [SEP], as llama.cpp's tokenize adds them).
      const text = 'Hello world';
      const withSpecial = JSON.parse(cli(['-m', modelPath, '--file', writeText(text)]));
      const wpm = model.vocabularyType === 'wpm';
      const expected = [
        ...(model.tokens.shouldPrependBosToken || wpm ? [model.tokens.bos] : []),
        ...Array.from(model.tokenize(text, false)),
        ...(wpm ? [model.tokens.sep] : model.tokens.shouldAppendEosToken ? [model.tokens.eos] : []),
      ];
      expect(withSpecial).toEqual(expected);
    } finally {
      await model.dispose();
    }
  };
}

let textFileCounter = 0;
function writeText(text) {
  const file = path.join(tmpDir, `text-${textFileCounter++}.txt`);
  fs.writeFileSync(file, text);
  return file;
}

describe('tokenizer matches llama.cpp', () => {
  it('corpus is varied enough', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(60);
  });

  for (const file of vocabFiles) {
    it(path.basename(file), firstMismatches(path.join(modelsDir, file)));
  }

  for (const v of variants) {
    it(v.name, async () => {
      const out = path.join(tmpDir, `${v.name.replace(/[^\w.-]+/g, '_')}.gguf`);
      fs.writeFileSync(out, patchGguf(fs.readFileSync(path.join(modelsDir, v.base)), v.changes));
      await firstMismatches(out)();
    });
  }

  it('--file passes raw bytes and TEXT works as an argument', () => {
    const model = path.join(modelsDir, 'vocab/ggml-vocab-gpt-2.gguf');
    expect(JSON.parse(cli(['-m', model, '--no-bos', 'Hello world']))).toEqual([15496, 995]);
    // An invalid byte is U+FFFD for byte-level BPE, as in llama.cpp.
    const invalid = path.join(tmpDir, 'invalid.bin');
    fs.writeFileSync(invalid, Buffer.from([0x41, 0xff, 0x42]));
    const replaced = writeText('A\uFFFDB');
    expect(cli(['-m', model, '--no-bos', '--file', invalid])).toBe(cli(['-m', model, '--no-bos', '--file', replaced]));
  });
});
