// `npm run bench:kv-reuse [-- --shape qwen3-0.6b] [--type q4_0] [--threads N] [--node PATH]`:
// what reusing the KV cache saves, on a synthetic model of a real shape
// (bench/models.mjs; Qwen3-0.6B's shape and Qwen2's tokenizer and chat
// template by default).
//  1. A 10-turn chat in a session, as wasm in Node, against the same turns
//     with cachePrompt: false (same replies: checked): the prompt tokens
//     evaluated and the prefill seconds, per turn and in all.
//  2. A saved state of a 1000-token prompt: the native CLI's generate with
//     and without --prompt-cache (wall time to the first token, model load
//     included in both), and in Node loadState() + the prefill of a question
//     after the prompt against the prefill of the whole.
// Prints one JSON line per measurement, then a markdown summary.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { benchModel, cli } from './models.mjs';

const execFileP = promisify(execFile);
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function option(flag, fallback) {
  const i = process.argv.indexOf(flag);
  return i < 0 ? fallback : process.argv[i + 1];
}
const VOCABS = { 'qwen3-0.6b': 'ggml-vocab-qwen2.gguf', 'smollm2-135m': 'ggml-vocab-gpt-2.gguf' };
const shape = option('--shape', 'qwen3-0.6b');
const type = option('--type', 'q4_0');
const threads = Number(option('--threads', 2));
const node = option('--node', process.execPath);
if (!VOCABS[shape]) throw new Error(`--shape: one of ${Object.keys(VOCABS).join(', ')}`);

async function parent() {
  const model = await benchModel({ shape, vocab: VOCABS[shape] }, type);
  const sizeMib = statSync(model).size / 1048576;
  const run = async (what) => {
    const { stdout } = await execFileP(node, [fileURLToPath(import.meta.url), '--child', what, '--model', model,
      '--threads', String(threads)], { maxBuffer: 1 << 24, cwd: repo });
    const line = JSON.parse(stdout.trim().split('\n').pop());
    console.log(JSON.stringify(line));
    return line;
  };
  const chat = await run('chat');
  const state = await run('state');
  const native = await nativePromptCache(model, state.prompt);
  rmSync(dirname(state.prompt), { recursive: true, force: true });
  console.log(JSON.stringify(native));

  const f = (v, d = 2) => v.toFixed(d);
  console.log([
    '',
    `${shape} ${type} (${f(sizeMib, 0)} MiB), ${threads} thread(s), ${chat.node}`,
    '',
    `10-turn chat (a session; replies of ${chat.maxTokens} tokens at most), as wasm in Node:`,
    '',
    '| | prompt tokens evaluated | prefill seconds |',
    '|---|---|---|',
    `| reusing the KV cache | ${chat.reused.evaluated} of ${chat.reused.prompt} | ${f(chat.reused.seconds)} |`,
    `| cachePrompt: false | ${chat.fresh.evaluated} of ${chat.fresh.prompt} | ${f(chat.fresh.seconds)} |`,
    '',
    `Per turn (evaluated with reuse / without): ${chat.turns.map((t) => `${t.reused}/${t.fresh}`).join(', ')}`,
    '',
    `A ${state.promptTokens}-token prompt, then a ${state.questionTokens}-token question:`,
    '',
    '| | without a saved state | with it | saved |',
    '|---|---|---|---|',
    `| wasm in Node: prefill (+ loadState) | ${f(state.fullPrefill, 3)} s | ${f(state.loadState, 3)} + ` +
      `${f(state.questionPrefill, 3)} s | ${f(state.fullPrefill - state.loadState - state.questionPrefill, 3)} s |`,
    `| native CLI: time to the first token | ${f(native.without, 3)} s | ${f(native.with, 3)} s | ` +
      `${f(native.without - native.with, 3)} s |`,
    '',
    `The state: ${f(state.stateBytes / 1048576, 1)} MiB (saveState ${f(state.saveState, 3)} s).`,
  ].join('\n'));
}

// The native CLI's wall time to the first token of `prompt` (a file), with
// --prompt-cache (the file already saved) and without: the best of 3 each.
async function nativePromptCache(model, promptFile) {
  const dir = mkdtempSync(join(tmpdir(), 'wasm-llm-bench-'));
  try {
    const prompt = readFileSync(promptFile, 'utf8');
    const cache = join(dir, 'prompt.state');
    const generate = async (extra) => {
      const started = performance.now();
      await execFileP(cli, ['generate', '-m', model, '-p', prompt, '-n', '1', '-t', String(threads), ...extra],
        { maxBuffer: 1 << 26 });
      return (performance.now() - started) / 1000;
    };
    await generate(['--prompt-cache', cache]);  // writes the state
    const best = async (extra) => Math.min(...[await generate(extra), await generate(extra), await generate(extra)]);
    return { measurement: 'native_prompt_cache', without: await best([]), with: await best(['--prompt-cache', cache]) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function child() {
  const { LLM } = await import('../js/index.js');
  const what = process.argv[process.argv.indexOf('--child') + 1];
  const llm = await LLM.load(option('--model'), { threads: Number(option('--threads')) });
  try {
    console.log(JSON.stringify(what === 'chat' ? await chatTurns(llm) : await savedState(llm)));
  } finally {
    await llm.dispose();
  }
}

// The user's side of a 10-turn chat: a few sentences a turn.
const TURNS = [
  'I am planning a trip to Lisbon in the spring. What should I know before I go?',
  'How many days would you recommend, and which neighbourhoods are best to stay in?',
  'I like food a lot. Which dishes should I try, and where do locals eat them?',
  'Is it easy to get around by tram, or should I walk? I do not want to rent a car.',
  'What day trips can I take from the city by train?',
  'My partner does not eat fish. Will that be a problem in restaurants there?',
  'How much should we budget per day for food, transport and museums, roughly?',
  'Which museums are worth it if we only have time for two?',
  'We would like one evening with live music. What kind of music is typical there?',
  'Thank you. Can you sum up the plan in a short list, day by day?',
];
const SYSTEM = 'You are a helpful travel assistant. Answer in a few sentences, with concrete suggestions.';
const MAX_TOKENS = 48;

// The chat through a session, then the same prompts with cachePrompt: false.
async function chatTurns(llm) {
  const options = { maxTokens: MAX_TOKENS, temperature: 0 };
  const session = llm.session({ messages: [{ role: 'system', content: SYSTEM }] });
  const reused = [];
  for (const words of TURNS) await session.chat(words, { ...options, onStats: (s) => reused.push(s) });
  const fresh = [];
  const messages = session.messages;
  for (let turn = 0; turn < TURNS.length; turn++) {
    const upTo = messages.slice(0, 2 + 2 * turn);  // the system message, the turns before and this one's words
    const reply = await llm.chat(upTo, { ...options, cachePrompt: false, onStats: (s) => fresh.push(s) });
    if (reply.content !== messages[2 + 2 * turn].content) throw new Error(`turn ${turn + 1}: another reply without reuse`);
  }
  const sum = (stats) => ({
    prompt: stats.reduce((n, s) => n + s.promptTokens, 0),
    evaluated: stats.reduce((n, s) => n + s.promptTokens - s.cachedTokens, 0),
    seconds: stats.reduce((n, s) => n + s.prefillSeconds, 0),
  });
  return {
    measurement: 'chat_10_turns', node: process.version, maxTokens: MAX_TOKENS, reused: sum(reused), fresh: sum(fresh),
    turns: reused.map((s, i) => ({ reused: s.promptTokens - s.cachedTokens, fresh: fresh[i].promptTokens })),
  };
}

// A ~1000-token prompt: its prefill, its saved state, and a question after it
// from the restored state. The prompt is left in a file for the native run.
async function savedState(llm) {
  const paragraph = 'The committee met on Tuesday to review the budget, the schedule and the open risks. ' +
    'Each team reported its progress, and the minutes list every decision with its owner and due date. ';
  let prompt = '';
  while ((await llm.tokenize(prompt)).length < 1000) prompt += paragraph;
  const question = ' Question: which decisions were made, and who owns them? Answer:';
  const file = join(mkdtempSync(join(tmpdir(), 'wasm-llm-bench-')), 'prompt.txt');
  writeFileSync(file, prompt);

  const prefill = async (text, options) => {
    let stats;
    await llm.generate(text, { maxTokens: 1, temperature: 0, ...options, onStats: (s) => (stats = s) });
    return stats;
  };
  const full = await prefill(prompt + question, { cachePrompt: false });
  await prefill(prompt, { cachePrompt: false });
  let started = performance.now();
  const state = await llm.saveState();
  const saveState = (performance.now() - started) / 1000;
  await prefill('Something else.', {});  // the cache now holds other tokens
  started = performance.now();
  await llm.loadState(state);
  const loadState = (performance.now() - started) / 1000;
  const after = await prefill(prompt + question, {});
  return {
    measurement: 'saved_state', prompt: file, promptTokens: (await llm.tokenize(prompt)).length,
    questionTokens: after.promptTokens - after.cachedTokens, fullPrefill: full.prefillSeconds,
    questionPrefill: after.prefillSeconds, loadState, saveState, stateBytes: state.byteLength,
  };
}

// Each measurement runs in a Node of its own (--node may be another version), printing one JSON line.
if (process.argv.includes('--child')) {
  await child();
} else {
  await parent();
}
