#!/usr/bin/env node
// `npx wasm-llm <command> ...`: the native CLI's subcommands and flags
// (generate, tokenize, info, quantize, bench, synth, logits, embed, convert,
// split, merge), run as wasm in Node (dist/wasm/wasm-llm-cli.*, or its relaxed-SIMD
// build wasm-llm-cli-relaxed.* where this Node runs it: Node 22 and later,
// same results, faster). -m also takes what LLM.load takes by name:
// a registry name (looked up in $WASM_LLM_MODELS first), an http(s) URL or
// 'hf:owner/repo/file.gguf'; those are downloaded into the cache folder first,
// with a progress bar. A URL of a split model's first file
// (NAME-00001-of-0000N.gguf) brings the others; --tokenizer may be a URL too.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runsRelaxedSimd } from '../../worker/relaxed-simd.js';
import { remoteUrl } from '../registry.js';
import { defaultCacheDir } from './cache.js';
import { downloadToCache } from './download.js';
import { logicalCores, resolveRegistryName } from './platform.js';
import { instantiateWasm } from './wasm-engine.js';

// The local file for a -m value: itself, or a registry model / download.
async function resolveModel(value) {
  const entry = resolveRegistryName(value);
  if (entry) return entry.local ?? download(entry.url, entry.sha256);
  const url = remoteUrl(value);
  if (!url) return value;
  return SPLIT_FIRST_FILE.test(new URL(url).pathname) ? downloadSplit(url) : download(url);
}

// gguf-split's name of a first file, NAME-00001-of-0000N.gguf (cpp/gguf/gguf_split.h).
const SPLIT_FIRST_FILE = /-00001-of-(\d{5})\.gguf$/;

// Downloads every file of the split model whose first file is at `url`
// and returns the first one's path in a folder where the files sit under
// their own names (links to the cached copies), as the CLI looks for them.
async function downloadSplit(url) {
  const first = new URL(url);
  const count = Number(SPLIT_FIRST_FILE.exec(first.pathname)[1]);
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-split-'));
  process.on('exit', () => fs.rmSync(folder, { recursive: true, force: true }));
  let firstLink;
  for (let i = 1; i <= count; i++) {
    const part = new URL(first);
    part.pathname = first.pathname.replace(SPLIT_FIRST_FILE, `-${String(i).padStart(5, '0')}-of-$1.gguf`);
    const link = path.join(folder, decodeURIComponent(part.pathname.split('/').pop()));
    fs.symlinkSync(await download(part.href), link);
    firstLink ??= link;
  }
  return firstLink;
}

async function download(url, sha256) {
  const bar = progressBar(url);
  try {
    return await downloadToCache(url, { cacheDir: defaultCacheDir(), sha256, onProgress: bar.update });
  } finally {
    bar.end();
  }
}

// Progress on stderr: a redrawn bar on a terminal, a line at the end otherwise.
function progressBar(url) {
  const started = Date.now();
  let last = null;
  const mib = (b) => (b / 1048576).toFixed(1);
  const line = ({ phase, loaded, total }) => {
    if (phase === 'cache') return `${url}: from the cache (${mib(loaded)} MiB)`;
    const rate = loaded / 1048576 / Math.max((Date.now() - started) / 1000, 1e-3);
    const fraction = total ? loaded / total : 0;
    const bar = total ? `[${'#'.repeat(Math.round(fraction * 30)).padEnd(30, '-')}] ${(fraction * 100).toFixed(0)}% ` : '';
    return `downloading ${path.basename(new URL(url).pathname)} ${bar}${mib(loaded)}${total ? `/${mib(total)}` : ''} MiB ` +
      `${rate.toFixed(1)} MiB/s`;
  };
  return {
    update(progress) {
      last = progress;
      if (process.stderr.isTTY) process.stderr.write(`\r${line(progress)}\x1b[K`);
    },
    end() {
      if (last) process.stderr.write(process.stderr.isTTY ? '\n' : `${line(last)}\n`);
    },
  };
}

// The value after the first of `flags` in args, and its index.
function flagValue(args, flags) {
  const i = args.findIndex((a) => flags.includes(a));
  return i >= 0 && i + 1 < args.length ? { index: i + 1, value: args[i + 1] } : null;
}

async function main() {
  const args = process.argv.slice(2);
  const model = flagValue(args, ['-m', '--model']);
  const tokenizer = flagValue(args, ['--tokenizer']);
  try {
    if (model) args[model.index] = await resolveModel(model.value);
    const tokenizerUrl = tokenizer && remoteUrl(tokenizer.value);
    if (tokenizerUrl) args[tokenizer.index] = await download(tokenizerUrl);
  } catch (error) {
    process.stderr.write(`error: ${error.message}\n`);
    process.exit(1);
  }
  // The pthread pool must hold every thread the engine starts (more would hang).
  const threads = Number(flagValue(args, ['-t', '--threads'])?.value);
  const nThreads = Math.max(Number.isInteger(threads) && threads > 0 ? threads : 0, Math.min(logicalCores(), 8), 1);
  // main() runs on instantiation and exits the process with its status.
  await instantiateWasm(runsRelaxedSimd() ? 'cli-relaxed' : 'cli', { arguments: args, thisProgram: 'wasm-llm', nThreads });
}

main();
