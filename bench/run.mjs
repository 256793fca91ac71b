// `npm run bench [-- --quick]`: prefill and decode speed, load time and peak
// memory of our engine (native, and as wasm in Node) beside llama.cpp's
// native build, on synthetic models of real shapes (made with our own
// `synth` and `quantize`, cached in build/bench-models), plus the machine's
// memory read bandwidth. Prints one JSON line per measurement, then markdown
// tables with every engine's figures and its ratio to llama.cpp native.
import { execFile, execFileSync } from 'node:child_process';
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
const REFERENCE = 'llama.cpp native';

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

// `wasm-llm bench` arguments for one measurement.
const benchArgs = (model, p, n, t) => ['bench', '-m', model, '-p', String(p), '-n', String(n), '-t', String(t)];
const runJson = async (file, args) => lastJsonLine((await execFileP(file, args, { maxBuffer: 64 << 20 })).stdout);

// Each engine: a name and how to measure one (model, prompt, decode, threads)
// as a JSON object {load_s, prefill_tok_s, decode_tok_s, peak_rss_mib}.
const engines = [
  { name: 'ours native', run: (m, p, n, t) => runJson(cli, benchArgs(m, p, n, t)) },
  {
    name: 'ours wasm (Node)',
    run: (m, p, n, t) => runJson(process.execPath, [join(repo, 'js/node/cli.js'), ...benchArgs(m, p, n, t)]),
  },
  {
    name: REFERENCE,
    run: (m, p, n, t) => runJson(process.execPath, [join(repo, 'bench/llama-cpp-run.mjs'), m, String(p), String(n),
      String(t)]),
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
          try {
            results[engine.name] = await engine.run(model, p, decodeTokens, t);
          } catch (error) {
            results[engine.name] = { error: String(error.message).split('\n')[0] };
          }
          console.log(JSON.stringify({ shape: shape.shape, type, prompt: p, ...results[engine.name], engine: engine.name }));
        }
        rows.push({ shape: shape.shape, type, sizeMib, threads: t, prompt: p, results });
      }
    }
  }
}

const fmt = (v, d = 1) => (v === undefined || Number.isNaN(v) ? '-' : v.toFixed(d));
// "value (ratio to llama.cpp native)" for one engine's figure.
const withRatio = (r, engine, key) => {
  const v = r.results[engine]?.[key];
  const ref = r.results[REFERENCE]?.[key];
  if (v === undefined) return '-';
  return engine === REFERENCE ? fmt(v) : `${fmt(v)} (${fmt(v / ref, 2)}x)`;
};
const names = engines.map((e) => e.name);
const header = (first) => [`| ${first.join(' | ')} | ${names.join(' | ')} |`,
  `|${'---|'.repeat(first.length + names.length)}`];
const decodeRows = rows.filter((r) => r.prompt === promptLengths[0]);
const lines = [
  `memory read bandwidth: ${threadCounts.map((t) => `${bandwidth[t]} GB/s with ${t} thread${t > 1 ? 's' : ''}`).join(', ')}`,
  '',
  `Decode, tokens/s (${decodeTokens} tokens; ratio to llama.cpp native). GB/s: model bytes streamed per second by ours native.`,
  '',
  ...header(['model', 'type', 'MiB', 'threads', 'ours native GB/s (% of bandwidth)']),
  ...decodeRows.map((r) => {
    const gbs = ((r.results['ours native']?.decode_tok_s ?? NaN) * r.sizeMib * 1048576) / 1e9;
    return `| ${r.shape} | ${r.type} | ${fmt(r.sizeMib, 0)} | ${r.threads} | ${fmt(gbs, 2)} ` +
      `(${fmt((100 * gbs) / bandwidth[r.threads], 0)}%) | ${names.map((e) => withRatio(r, e, 'decode_tok_s')).join(' | ')} |`;
  }),
  '',
  'Prefill, tokens/s (ratio to llama.cpp native)',
  '',
  ...header(['model', 'type', 'threads', 'prompt']),
  ...rows.map((r) => `| ${r.shape} | ${r.type} | ${r.threads} | ${r.prompt} | ` +
    `${names.map((e) => withRatio(r, e, 'prefill_tok_s')).join(' | ')} |`),
  '',
  'Load seconds / peak resident MiB',
  '',
  ...header(['model', 'type', 'threads']),
  ...decodeRows.map((r) => `| ${r.shape} | ${r.type} | ${r.threads} | ` +
    `${names.map((e) => `${fmt(r.results[e]?.load_s, 2)} / ${fmt(r.results[e]?.peak_rss_mib, 0)}`).join(' | ')} |`),
  '',
  `(${((Date.now() - started) / 1000).toFixed(0)} s)`,
];
const failures = rows.flatMap((r) => Object.entries(r.results).filter(([, v]) => v.error)
  .map(([e, v]) => `${e} on ${r.shape} ${r.type}: ${v.error}`));
if (failures.length) lines.push('', 'failed:', ...failures);
console.log(lines.join('\n'));
