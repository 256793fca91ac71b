// Embeddings per second: ours native (the CLI's `embed`), as wasm in Node
// and in headless Chromium, beside llama.cpp native (node-llama-cpp's
// LlamaEmbeddingContext), on a synthetic bge-small (384x12, BERT's 30522
// WordPiece tokens) in f16 and q8_0, for texts of 32 and 256 tokens. Ours
// embeds all the texts in one call (packing those that fit into a pass);
// node-llama-cpp's API embeds one text per call. Prints one JSON line per
// measurement, then a markdown table of texts/s and the ratio to llama.cpp.
// `npm run bench` runs it after bench/run.mjs; alone:
//   node bench/embeddings.mjs [--quick] [--node PATH] [--engines native,node,chromium,llama.cpp]
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { embedTexts } from './embedding-workload.js';

const execFileP = promisify(execFile);
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(repo, 'build/native/wasm-llm');
const cacheDir = join(repo, 'build/bench-models');
const vocab = resolve(repo, '../shared/models/vocab/ggml-vocab-bert-bge.gguf');
const TIMEOUT_MS = 15 * 60 * 1000;

export async function embeddingBench({ quick = false, node = process.execPath, only } = {}) {
  const types = quick ? ['q8_0'] : ['f16', 'q8_0'];
  const threadCounts = quick ? [1] : [1, 2];
  // Enough texts for a second or more natively; 256-token texts fill half a pass each.
  const cases = [{ tokens: 32, count: quick ? 64 : 256 }, { tokens: 256, count: quick ? 16 : 64 }];
  const engines = [
    { key: 'native', name: 'ours native', run: native },
    { key: 'node', name: 'ours wasm (Node)', run: (m, c, t) => runner(node, 'ours-node', m, c, t) },
    { key: 'chromium', name: 'ours wasm (Chromium)', run: (m, c, t) => runner(process.execPath, 'ours-chromium', m, c, t) },
    { key: 'llama.cpp', name: 'llama.cpp native', run: (m, c, t) => runner(node, 'llama.cpp', m, c, t) },
  ].filter((e) => !only || only.includes(e.key));
  const rows = [];
  for (const type of types) {
    const model = await modelFile(type);
    for (const threads of threadCounts) {
      for (const c of cases) {
        const results = {};
        for (const engine of engines) {
          try {
            results[engine.name] = await engine.run(model, c, threads);
          } catch (error) {
            results[engine.name] = { error: String(error.message).split('\n')[0] };
          }
          console.log(JSON.stringify({ measurement: 'embeddings', shape: 'bge-small', type, ...c, threads,
            ...results[engine.name], engine: engine.name }));
        }
        rows.push({ type, threads, ...c, results });
      }
    }
  }
  const names = engines.map((e) => e.name);
  const cell = (r, name) => {
    const v = r.results[name]?.texts_s;
    const ref = r.results['llama.cpp native']?.texts_s;
    if (v === undefined) return '-';
    return name === 'llama.cpp native' ? v.toFixed(1) : `${v.toFixed(1)} (${(v / ref).toFixed(2)}x)`;
  };
  const lines = [
    'Embeddings per second, bge-small shape (384x12), texts of 32 and 256 tokens (ratio to llama.cpp native)',
    '',
    `| type | threads | tokens | ${names.join(' | ')} |`,
    `|${'---|'.repeat(3 + names.length)}`,
    ...rows.map((r) => `| ${r.type} | ${r.threads} | ${r.tokens} | ${names.map((n) => cell(r, n)).join(' | ')} |`),
  ];
  const failures = rows.flatMap((r) => Object.entries(r.results).filter(([, v]) => v.error)
    .map(([e, v]) => `${e} on ${r.type}, ${r.threads} thread(s), ${r.tokens} tokens: ${v.error}`));
  if (failures.length) lines.push('', 'failed:', ...failures);
  console.log(lines.join('\n'));
}

// synth writes f16, quantize converts it (as one would convert a real model).
async function modelFile(type) {
  mkdirSync(cacheDir, { recursive: true });
  const path = join(cacheDir, `bge-small-${type}.gguf`);
  const fresh = (p) => existsSync(p) && statSync(p).mtimeMs > statSync(cli).mtimeMs;
  if (fresh(path)) return path;
  const f16 = join(cacheDir, 'bge-small-f16.gguf');
  if (!fresh(f16)) await execFileP(cli, ['synth', '--shape', 'bge-small', '--type', 'f16', '--vocab', vocab, '-o', f16]);
  if (type !== 'f16') await execFileP(cli, ['quantize', f16, path, type]);
  return path;
}

// The CLI prints "N texts in S s" to stderr, timing the embedding alone.
async function native(model, { tokens, count }, threads) {
  const file = join(cacheDir, `embed-texts-${tokens}-${count}.txt`);
  writeFileSync(file, embedTexts(tokens, count).join('\n'));
  const { stderr } = await execFileP(cli, ['embed', '-m', model, '--threads', String(threads), '--file', file],
    { maxBuffer: 256 << 20, timeout: TIMEOUT_MS });
  const seconds = Number(/texts in ([\d.]+) s/.exec(stderr)[1]);
  return { texts: count, seconds, texts_s: count / seconds };
}

async function runner(node, engine, model, { tokens, count }, threads) {
  try {
    const { stdout } = await execFileP(node, [join(repo, 'bench/embed-run.mjs'), engine, model, String(tokens),
      String(count), String(threads)], { maxBuffer: 16 << 20, timeout: TIMEOUT_MS });
    return JSON.parse(stdout.trim().split('\n').at(-1));
  } catch (error) {
    throw new Error(String(error.stderr ?? '').trim().split('\n').pop() || error.message);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const flag = (name) => {
    const i = process.argv.indexOf(name);
    return i < 0 ? undefined : process.argv[i + 1];
  };
  await embeddingBench({ quick: process.argv.includes('--quick'), node: flag('--node') && resolve(flag('--node')),
    only: flag('--engines')?.split(',') });
}
