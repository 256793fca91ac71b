// `node bench/constrained.mjs [--node PATH] [--tokens N] [--seeds N]`: what
// constrained output costs per token, natively and as wasm in Node, on
// synthetic models with the vocabularies that matter for masking: SmolLM2-135M's
// shape with StarCoder's 49k tokens and a Qwen3-0.6B-like 1024x28 shape with
// Qwen2's 151k tokens (made with our `synth`, cached in build/bench-models).
// Each run is `wasm-llm generate` with --json or --json-schema on one thread;
// its summary line reports the time spent masking tokens and advancing the
// grammar per sampled token, and its share of decoding (grammar time /
// the rest of decode time). Prints one line per run and a markdown table of
// the means over the seeds.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(repo, 'build/native/wasm-llm');
const nodeCli = join(repo, 'js/node/cli.js');
const vocabDir = resolve(repo, '../shared/models/vocab');
const cacheDir = join(repo, 'build/bench-models');

function option(flag, fallback) {
  const i = process.argv.indexOf(flag);
  return i < 0 ? fallback : process.argv[i + 1];
}
const node = option('--node', process.execPath);
const tokens = Number(option('--tokens', 128));
const seeds = Number(option('--seeds', 3));

const MODELS = [
  { name: 'smollm2-135m shape, 49k vocab (starcoder)', shape: 'smollm2-135m', vocab: 'ggml-vocab-starcoder.gguf', ctx: 8192 },
  { name: '1024x28 (Qwen3-0.6B-like), 151k vocab (qwen2)', shape: '1024x28:16/8:3072', vocab: 'ggml-vocab-qwen2.gguf', ctx: 4096 },
];
// Strings, numbers, enums, nesting: a typical structured-output schema.
const SCHEMA = {
  type: 'object',
  properties: {
    title: { type: 'string', maxLength: 60 },
    year: { type: 'integer', minimum: 1900, maximum: 2100 },
    rating: { type: 'number', minimum: 0, maximum: 10 },
    genres: { type: 'array', items: { enum: ['drama', 'comedy', 'horror', 'documentary'] }, maxItems: 3 },
    cast: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
  },
  required: ['title', 'year', 'rating', 'genres', 'cast'],
};
const CONSTRAINTS = [
  { name: '--json', flags: () => ['--json'] },
  { name: '--json-schema', flags: (file) => ['--json-schema', file] },
];

async function model(m) {
  mkdirSync(cacheDir, { recursive: true });
  const file = join(cacheDir, `constrained-${m.shape.replace(/[:/]/g, '_')}-${m.vocab.replace('.gguf', '')}-q8_0.gguf`);
  if (!existsSync(file)) {
    await execFileP(cli, ['synth', '--shape', m.shape, '--type', 'q8_0', '--ctx', String(m.ctx), '--vocab', join(vocabDir, m.vocab),
      '-o', file], { maxBuffer: 1 << 24 });
  }
  return file;
}

// "generated 60 tokens, 24.4 tok/s | ... | grammar 0.160 ms/token (0.4% of decode; ...)"
function parseSummary(stderr) {
  const m = /generated (\d+) tokens, ([\d.]+) tok\/s .*grammar ([\d.]+) ms\/token \(([\d.]+)% of decode/.exec(stderr);
  if (!m) throw new Error(`no summary in: ${stderr}`);
  return { generated: Number(m[1]), tokPerS: Number(m[2]), maskMs: Number(m[3]), percent: Number(m[4]) };
}

const schemaFile = join(cacheDir, 'constrained-schema.json');
mkdirSync(cacheDir, { recursive: true });
writeFileSync(schemaFile, JSON.stringify(SCHEMA));
const rows = [];
for (const m of MODELS) {
  const file = await model(m);
  for (const engine of ['native', 'node']) {
    for (const c of CONSTRAINTS) {
      const runs = [];
      for (let seed = 1; seed <= seeds; seed += 1) {
        const args = ['generate', '-m', file, '-p', 'Once upon a time', '-n', String(tokens), '-t', '1', '--seed', String(seed),
          ...c.flags(schemaFile)];
        const { stderr } = engine === 'native'
          ? await execFileP(cli, args, { maxBuffer: 1 << 24 })
          : await execFileP(node, [nodeCli, ...args], { maxBuffer: 1 << 24 });
        const r = parseSummary(stderr);
        console.log(JSON.stringify({ model: m.name, engine, constraint: c.name, seed, ...r }));
        runs.push(r);
      }
      const mean = (key) => runs.reduce((s, r) => s + r[key], 0) / runs.length;
      rows.push({ model: m.name, engine, constraint: c.name, maskMs: mean('maskMs'), percent: mean('percent'),
        decodeMs: 1000 / mean('tokPerS') });
    }
  }
}
console.log('\n| model | engine | constraint | masking ms/token | % of a decode step | decode ms/token (with masking) |');
console.log('|---|---|---|---|---|---|');
for (const r of rows) {
  console.log(`| ${r.model} | ${r.engine} | ${r.constraint} | ${r.maskMs.toFixed(3)} | ${r.percent.toFixed(1)}% | ${r.decodeMs.toFixed(1)} |`);
}
