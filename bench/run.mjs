// `npm run bench [-- --quick] [--shapes a,b] [--types x,y] [--engines a,b] [--rounds N] [--node PATH]
// [--browsers firefox,webkit] [--no-twins] [--no-embeddings]`:
// prefill and decode speed, load time and peak memory of our engine (native,
// as wasm in Node and as wasm in headless Chromium) beside llama.cpp's native
// build and wllama (llama.cpp as wasm) in Chromium, on synthetic models of
// real shapes (made with our own `synth` and `quantize`, cached in
// build/bench-models), plus the machine's memory read bandwidth. --node: the
// Node binary that runs ours as wasm in Node and node-llama-cpp (default: the
// one running this script), e.g. build/node24/bin/node, whose V8 runs our
// relaxed-SIMD build. --browsers: ours in these browser engines too (Firefox
// ESR, WebKitGTK; bench/browser-run.mjs). --no-twins: without each
// architecture's Llama twin (bench/models.mjs), measured beside it by default
// for the per-byte table. --engines: only these of native,
// node, chromium, llama.cpp, wllama (llama.cpp native, the reference, always
// runs). Prints one JSON line per measurement, then markdown
// tables with every engine's figures and its ratio to llama.cpp native, then a
// summary of the ratios the project has targets for; then embeddings per
// second (bench/embeddings.mjs) unless --no-embeddings. Every engine runs in its
// own process, one after another; on a shared machine the absolute figures are
// noisy, the ratios within one run less so.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { benchModel, cli, llamaTwin } from './models.mjs';

const execFileP = promisify(execFile);
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const quick = process.argv.includes('--quick');
// Real shapes with a vocabulary of the right size: llama-spm has TinyLlama's
// and stories15M's 32000 tokens, gpt-2's 50257 are close to SmolLM2's 49152.
// ctx: the shape's training context (a prompt must fit with the decoded tokens).
const stories15M = { shape: 'stories15M', vocab: 'ggml-vocab-llama-spm.gguf', ctx: 256 };
const smollm2 = { shape: 'smollm2-135m', vocab: 'ggml-vocab-gpt-2.gguf', ctx: 8192 };
const tinyllama = { shape: 'tinyllama-1.1b', vocab: 'ggml-vocab-llama-spm.gguf', ctx: 2048 };
// The other architectures, one real shape each (cmd_synth.cpp): Qwen3's own
// vocabulary; Llama 3's for SmolLM3; Command-R's 256000 tokens for Gemma's 256k.
const qwen3 = { shape: 'qwen3-0.6b', vocab: 'ggml-vocab-qwen2.gguf', ctx: 40960 };
const smollm3 = { shape: 'smollm3-3b', vocab: 'ggml-vocab-llama-bpe.gguf', ctx: 65536 };
const gemma3 = { shape: 'gemma3-1b', vocab: 'ggml-vocab-command-r.gguf', ctx: 32768 };
const gemma2 = { shape: 'gemma2-2b', vocab: 'ggml-vocab-command-r.gguf', ctx: 8192 };
// Phi-3.5-mini's own vocabulary (Phi-3's); GPT-2's 50257 tokens for Granite 3.3's 49159.
const phi3 = { shape: 'phi3.5-mini', vocab: 'ggml-vocab-phi-3.gguf', ctx: 131072 };
const granite = { shape: 'granite-3.3-2b', vocab: 'ggml-vocab-gpt-2.gguf', ctx: 131072 };
// GPT-2's own; Falcon's 65024 tokens for LFM2's 65536.
const gpt2 = { shape: 'gpt2-124m', vocab: 'ggml-vocab-gpt-2.gguf', ctx: 1024 };
const lfm2 = { shape: 'lfm2-1.2b', vocab: 'ggml-vocab-falcon.gguf', ctx: 128000 };
// `--shapes a,b` and `--types x,y` pick from all of the lists below (e.g. one
// model of the full run, or `--quick --shapes tinyllama-1.1b`: the quick
// settings on TinyLlama); without them --quick keeps the first, small ones.
function pick(all, quickDefault, flag, nameOf = (x) => x) {
  const i = process.argv.indexOf(flag);
  if (i < 0) return quick ? quickDefault : all;
  const wanted = String(process.argv[i + 1]).split(',');
  const kept = all.filter((x) => wanted.includes(nameOf(x)));
  if (kept.length === 0) throw new Error(`${flag}: none of ${wanted.join(', ')} is in ${all.map(nameOf).join(', ')}`);
  return kept;
}
const shapes = pick([stories15M, smollm2, tinyllama, qwen3, gemma3, gemma2, smollm3, phi3, granite, gpt2, lfm2],
  [stories15M, smollm2], '--shapes', (s) => s.shape);
const types = pick(['f16', 'q8_0', 'q4_0', 'q4_K_M'], ['q4_0'], '--types');
const nodeFlag = process.argv.indexOf('--node');
const measuringNode = nodeFlag < 0 ? process.execPath : resolve(String(process.argv[nodeFlag + 1]));
const measuringNodeVersion = execFileSync(measuringNode, ['--version']).toString().trim();  // 'v24.21.0'
// Named with its Node's version when that is not the default one.
const OURS_NODE = nodeFlag < 0 ? 'ours wasm (Node)'
  : `ours wasm (Node ${measuringNodeVersion.slice(1).split('.').slice(0, 2).join('.')})`;
const browsersFlag = process.argv.indexOf('--browsers');
const otherBrowsers = browsersFlag < 0 ? [] : String(process.argv[browsersFlag + 1]).split(',');
const promptLengths = quick ? [64] : [64, 512];
const decodeTokens = quick ? 32 : 128;
const threadCounts = quick ? [1] : [1, 2];
const REFERENCE = 'llama.cpp native';
const RUN_TIMEOUT_MS = 15 * 60 * 1000;  // one measurement, loading a 2 GB model included
const MAX_ESTIMATED_S = 10 * 60;

function lastJsonLine(stdout) {
  const lines = stdout.trim().split('\n').filter((l) => l.startsWith('{'));
  return JSON.parse(lines[lines.length - 1]);
}

// `wasm-llm bench` arguments for one measurement.
const benchArgs = (model, p, n, t) => ['bench', '-m', model, '-p', String(p), '-n', String(n), '-t', String(t)];
// Runs a measuring process; a failure's reason is the last line it wrote to stderr.
async function runJson(file, args) {
  try {
    return lastJsonLine((await execFileP(file, args, { maxBuffer: 64 << 20, timeout: RUN_TIMEOUT_MS })).stdout);
  } catch (error) {
    const reason = error.killed ? `killed after ${RUN_TIMEOUT_MS / 1000} s` : String(error.stderr ?? '').trim().split('\n').pop();
    throw new Error(reason || error.message);
  }
}
// Runs one of this repository's scripts with the Node binary `bin`; the
// Chromium drivers run in this Node.
const node = (bin, script, ...args) => runJson(bin, [join(repo, script), ...args.map(String)]);
const inChromium = (page, ...args) => node(process.execPath, 'bench/chromium-run.mjs', page, ...args);

// Each engine: a name and how to measure one (model, prompt, decode, threads)
// as a JSON object {load_s, prefill_tok_s, decode_tok_s, peak_rss_mib}; ours
// also names its kernels' ISA ({kernels: 'avx512' | 'simd128' | 'relaxed', ...}),
// which the JSON lines below carry, as they carry the version of the Node that
// measured the engines run in measuringNode (inNode).
const allEngines = [
  { key: 'native', name: 'ours native', run: (m, p, n, t) => runJson(cli, benchArgs(m, p, n, t)) },
  { key: 'node', name: OURS_NODE, inNode: true, run: (m, p, n, t) => node(measuringNode, 'js/node/cli.js', ...benchArgs(m, p, n, t)) },
  { key: 'chromium', name: 'ours wasm (Chromium)', run: (m, p, n, t) => inChromium('ours', m, p, n, t) },
  { key: 'llama.cpp', name: REFERENCE, inNode: true, run: (m, p, n, t) => node(measuringNode, 'bench/llama-cpp-run.mjs', m, p, n, t) },
  { key: 'wllama', name: 'wllama (Chromium)', run: (m, p, n, t) => inChromium('wllama', m, p, n, t) },
  ...otherBrowsers.map((browser) => ({
    key: browser,
    name: `ours wasm (${{ firefox: 'Firefox', webkit: 'WebKit' }[browser] ?? browser})`,
    run: (m, p, n, t) => node(process.execPath, 'bench/browser-run.mjs', browser, m, p, n, t),
  })),
];
const picked = pick(allEngines, allEngines, '--engines', (e) => e.key);
const engines = allEngines.filter((e) => e.name === REFERENCE || picked.includes(e));

const started = Date.now();
if (!existsSync(cli)) execFileSync('bash', [join(repo, 'tools/build-native.sh')], { stdio: 'inherit' });

const bandwidth = {};
for (const t of threadCounts) {
  const smallest = await benchModel(shapes[0], types[0]);
  const r = lastJsonLine(execFileSync(cli, ['bench', '-m', smallest, '-p', '1', '-n', '1', '-t', String(t), '--bandwidth'])
    .toString());
  bandwidth[t] = r.read_gb_s;
  console.log(JSON.stringify({ measurement: 'memory_read_bandwidth', threads: t, gb_s: r.read_gb_s }));
}

// --rounds N: every measurement N times, the engines taking turns, so a
// slow spell of a shared machine falls on all of them; each figure the
// median of its N. Within an engine's turn a shape and its twin run one
// right after the other: the per-byte table compares those two.
const roundsFlag = process.argv.indexOf('--rounds');
const rounds = roundsFlag < 0 ? 1 : Number(process.argv[roundsFlag + 1]);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds takes a whole number of at least 1');
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];
// One engine's result from its rounds: each figure's median; an error if any round failed.
function medianResult(runs) {
  const failed = runs.find((r) => r.error);
  if (failed) return failed;
  const figures = ['load_s', 'prefill_tok_s', 'decode_tok_s', 'peak_rss_mib'];
  return { ...runs[0], ...Object.fromEntries(figures.filter((k) => k in runs[0]).map((k) => [k, median(runs.map((r) => r[k]))])) };
}

const rows = [];
// Seconds `engine` would take for a `prompt`-token measurement, from its
// speed on the same model and threads with a shorter prompt (0 if unknown):
// such a measurement is skipped above MAX_ESTIMATED_S (e.g. f16 TinyLlama as
// wasm with a 512-token prompt), which would otherwise take most of an hour.
function estimatedSeconds(engine, { shape, type, threads }, prompt) {
  const earlier = rows.find((r) => r.shape === shape && r.type === type && r.threads === threads)?.results[engine];
  return earlier?.prefill_tok_s ? prompt / earlier.prefill_tok_s + decodeTokens / earlier.decode_tok_s : 0;
}

// Each model measured: the shape's, then (unless --no-twins) its Llama twin
// (bench/models.mjs), which the per-byte table holds it against.
const withTwins = !process.argv.includes('--no-twins');
const twinName = (shape) => `${shape} (llama twin)`;
async function modelsOf(shape, type) {
  const models = [{ name: shape.shape, path: await benchModel(shape, type) }];
  const twin = withTwins ? await llamaTwin(shape, type) : null;
  if (twin) models.push({ name: twinName(shape.shape), path: twin });
  return models;
}

for (const shape of shapes) {
  for (const type of types) {
    const models = (await modelsOf(shape, type)).map((m) => ({ ...m, sizeMib: statSync(m.path).size / 1048576 }));
    for (const t of threadCounts) {
      for (const p of promptLengths) {
        if (p + decodeTokens > shape.ctx) continue;  // e.g. stories15M's 256-token context
        const measured = models.map(() => Object.fromEntries(engines.map((e) => [e.name, []])));
        for (let round = 1; round <= rounds; round += 1) {
          for (const engine of engines) {
            for (const [i, { name, path: model }] of models.entries()) {
              const estimate = estimatedSeconds(engine.name, { shape: name, type, threads: t }, p);
              let result;
              try {
                if (estimate > MAX_ESTIMATED_S) throw new Error(`skipped: would take about ${Math.round(estimate / 60)} min`);
                result = await engine.run(model, p, decodeTokens, t);
              } catch (error) {
                result = { error: String(error.message).split('\n')[0] };
              }
              measured[i][engine.name].push(result);
              const line = { shape: name, type, prompt: p, ...result, engine: engine.name,
                ...(rounds > 1 && { round }) };
              console.log(JSON.stringify(engine.inNode ? { ...line, node: measuringNodeVersion } : line));
            }
          }
        }
        for (const [i, { name, sizeMib }] of models.entries()) {
          const results = Object.fromEntries(Object.entries(measured[i]).map(([engineName, runs]) => [engineName, medianResult(runs)]));
          rows.push({ shape: name, type, sizeMib, threads: t, prompt: p, results, runs: measured[i] });
        }
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
// Model bytes streamed per second while decoding (every token reads all
// weights), and that as a share of the measured read bandwidth.
const bandwidthUse = (r, engine) => {
  const gbs = ((r.results[engine]?.decode_tok_s ?? NaN) * r.sizeMib * 1048576) / 1e9;
  return `${fmt(gbs, 2)} GB/s (${fmt((100 * gbs) / bandwidth[r.threads], 0)}%)`;
};
const names = engines.map((e) => e.name);
const header = (first) => [`| ${first.join(' | ')} | ${names.join(' | ')} |`,
  `|${'---|'.repeat(first.length + names.length)}`];
const decodeRows = rows.filter((r) => r.prompt === promptLengths[0]);
// The ratio of engine a's `key` to engine b's over `rowsOf`, as one line, and
// how many rows meet `target` (a minimum ratio) if there is one.
function ratioLine(rowsOf, a, b, key, target) {
  const what = `${a} vs ${b}, ${key === 'decode_tok_s' ? 'decode' : 'prefill'}`;
  const rs = rowsOf.map((r) => r.results[a]?.[key] / r.results[b]?.[key]).filter(Number.isFinite);
  if (rs.length === 0) return `- ${what}: no row has both`;
  const geomean = Math.exp(rs.reduce((sum, x) => sum + Math.log(x), 0) / rs.length);
  const met = target ? `; target ≥${target}x met in ${rs.filter((x) => x >= target).length} of ${rs.length} rows` : '';
  return `- ${what}: ${fmt(geomean, 2)}x over ${rs.length} rows (${fmt(Math.min(...rs), 2)}x to ${fmt(Math.max(...rs), 2)}x)${met}`;
}

function summaryLines() {
  const chromium = 'ours wasm (Chromium)';
  // TinyLlama q4_0: the largest model, where decode is bound by memory
  // bandwidth; without it (--quick), the largest shape measured.
  const bwShape = shapes.some((s) => s === tinyllama) ? tinyllama.shape : shapes.at(-1).shape;
  const bwRows = decodeRows.filter((r) => r.shape === bwShape && r.type === 'q4_0');
  return [
    ratioLine(decodeRows, chromium, REFERENCE, 'decode_tok_s', 0.5),
    ratioLine(rows, chromium, REFERENCE, 'prefill_tok_s', 0.3),
    ratioLine(decodeRows, chromium, 'wllama (Chromium)', 'decode_tok_s'),
    ratioLine(rows, chromium, 'wllama (Chromium)', 'prefill_tok_s'),
    ratioLine(decodeRows, OURS_NODE, 'ours native', 'decode_tok_s', 0.7),
    ratioLine(rows, OURS_NODE, 'ours native', 'prefill_tok_s', 0.7),
    ...bwRows.map((r) => `- decode bandwidth use on ${r.shape} ${r.type}, ${r.threads} thread(s) (target ≥70% of ` +
      `${bandwidth[r.threads]} GB/s): ${['ours native', OURS_NODE, chromium].map((e) => `${e} ${bandwidthUse(r, e)}`)
        .join(', ')}`),
  ];
}

// Each architecture's speed against its Llama twin's (a Llama model of the
// same weights, bench/models.mjs) in the same type, threads and prompt, per
// weight byte (tokens/s times file bytes, over the same of the twin: the two
// files differ by a few percent), per engine, decode / prefill. 1.0x: as fast
// as Llama; llama.cpp's column shows what the architecture costs there.
function perByteLines() {
  const twinRow = (r) => rows.find((l) => l.shape === twinName(r.shape) && l.type === r.type && l.threads === r.threads &&
    l.prompt === r.prompt);
  const twinned = decodeRows.filter(twinRow);
  if (twinned.length === 0) return [];
  // The median of the rounds' ratios: each round ran the two back to back.
  const ratio = (r, l, engine, key) => {
    const pairs = (r.runs[engine] ?? []).map((run, i) => (run[key] * r.sizeMib) / (l.runs[engine]?.[i]?.[key] * l.sizeMib));
    return fmt(pairs.some((x) => !Number.isFinite(x)) || pairs.length === 0 ? NaN : median(pairs), 2);
  };
  return ['Speed per weight byte against the Llama model of the same weights (tokens/s × MiB, ratio), decode / prefill', '',
    ...header(['model', 'type', 'threads']),
    ...twinned.map((r) => `| ${r.shape} | ${r.type} | ${r.threads} | ` +
      `${names.map((e) => `${ratio(r, twinRow(r), e, 'decode_tok_s')}x / ${ratio(r, twinRow(r), e, 'prefill_tok_s')}x`)
        .join(' | ')} |`), ''];
}

const lines = [
  `memory read bandwidth: ${threadCounts.map((t) => `${bandwidth[t]} GB/s with ${t} thread${t > 1 ? 's' : ''}`).join(', ')}`,
  '',
  `Decode, tokens/s (${decodeTokens} tokens; ratio to llama.cpp native). GB/s: model bytes streamed per second by ours native (% of the read bandwidth).`,
  '',
  ...header(['model', 'type', 'MiB', 'threads', 'ours native GB/s']),
  ...decodeRows.map((r) => `| ${r.shape} | ${r.type} | ${fmt(r.sizeMib, 0)} | ${r.threads} | ${bandwidthUse(r, 'ours native')} | ` +
    `${names.map((e) => withRatio(r, e, 'decode_tok_s')).join(' | ')} |`),
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
  'Load: ours wasm (Chromium) streams the file from the local server into the wasm heap (no cache); wllama downloads',
  'it into its browser cache and reads it from there. Peak MiB in Chromium: the page\'s renderer process (page, workers,',
  'wasm memory).',
  '',
  ...perByteLines(),
  'Summary (ratios of figures measured in this run; geometric mean over the rows, then the range):',
  ...summaryLines(),
  '',
  `(${((Date.now() - started) / 1000).toFixed(0)} s)`,
];
const failures = rows.flatMap((r) => Object.entries(r.results).filter(([, v]) => v.error)
  .map(([e, v]) => `${e} on ${r.shape} ${r.type}, ${r.threads} thread(s), prompt ${r.prompt}: ${v.error}`));
if (failures.length) lines.push('', 'failed:', ...failures);
console.log(lines.join('\n'));

if (!process.argv.includes('--no-embeddings')) {
  const { embeddingBench } = await import('./embeddings.mjs');
  await embeddingBench({ quick, node: measuringNode });
}
