// The benchmarks' models: synthetic weights of real shapes, written by our own
// `synth` (f16) and `quantize` (as one would convert a real model), cached in
// build/bench-models and written again when the CLI is newer.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const cli = join(repo, 'build/native/wasm-llm');
const vocabDir = resolve(repo, '../shared/models/vocab');
const cacheDir = join(repo, 'build/bench-models');

// The model file of `shape` (a `synth --shape` name) with the tokenizer of
// `vocab` (a file in ../shared/models/vocab), in tensor type `type`. Each
// file is written under another name and renamed when complete, so a bench
// stopped halfway leaves no truncated model that the next one takes as fresh.
export async function benchModel({ shape, vocab }, type) {
  mkdirSync(cacheDir, { recursive: true });
  const path = join(cacheDir, `${shape}-${type}.gguf`);
  const fresh = (p) => existsSync(p) && statSync(p).mtimeMs > statSync(cli).mtimeMs;
  if (fresh(path)) return path;
  const f16 = join(cacheDir, `${shape}-f16.gguf`);
  if (!fresh(f16)) {
    console.error(`bench: writing ${f16}`);
    await execFileP(cli, ['synth', '--shape', shape, '--type', 'f16', '--vocab', join(vocabDir, vocab), '-o', `${f16}.partial`]);
    renameSync(`${f16}.partial`, f16);
  }
  if (type !== 'f16') {
    console.error(`bench: writing ${path}`);
    await execFileP(cli, ['quantize', f16, `${path}.partial`, type]);
    renameSync(`${path}.partial`, path);
  }
  return path;
}
