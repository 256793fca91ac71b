// Fuzzes the chat-template path (js/chat.js: ChatFormatter over
// @huggingface/jinja) with a deterministic mutation fuzzer. Chat templates
// come from model files, so they are hostile input like the rest of a GGUF.
//
// Each case is a seed (real templates and conversations: seed-corpus.mjs)
// with a few mutations of its template (spans deleted, duplicated or
// spliced from another template, Jinja syntax and odd numbers inserted) and
// of its messages and options (roles, contents, values of the wrong type).
// Case i of a run is a pure function of (--seed, i), so any case can be made
// again. A render must return a string or throw TypeError (ChatFormatter's
// one error type), within --timeout-ms and without exhausting memory. The
// renders run in a worker thread that the main thread watches.
//   node tests/fuzz/chat_template_fuzz.mjs --corpus DIR [--seconds N] [--seed S]
//        [--artifacts DIR] [--timeout-ms MS]
//   node tests/fuzz/chat_template_fuzz.mjs CASE.json    (runs one saved case)
// Prints "Done N runs in S second(s)" like libFuzzer; exits 1 on a failure,
// with the failing case saved in --artifacts.
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { ChatFormatter } from '../../js/chat.js';

// ---- case generation ----------------------------------------------------------

// mulberry32: a small PRNG whose whole state is one 32-bit number.
function makeRng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    int: (n) => Math.floor(next() * n),
    pick: (list) => list[Math.floor(next() * list.length)],
    chance: (p) => next() < p,
  };
}

const jinjaTokens = [
  '{%', '%}', '{{', '}}', '{#', '#}', '{%-', '-%}', '{{-', '-}}', ' for m in messages ', ' endfor ', ' if ', ' elif ',
  ' else ', ' endif ', ' set ', ' macro f(x) ', ' endmacro ', ' call ', ' endcall ', ' filter upper ', ' endfilter ',
  'namespace(a=1)', 'loop.index0', 'loop.last', 'loop.previtem', 'messages', 'message', "message['content']",
  "m['role']", 'm.content', 'range(', ')', '(', '[', ']', '::-1', '|', '|length', '|trim', '|tojson', '|upper',
  '|join(", ")', '|selectattr("role", "equalto", "user")', '|map(attribute="content")', '|items', '|list', '|first',
  '|last', '|indent(4)', '|replace("a", "b")', '|string', '|int', '|float', '|default("x")', '~', '+', '-', '*',
  '**', '//', '/', '%', ' not ', ' and ', ' or ', ' is ', ' is defined ', ' in ', 'none', 'None', 'true', 'false',
  'raise_exception("x")', 'strftime_now("%Y")', '"', "'", '\\', '.', ',', ':', '=', '==', '!=', '<', '>',
  'add_generation_prompt', 'bos_token', 'eos_token', 'tools', 'x.y.z', '{}', '[]', '\n',
];
const numbers = ['0', '1', '-1', '2', '7', '255', '4096', '65536', '0.5', '-0.0', '1e3', '1e9', '2147483648',
  '9007199254740993', '1e309'];
const roles = ['system', 'user', 'assistant', 'tool', 'ipython', '', 'USER', 'developer', '{{', '\u0000'];
const contents = ['', ' ', 'Hi', '{{ messages }}', '{% endfor %}', '<|im_end|>', '<start_of_turn>', '\n\n',
  '\u00e9\u4e16\ud83d\ude00', '\ud800', 'a'.repeat(1000)];
const wrongTypes = [null, undefined, 5, true, {}, [], ['x'], { role: 'user' }, 'text'];

function randomText(rng) {
  let s = '';
  for (let n = rng.int(16); n > 0; --n) {
    s += rng.chance(0.7) ? String.fromCharCode(32 + rng.int(95)) : String.fromCodePoint(rng.int(0x10ffff + 1));
  }
  return s;
}

function mutateTemplate(rng, template, seeds) {
  const at = rng.int(template.length + 1);
  const span = 1 + rng.int(24);
  switch (rng.int(6)) {
    case 0: return template.slice(0, at) + template.slice(at + span);  // delete
    case 1: {  // duplicate a span elsewhere
      const from = rng.int(template.length + 1);
      return template.slice(0, at) + template.slice(from, from + span * 4) + template.slice(at);
    }
    case 2: return template.slice(0, at) + rng.pick(jinjaTokens) + template.slice(at);
    case 3: {  // splice from another seed's template
      const other = rng.pick(seeds).template;
      const from = rng.int(other.length + 1);
      return template.slice(0, at) + other.slice(from, from + span * 8) + template.slice(at);
    }
    case 4: {  // a number for a number
      const digits = [...template.matchAll(/\d+/g)];
      if (digits.length === 0) return template.slice(0, at) + rng.pick(numbers) + template.slice(at);
      const d = rng.pick(digits);
      return template.slice(0, d.index) + rng.pick(numbers) + template.slice(d.index + d[0].length);
    }
    default: return template.slice(0, at) + randomText(rng) + template.slice(at);
  }
}

function mutateMessages(rng, messages) {
  const out = messages.map((m) => ({ ...m }));
  const i = rng.int(out.length + 1);
  switch (rng.int(7)) {
    case 0: if (out[i]) out[i].role = rng.chance(0.8) ? rng.pick(roles) : randomText(rng); break;
    case 1: if (out[i]) out[i].content = rng.chance(0.6) ? rng.pick(contents) : randomText(rng); break;
    case 2: out.splice(i, 0, { role: rng.pick(roles), content: rng.pick(contents) }); break;
    case 3: out.splice(i, 1); break;
    case 4: if (out[i]) out[i][rng.pick(['role', 'content'])] = rng.pick(wrongTypes); break;
    case 5: if (out[i]) out[i][rng.pick(['tool_calls', 'name', 'tool_call_id'])] = rng.pick(wrongTypes); break;
    default: return rng.pick(wrongTypes);  // not an array of messages
  }
  return out;
}

// Case `index` of the run with seed `runSeed`.
export function makeCase(seeds, runSeed, index) {
  const rng = makeRng(Math.imul(runSeed, 0x9e3779b1) ^ Math.imul(index + 1, 0x85ebca6b));
  const seed = rng.pick(seeds);
  const c = { ...seed, messages: seed.messages };
  for (let n = 1 + rng.int(6); n > 0; --n) {
    switch (rng.int(8)) {
      case 0: c.messages = Array.isArray(c.messages) ? mutateMessages(rng, c.messages) : rng.pick(seeds).messages; break;
      case 1: c.addGenerationPrompt = rng.pick([true, false, undefined, 0, 'yes']); break;
      case 2: c[rng.pick(['bosToken', 'eosToken'])] = rng.pick([undefined, null, '', '<|endoftext|>', '{{']); break;
      default: c.template = mutateTemplate(rng, c.template, seeds);
    }
  }
  return c;
}

// ---- running a case -----------------------------------------------------------

// Renders `c` the way LLM.formatChat does: {rendered} (true for a string,
// false for a TypeError), or {problem} describing what is wrong.
export function runCase(c) {
  const formatter = new ChatFormatter({ chatTemplate: c.template, bosToken: c.bosToken, eosToken: c.eosToken });
  try {
    const prompt = formatter.format(c.messages, { addGenerationPrompt: c.addGenerationPrompt });
    return typeof prompt === 'string' ? { rendered: true } : { problem: `format returned ${typeof prompt}, not a string` };
  } catch (error) {
    if (error instanceof TypeError) return { rendered: false };
    return { problem: `format threw ${error?.constructor?.name}: ${error?.message ?? error}` };
  }
}

function readSeeds(dir) {
  const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
  if (files.length === 0) throw new Error(`no seeds (*.json) in ${dir}`);
  return files.map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')));
}

// ---- the worker: renders cases until the time is up ----------------------------

function workerMain({ corpus, runSeed, seconds, progress }) {
  const seeds = readSeeds(corpus);
  const current = new Int32Array(progress);
  const end = Date.now() + seconds * 1000;
  let index = 0;
  let rendered = 0;
  for (; Date.now() < end; ++index) {
    Atomics.store(current, 0, index);
    const result = runCase(makeCase(seeds, runSeed, index));
    if (result.problem) {
      parentPort.postMessage({ failed: index, problem: result.problem });
      return;
    }
    if (result.rendered) ++rendered;
  }
  parentPort.postMessage({ done: index, rendered });
}

// ---- the main thread: starts the worker and watches it -------------------------

function parseArgs(argv) {
  const opts = { seconds: 10, seed: 1, timeoutMs: 5000, artifacts: 'build/fuzz-artifacts/chat_template' };
  for (let i = 0; i < argv.length; ++i) {
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${argv[i]} needs a value`);
      return argv[++i];
    };
    switch (argv[i]) {
      case '--seconds': opts.seconds = Number(value()); break;
      case '--seed': opts.seed = Number(value()); break;
      case '--timeout-ms': opts.timeoutMs = Number(value()); break;
      case '--corpus': opts.corpus = value(); break;
      case '--artifacts': opts.artifacts = value(); break;
      default:
        if (argv[i].startsWith('-') || opts.replay) throw new Error(`unknown argument ${argv[i]}`);
        opts.replay = argv[i];
    }
  }
  if (!opts.replay && !opts.corpus) throw new Error('--corpus DIR is needed');
  for (const key of ['seconds', 'seed', 'timeoutMs']) {
    if (!Number.isInteger(opts[key]) || opts[key] < 0) throw new Error(`--${key} must be a whole number`);
  }
  return opts;
}

function saveFailure(opts, seeds, index, problem) {
  mkdirSync(opts.artifacts, { recursive: true });
  const file = join(opts.artifacts, `crash-seed${opts.seed}-case${index}.json`);
  writeFileSync(file, JSON.stringify(makeCase(seeds, opts.seed, index)));
  console.error(`chat_template_fuzz: case ${index}: ${problem}\n  saved as ${file}; rerun: node ${process.argv[1]} ${file}`);
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.replay) {
    const { problem, rendered } = runCase(JSON.parse(readFileSync(opts.replay, 'utf8')));
    console.log(problem ? `FAILED: ${problem}` : `ok: ${rendered ? 'rendered' : 'a TypeError'}`);
    process.exit(problem ? 1 : 0);
  }
  const seeds = readSeeds(opts.corpus);
  const progress = new SharedArrayBuffer(4);
  const current = new Int32Array(progress);
  const started = Date.now();
  const worker = new Worker(new URL(import.meta.url), {
    workerData: { corpus: opts.corpus, runSeed: opts.seed, seconds: opts.seconds, progress },
    resourceLimits: { maxOldGenerationSizeMb: 1024 },  // a runaway template fails here, not in the fuzzer
  });
  const outcome = await new Promise((settle) => {
    const resolve = (result) => {
      clearInterval(watch);
      settle(result);
    };
    let last = -1;
    let lastChange = Date.now();
    const watch = setInterval(() => {
      const index = Atomics.load(current, 0);
      if (index !== last) {
        last = index;
        lastChange = Date.now();
      } else if (Date.now() - lastChange > opts.timeoutMs) {
        resolve({ failed: index, problem: `no result after ${opts.timeoutMs} ms (a hang)` });
      }
    }, 50);
    worker.on('message', resolve);
    worker.on('error', (error) => resolve({ failed: Atomics.load(current, 0), problem: `the worker died: ${error.message}` }));
    worker.on('exit', (code) => resolve({ failed: Atomics.load(current, 0), problem: `the worker exited (${code})` }));
  }).finally(() => worker.terminate());
  const seconds = Math.round((Date.now() - started) / 1000);
  if (outcome.failed !== undefined) {
    saveFailure(opts, seeds, outcome.failed, outcome.problem);
    console.log(`Done ${outcome.failed + 1} runs in ${seconds} second(s)`);
    process.exit(1);
  }
  console.log(`${outcome.rendered} cases rendered, ${outcome.done - outcome.rendered} rejected with a TypeError`);
  console.log(`Done ${outcome.done} runs in ${seconds} second(s)`);
}

if (isMainThread) {
  main().catch((error) => {
    console.error(`chat_template_fuzz: ${error.message}`);
    process.exit(2);
  });
} else {
  workerMain(workerData);
}
