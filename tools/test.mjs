#!/usr/bin/env node
// npm test and npm run test:full. Every suite is a stage: a command and the
// stages it needs first. Stages whose needs are met run side by side, two at
// a time by default: the machines have two cores, builds use both, and the
// test stages spend much of their time waiting on browsers, qemu or a single
// thread. Each stage writes its output to build/test-logs/<stage>.log; a
// failed stage's log is shown when it ends, and a table of every stage's
// time closes the run.
//
// The quick run (npm test, what CI runs) keeps at least one check of every
// architecture, tensor type, build and browser; --full (npm run test:full)
// runs the whole matrix: every type of every architecture in every engine,
// the sanitized build's whole suite, longer fuzzing, more constrained-output
// seeds. The test files read the choice from WASM_LLM_FULL (fullMatrix in
// tests/reference/reference.mjs).
//
//   node tools/test.mjs [--full] [--jobs N] [--only STAGE,...] [--skip STAGE,...]
// --only runs the named stages and what they need; --skip leaves stages out
// (and what needs them), e.g. --skip setup on a machine already set up.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const logs = path.join(root, 'build/test-logs');

// The sanitized C++ tests a quick run leaves to the full one: the exhaustive
// sweeps of arithmetic (kernels against their reference, the math functions
// over all floats, tokenizers over every stored vocabulary and random bytes,
// synth's determinism), which read no input from outside; the native build
// runs them all in every run.
const ASAN_FULL_ONLY = [
  'Kernels\\.', 'Golden\\.', 'AccuracyAndSpecialValues', 'WithinOneUlp', 'StridedOverAllFloats',
  'RandomBytesAreDeterministic', 'Cli\\.Synth',
].join('|');

// In the order a free slot takes them: the wasm build and the suites that
// wait for it first, as they are the longest chain.
function stageList(full) {
  return [
    { name: 'setup', run: 'bash tools/setup.sh' },
    { name: 'build:wasm', needs: ['setup'], run: 'bash tools/build-wasm.sh' },
    { name: 'build:native', needs: ['setup'], run: 'bash tools/build-native.sh' },
    { name: 'node', needs: ['build:native', 'build:wasm'], run: 'npx vitest run tests/reference tests/js' },
    { name: 'browsers', needs: ['build:native', 'build:wasm'], run: 'npx vitest run tests/browser' },
    { name: 'cpp', needs: ['build:native'], run: 'ctest --test-dir build/native --output-on-failure -j2' },
    // The wasm kernel tests build in the package's build folders (wasm-st, wasm-st-relaxed).
    { name: 'kernels:wasm', needs: ['build:wasm'], run: 'bash tools/test-wasm-kernels.sh' },
    { name: 'kernels:arm', needs: ['build:native'], run: 'bash tools/test-arm-kernels.sh' },
    { name: 'build:asan', needs: ['setup'], run: 'bash tools/build-asan.sh' },
    {
      name: 'cpp:asan', needs: ['build:asan'],
      run: `ctest --test-dir build/asan --output-on-failure -j2${full ? '' : ` -E '${ASAN_FULL_ONLY}'`}`,
    },
    { name: 'fuzz', needs: ['build:asan'], run: `bash tools/fuzz.sh --seconds ${full ? 60 : 10}` },
  ];
}

const args = parseArgs(process.argv.slice(2));
const full = args.full;
const STAGES = stageList(full);

function parseArgs(argv) {
  const out = { full: false, jobs: 2, only: null, skip: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${arg} needs a value`);
      return argv[++i];
    };
    if (arg === '--full') out.full = true;
    else if (arg === '--jobs') out.jobs = Number(value());
    else if (arg === '--only') out.only = value().split(',');
    else if (arg === '--skip') out.skip = value().split(',');
    else if (arg === '--help' || arg === '-h') usage();
    else usage(`unknown option ${arg}`);
  }
  if (!Number.isInteger(out.jobs) || out.jobs < 1) usage('--jobs needs a whole number of at least 1');
  return out;
}

function usage(error) {
  const text = 'usage: node tools/test.mjs [--full] [--jobs N] [--only STAGE,...] [--skip STAGE,...]\n' +
    `stages: ${stageList(false).map((s) => s.name).join(', ')}\n`;
  if (error) {
    process.stderr.write(`test.mjs: ${error}\n${text}`);
    process.exit(2);
  }
  process.stdout.write(text);
  process.exit(0);
}

// The stages to run: all, or --only's and what they need, less --skip's.
function selectStages() {
  const byName = new Map(STAGES.map((s) => [s.name, s]));
  for (const name of [...(args.only ?? []), ...args.skip]) {
    if (!byName.has(name)) usage(`unknown stage ${name}`);
  }
  const wanted = new Set();
  const want = (name) => {
    if (wanted.has(name)) return;
    wanted.add(name);
    for (const need of byName.get(name).needs ?? []) want(need);
  };
  for (const name of args.only ?? STAGES.map((s) => s.name)) want(name);
  return STAGES.filter((s) => wanted.has(s.name)).map((s) => ({
    ...s, needs: (s.needs ?? []).filter((n) => wanted.has(n) && !args.skip.includes(n)),
    skipped: args.skip.includes(s.name),
  }));
}

function runStage(stage) {
  const log = path.join(logs, `${stage.name.replace(':', '-')}.log`);
  const out = fs.openSync(log, 'w');
  const started = Date.now();
  console.log(`test: ${stage.name} started: ${stage.run}`);
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', stage.run], {
      cwd: root, stdio: ['ignore', out, out],
      env: { ...process.env, WASM_LLM_FULL: full ? '1' : '0', FORCE_COLOR: '0', NO_COLOR: '1' },
    });
    let finished = false;
    const finish = (code) => {
      if (finished) return;  // 'error' may come before 'close'
      finished = true;
      fs.closeSync(out);
      const seconds = (Date.now() - started) / 1000;
      const text = fs.readFileSync(log, 'utf8');
      const ok = code === 0;
      console.log(`test: ${stage.name} ${ok ? 'passed' : `FAILED (exit ${code})`} in ${seconds.toFixed(0)} s` +
        ` (log: ${path.relative(root, log)})`);
      // A failure shows its log's end; a pass its last lines (the counts).
      const lines = text.trimEnd().split('\n').filter((line) => line !== '');
      const shown = ok ? lines.slice(-4) : lines.slice(-200);
      if (shown.length > 0) console.log(shown.map((line) => `  ${stage.name} | ${line}`).join('\n'));
      resolve({ ok, seconds, counts: testCounts(text) });
    };
    child.on('error', () => finish(127));
    child.on('close', finish);
  });
}

// Tests passed and failed, as CTest (each run of it) and Vitest print them at the end.
function testCounts(log) {
  const text = log.replace(/\x1b\[[0-9;]*m/g, '');  // Vitest colours its summary even in a file
  const ctest = [...text.matchAll(/\d+% tests passed, (\d+) tests? failed out of (\d+)/g)];
  if (ctest.length > 0) {
    const failed = ctest.reduce((sum, m) => sum + Number(m[1]), 0);
    return { passed: ctest.reduce((sum, m) => sum + Number(m[2]), 0) - failed, failed };
  }
  const vitest = /^\s*Tests\s+(.*)$/m.exec(text);
  if (vitest) {
    const count = (word) => Number(new RegExp(`(\\d+) ${word}`).exec(vitest[1])?.[1] ?? 0);
    return { passed: count('passed'), failed: count('failed') };
  }
  return null;
}

async function main() {
  fs.mkdirSync(logs, { recursive: true });
  const stages = selectStages();
  const results = new Map();  // name -> {ok, seconds, counts} once finished
  const running = new Map();  // name -> promise
  const started = Date.now();
  console.log(`test: ${full ? 'the full matrix' : 'the quick run (npm run test:full: the full matrix)'},` +
    ` ${args.jobs} stages at a time`);
  for (const s of stages.filter((s) => s.skipped)) results.set(s.name, { skipped: true });
  for (;;) {
    const pending = stages.filter((s) => !results.has(s.name) && !running.has(s.name));
    // A stage whose needs failed cannot run.
    for (const s of pending) {
      if (s.needs.some((n) => results.get(n) && !results.get(n).ok && !results.get(n).skipped)) {
        results.set(s.name, { ok: false, blocked: true, seconds: 0 });
      }
    }
    const ready = pending.filter((s) => !results.has(s.name) && s.needs.every((n) => results.get(n)?.ok ||
      results.get(n)?.skipped));
    while (running.size < args.jobs && ready.length > 0) {
      const stage = ready.shift();
      running.set(stage.name, runStage(stage).then((result) => ({ name: stage.name, result })));
    }
    if (running.size === 0) break;
    const { name, result } = await Promise.race(running.values());
    running.delete(name);
    results.set(name, result);
  }

  const total = (Date.now() - started) / 1000;
  console.log('\ntest: stage timings');
  let passed = 0;
  let failed = 0;
  for (const s of stages) {
    const r = results.get(s.name);
    const status = r.skipped ? 'skipped' : r.blocked ? 'not run (a stage it needs failed)' : r.ok ? 'passed' : 'FAILED';
    const counts = r.counts ? ` (${r.counts.passed} passed, ${r.counts.failed} failed)` : '';
    console.log(`  ${s.name.padEnd(14)} ${String(Math.round(r.seconds ?? 0)).padStart(5)} s  ${status}${counts}`);
    passed += r.counts?.passed ?? 0;
    failed += r.counts?.failed ?? 0;
    if (!r.ok && !r.skipped && !(r.counts?.failed > 0)) failed += 1;  // a stage that failed outside its tests' count
  }
  console.log(`  ${'total'.padEnd(14)} ${String(Math.round(total)).padStart(5)} s (${(total / 60).toFixed(1)} min)`);
  console.log(`tests: ${passed} passed, ${failed} failed`);
  process.exit([...results.values()].every((r) => r.ok || r.skipped) ? 0 : 1);
}

main();
