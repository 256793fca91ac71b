// Tool calls and the OpenAI-style API in Chromium: chat() with tools, and
// createChatCompletion and createCompletion with and without streaming,
// give exactly what they give in Node for the same seeds (every build
// computes the same bits), on stories260K and on a synthetic model with
// Qwen3's chat template over the 151k-token Qwen2 vocabulary.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LLM } from '../../js/index.js';
import { cached, runCli, sharedModels } from '../reference/reference.mjs';
import { modelPath, repoRoot } from '../js/helpers.mjs';
import { TOOLS } from '../js/tool-cases.mjs';
import { openTestPage } from './browser.mjs';

const SEEDS = 3;
let scratchDir;
let t;

function qwen3Model() {
  return cached('tools-64x2-qwen2-Qwen-Qwen3-0.6B.gguf', (file) => runCli(['synth', '--shape', '64x2', '--type', 'q8_0',
    '--seed', '3', '--ctx', '2048', '--vocab', path.join(sharedModels, 'vocab', 'ggml-vocab-qwen2.gguf'),
    '--chat-template', path.join(repoRoot, 'tests/js/chat-templates/Qwen-Qwen3-0.6B.jinja'), '-o', file]));
}

beforeAll(async () => {
  scratchDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-tools-'));
  fs.copyFileSync(await qwen3Model(), path.join(scratchDir, 'qwen3.gguf'));  // served from /scratch/
  t = await openTestPage({ isolated: true, mounts: { '/scratch/': scratchDir } });
});

afterAll(async () => {
  await t?.close();
  fs.rmSync(scratchDir, { recursive: true, force: true });
});

// What the requests give, as plain data: run in the page and in Node alike
// (the function is sent to the page as its source text).
async function runRequests(llm, { tools, seeds }) {
  const messages = [{ role: 'user', content: 'What is the weather in Paris?' }];
  const collect = async (iterable) => {
    const chunks = [];
    for await (const c of iterable) chunks.push(c);
    return chunks.map(({ id, created, ...rest }) => rest);  // ids and times differ
  };
  const out = [];
  for (let seed = 0; seed < seeds; seed += 1) {
    const common = { max_tokens: 64, seed, temperature: 1 };
    const reply = await llm.chat(messages, { tools, toolChoice: seed % 2 ? 'required' : 'auto', seed, maxTokens: 64, temperature: 1 });
    const { id, created, ...completion } = await llm.createChatCompletion({
      messages, tools, tool_choice: 'required', parallel_tool_calls: false, ...common, max_tokens: 160,
    });
    const stream = await collect(await llm.chat.completions.create({ messages, tools, stream: true, stream_options: { include_usage: true }, ...common }));
    const text = await collect(await llm.createCompletion({ prompt: 'Once upon a time', stream: true, ...common }));
    out.push({ reply: { ...reply, toolCalls: reply.toolCalls.map(({ id: _, ...call }) => call) }, completion, stream, text });
  }
  // Tool call ids are random: compare the rest.
  return JSON.parse(JSON.stringify(out, (key, value) => (key === 'id' && typeof value === 'string' && value.startsWith('call_') ? 'id' : value)));
}

describe.each([
  { model: 'stories260K', url: '/models/stories260K.gguf', file: () => modelPath },
  { model: 'Qwen3 template, qwen2 vocab', url: '/scratch/qwen3.gguf', file: qwen3Model },
])('$model', ({ url, file }) => {
  it('chat() with tools and the OpenAI-style calls give Node\'s results', async () => {
    const inPage = await t.page.evaluate(async ({ url, source, tools, seeds }) => {
      const run = new Function(`return (${source})`)();
      const llm = await window.wasmLlm.LLM.load(url, { threads: 1 });
      try {
        return await run(llm, { tools, seeds });
      } finally {
        await llm.dispose();
      }
    }, { url, source: runRequests.toString(), tools: TOOLS, seeds: SEEDS });
    const llm = await LLM.load(await file(), { threads: 1 });
    try {
      expect(inPage).toEqual(await runRequests(llm, { tools: TOOLS, seeds: SEEDS }));
    } finally {
      await llm.dispose();
    }
    // The requests made calls (the check would mean little without them).
    expect(inPage.filter((r) => r.completion.choices[0].finish_reason === 'tool_calls').length).toBeGreaterThan(0);
    expect(inPage.every((r) => r.stream.at(-1).usage.completion_tokens > 0)).toBe(true);
  });
});
