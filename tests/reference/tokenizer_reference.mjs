// Shared by tokenizer.test.mjs and gen_tokenizer_golden.mjs: where the vocab
// files are, which ones to test, and how to derive variant vocab files that
// exercise pre-tokenizers and flags no shipped file uses.
import fs from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const sharedDir = process.env.WASM_LLM_SHARED ?? path.join(repoRoot, '..', 'shared');
export const modelsDir = path.join(sharedDir, 'models');
export const cliPath = process.env.WASM_LLM_BIN ?? path.join(repoRoot, 'build', 'native', 'wasm-llm');
export const corpusPath = path.join(repoRoot, 'tests', 'reference', 'tokenizer_corpus.json');
export const goldenDir = path.join(repoRoot, 'tests', 'reference', 'golden');

// Every llama, gpt2, bert (WordPiece) and t5 (Unigram) vocab in shared/models.
export const vocabFiles = [
  'vocab/ggml-vocab-aquila.gguf',
  'vocab/ggml-vocab-baichuan.gguf',
  'vocab/ggml-vocab-bert-bge.gguf',
  'vocab/ggml-vocab-command-r.gguf',
  'vocab/ggml-vocab-deepseek-coder.gguf',
  'vocab/ggml-vocab-deepseek-llm.gguf',
  'vocab/ggml-vocab-falcon.gguf',
  'vocab/ggml-vocab-gemma-4.gguf',
  'vocab/ggml-vocab-gpt-2.gguf',
  'vocab/ggml-vocab-gpt-neox.gguf',
  'vocab/ggml-vocab-llama-bpe.gguf',
  'vocab/ggml-vocab-llama-spm.gguf',
  'vocab/ggml-vocab-mpt.gguf',
  'vocab/ggml-vocab-nomic-bert-moe.gguf',
  'vocab/ggml-vocab-phi-3.gguf',
  'vocab/ggml-vocab-qwen2.gguf',
  'vocab/ggml-vocab-qwen35.gguf',
  'vocab/ggml-vocab-refact.gguf',
  'vocab/ggml-vocab-starcoder.gguf',
  'stories260K.gguf',
];

// Variants: a shipped vocab with metadata changed, so that llama.cpp and we
// must agree on pre-tokenizers (and SPM flags) for which no file exists here.
export const variants = [
  ...['llama-bpe', 'qwen2', 'qwen35', 'dbrx', 'chatglm-bpe', 'bloom', 'viking', 'smollm', 'default'].map((pre) => ({
    name: `gpt-2+pre=${pre}`, base: 'vocab/ggml-vocab-gpt-2.gguf', changes: {'tokenizer.ggml.pre': pre},
  })),
  {name: 'deepseek-llm+pre=llama3', base: 'vocab/ggml-vocab-deepseek-llm.gguf', changes: {'tokenizer.ggml.pre': 'llama3'}},
  {name: 'deepseek-llm+pre=qwen2', base: 'vocab/ggml-vocab-deepseek-llm.gguf', changes: {'tokenizer.ggml.pre': 'qwen2'}},
  {
    name: 'llama-spm+no-space-prefix+eos', base: 'vocab/ggml-vocab-llama-spm.gguf',
    changes: {'tokenizer.ggml.add_space_prefix': false, 'tokenizer.ggml.add_eos_token': true},
  },
];

export function readCorpus() {
  return JSON.parse(fs.readFileSync(corpusPath, 'utf8')).strings;
}

const SCALAR_SIZE = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8};

// Returns a copy of a vocab-only GGUF (no tensors) with keys replaced or
// added: string, boolean or (u32) number values; null removes a key.
export function patchGguf(buf, changes) {
  let o = 0;
  const u32 = () => { const v = buf.readUInt32LE(o); o += 4; return v; };
  const u64 = () => { const v = Number(buf.readBigUInt64LE(o)); o += 8; return v; };
  const skipString = () => { const n = u64(); o += n; };
  const skipValue = (type) => {
    if (type === 8) return skipString();
    if (type === 9) {
      const elemType = u32();
      const n = u64();
      if (elemType === 8) for (let i = 0; i < n; i++) skipString();
      else o += SCALAR_SIZE[elemType] * n;
      return;
    }
    o += SCALAR_SIZE[type];
  };
  if (buf.toString('latin1', 0, 4) !== 'GGUF') throw new Error('not a GGUF file');
  o = 4;
  const version = u32();
  if (u64() !== 0) throw new Error('patchGguf handles vocab-only files (0 tensors)');
  const nKv = u64();
  const encode = (key, value) => {
    const keyBytes = Buffer.from(key, 'utf8');
    const head = Buffer.alloc(12);
    head.writeBigUInt64LE(BigInt(keyBytes.length));
    if (typeof value === 'string') {
      const v = Buffer.from(value, 'utf8');
      const len = Buffer.alloc(8);
      len.writeBigUInt64LE(BigInt(v.length));
      const type = Buffer.alloc(4);
      type.writeUInt32LE(8);
      return Buffer.concat([head.subarray(0, 8), keyBytes, type, len, v]);
    }
    const type = Buffer.alloc(4);
    if (typeof value === 'boolean') {
      type.writeUInt32LE(7);
      return Buffer.concat([head.subarray(0, 8), keyBytes, type, Buffer.from([value ? 1 : 0])]);
    }
    type.writeUInt32LE(4);
    const v = Buffer.alloc(4);
    v.writeUInt32LE(value);
    return Buffer.concat([head.subarray(0, 8), keyBytes, type, v]);
  };
  const kvs = [];
  const seen = new Set();
  for (let i = 0; i < nKv; i++) {
    const start = o;
    const keyLen = u64();
    const key = buf.toString('utf8', o, o + keyLen);
    o += keyLen;
    skipValue(u32());
    if (key in changes) {
      seen.add(key);
      if (changes[key] !== null) kvs.push(encode(key, changes[key]));
    } else {
      kvs.push(buf.subarray(start, o));
    }
  }
  for (const [key, value] of Object.entries(changes)) {
    if (!seen.has(key) && value !== null) kvs.push(encode(key, value));
  }
  const header = Buffer.alloc(24);
  header.write('GGUF', 0, 'latin1');
  header.writeUInt32LE(version, 4);
  header.writeBigUInt64LE(0n, 8);
  header.writeBigUInt64LE(BigInt(kvs.length), 16);
  return Buffer.concat([header, ...kvs]);
}
