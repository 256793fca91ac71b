// `npm run bench [-- --quick]`: prefill and decode speed, load time and peak
// memory of our engine beside llama.cpp's, on synthetic models of real shapes
// (made with our own `synth` and `quantize`, cached in build/bench-models),
// plus the machine's memory read bandwidth. Prints one JSON line per
// measurement, then a markdown table with the ratios.
import { execFileSync, execFile } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(repo, 'build/native/wasm-llm');
const vocabDir = resolve(repo, '../shared/models/vocab');
const cacheDir = join(repo, 'build/bench-models');

const quick = process.argv.includes('--quick');
// Real shapes with a vocabulary of the right size: llama-spm has TinyLlama's
// and stories15M's 32000 tokens, gpt-2's 50257 are close to SmolLM2's 49152.
// ctx: the shape's training context (a prompt must fit with the decoded tokens).
const stories15M = { shape: 'stories15M', vocab: 'ggml-vocab-llama-spm.gguf', ctx: 256 };
const smollm2 = { shape: 'smollm2-135m', vocab: 'ggml-vocab-gpt-2.gguf', ctx: 8192 };
const tinyllama = { shape: 'tinyllama-1.1b', vocab: 'ggml-vocab-llama-spm.gguf', ctx: 2048 };
const shapes = quick ? [stories15M, smollm2] : [stories15M, smollm2, tinyllama];
const types = quick ? ['q4_0'] : ['f16', 'q8_0', 'q4_0', 'q4_K_M'];
const promptLengths = quick ? [64] : [64, 512];
const decodeTokens = quick ? 32 : 128;
const threadCounts = quick ? [1] : [1, 2];

// The model file for (shape, type), generated once: synth writes f16, quantize
// converts it (as one would convert a real model).
async function modelFile({ shape, vocab }, type) {
  mkdirSync(cacheDir, { recursive: true });
  const path = join(cacheDir, `${shape}-${type}.gguf`);
  const fresh = (p) => existsSync(p) && statSync(p).mtimeMs > statSync(cli).mtimeMs;
  if (fresh(path)) return path;
  const f16 = join(cacheDir, `${shape}-f16.gguf`);
  if (!fresh(f16)) {
    console.error(`bench: writing ${f16}`);
    await execFileP(cli, ['synth', '--shape', shape, '--type', 'f16', '--vocab', join(vocabDir, vocab), '-o', f16]);
  }
  if (type !== 'f16') {
    console.error(`bench: writing ${path}`);
    await execFileP(cli, ['quantize', f16, path, type]);
  }
  return path;
}

function lastJsonLine(stdout) {
  const lines = stdout.trim().split('\n').filter((l) => l.startsWith('{'));
  return JSON.parse(lines[lines.length - 1]);
}

// Each engine: a name and how to measure one (model, prompt, decode, threads).
const engines = [
  {
    name: 'ours native',
    run: async (model, p, n, t) =>
      lastJsonLine((await execFileP(cli, ['bench', '-m', model, '-p', String(p), '-n', String(n), '-t', String(t)])).stdout),
  },
  {
    name: 'llama.cpp native',
    run: async (model, p, n, t) =>
      lastJsonLine((await execFileP(process.execPath, [join(repo, 'bench/llama-cpp-run.mjs'), model, String(p), String(n),
        String(t)], { maxBuffer: 64 << 20 })).stdout),
  },
];

const started = Date.now();
if (!existsSync(cli)) execFileSync('bash', [join(repo, 'tools/build-native.sh')], { stdio: 'inherit' });

const bandwidth = {};
for (const t of threadCounts) {
  const smallest = await modelFile(shapes[0], types[0]);
  const r = lastJsonLine(execFileSync(cli, ['bench', '-m', smallest, '-p', '1', '-n', '1', '-t', String(t), '--bandwidth'])
    .toString());
  bandwidth[t] = r.read_gb_s;
  console.log(JSON.stringify({ measurement: 'memory_read_bandwidth', threads: t, gb_s: r.read_gb_s }));
}

const rows = [];
for (const shape of shapes) {
  for (const type of types) {
    const model = await modelFile(shape, type);
    const sizeMib = statSync(model).size / 1048576;
    for (const t of threadCounts) {
      for (const p of promptLengths) {
        if (p + decodeTokens > shape.ctx) continue;  // e.g. stories15M's 256-token context
        const results = {};
        for (const engine of engines) {
          results[engine.name] = await engine.run(model, p, decodeTokens, t);
          console.log(JSON.stringify({ shape: shape.shape, type, prompt: p, ...results[engine.name], engine: engine.name }));
        }
        rows.push({ shape: shape.shape, type, sizeMib, threads: t, prompt: p, results });
      }
    }
  }
}

const fmt = (v, d = 1) => (v === undefined || Number.isNaN(v) ? '-' : v.toFixed(d));
const ours = (r) => r.results['ours native'];
const ref = (r) => r.results['llama.cpp native'];
const lines = [
  `memory read bandwidth: ${threadCounts.map((t) => `${bandwidth[t]} GB/s with ${t} thread${t > 1 ? 's' : ''}`).join(', ')}`,
  '',
  '| model | type | MiB | threads | prompt | prefill tok/s ours / llama.cpp | ratio | decode tok/s ours / llama.cpp | ratio | ' +
    'decode GB/s ours (% of bandwidth) | load s ours / llama.cpp | peak MiB ours / llama.cpp |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|',
];
for (const r of rows) {
  const o = ours(r), l = ref(r);
  const decodeGbs = (o.decode_tok_s * r.sizeMib * 1048576) / 1e9;
  lines.push(`| ${r.shape} | ${r.type} | ${fmt(r.sizeMib, 0)} | ${r.threads} | ${r.prompt} | ` +
    `${fmt(o.prefill_tok_s)} / ${fmt(l.prefill_tok_s)} | ${fmt(o.prefill_tok_s / l.prefill_tok_s, 2)} | ` +
    `${fmt(o.decode_tok_s)} / ${fmt(l.decode_tok_s)} | ${fmt(o.decode_tok_s / l.decode_tok_s, 2)} | ` +
    `${fmt(decodeGbs, 2)} (${fmt((100 * decodeGbs) / bandwidth[r.threads], 0)}%) | ` +
    `${fmt(o.load_s, 2)} / ${fmt(l.load_s, 2)} | ${fmt(o.peak_rss_mib, 0)} / ${fmt(l.peak_rss_mib, 0)} |`);
}
lines.push('', `(${((Date.now() - started) / 1000).toFixed(0)} s; decode GB/s = model file size x decode tok/s)`);
console.log(lines.join('\n'));
