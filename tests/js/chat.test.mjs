// Chat: the model's own template (rendered with @huggingface/jinja), the
// ChatML fallback, and no second BOS when the template writes one.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatFormatter } from '../../js/chat.js';
import { LLM } from '../../js/index.js';
import { cached, runCli, sharedModels } from '../reference/reference.mjs';
import { modelPath } from './helpers.mjs';

// A template in the style of real ones: BOS first, one line per message.
// (Chat templates render with trim_blocks, as in transformers: a newline
// right after a block tag is dropped, so newlines are written as '\n'.)
const template =
  "{{ bos_token }}{% for m in messages %}{% if m['role'] == 'system' %}<<SYS>>{{ m['content'] }}<</SYS>>{{ '\\n' }}" +
  "{% else %}[{{ m['role'] | upper }}] {{ m['content'] | trim }}{% if m['role'] == 'assistant' %}{{ eos_token }}" +
  "{% endif %}{{ '\\n' }}{% endif %}{% endfor %}{% if add_generation_prompt %}[ASSISTANT]{% endif %}";
const messages = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: ' Tell me a story. ' },
  { role: 'assistant', content: 'Once.' },
  { role: 'user', content: 'More.' },
];
let templated;
let plain;

beforeAll(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-chat-'));
  const templateFile = path.join(dir, 'template.jinja');
  fs.writeFileSync(templateFile, template);
  const tag = crypto.createHash('sha256').update(template).digest('hex').slice(0, 8);  // a new template, a new file
  const model = await cached(`chat-128x2-${tag}.gguf`, (out) =>
    runCli(['synth', '--shape', '128x2:2/1:256', '--type', 'q8_0', '--ctx', '512', '--chat-template', templateFile,
      '--vocab', path.join(sharedModels, 'vocab', 'ggml-vocab-llama-spm.gguf'), '-o', out]));
  fs.rmSync(dir, { recursive: true });
  templated = await LLM.load(model, { threads: 1 });
  plain = await LLM.load(modelPath, { threads: 1 });
});

afterAll(async () => {
  await templated?.dispose();
  await plain?.dispose();
});

describe('chat', () => {
  it("renders the model's own template", () => {
    expect(templated.info.chatTemplate).toBe(template);
    expect(templated.info.bosToken).toBe('<s>');
    expect(templated.formatChat(messages)).toBe(
      '<s><<SYS>>Be brief.<</SYS>>\n[USER] Tell me a story.\n[ASSISTANT] Once.</s>\n[USER] More.\n[ASSISTANT]');
    expect(templated.formatChat(messages, { addGenerationPrompt: false })).not.toMatch(/\[ASSISTANT\]$/);
  });

  it('falls back to ChatML for a model without a template', () => {
    expect(plain.info.chatTemplate).toBe(null);
    expect(plain.formatChat(messages.slice(0, 2))).toBe(
      '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n Tell me a story. <|im_end|>\n<|im_start|>assistant\n');
  });

  it('generates from the formatted prompt, without a second BOS', async () => {
    const prompt = templated.formatChat(messages);
    const tokens = await templated.tokenize(prompt, { addSpecial: false });
    expect(tokens.filter((t) => t === 1)).toEqual([1]);  // the template's BOS, once
    const options = { maxTokens: 30, temperature: 0 };
    const { content: reply } = await templated.chat(messages, options);
    expect(reply.length).toBeGreaterThan(0);
    expect(reply).toBe(await templated.generate(prompt, { ...options, addSpecial: false }));
    let streamed = '';
    for await (const piece of templated.chatStream(messages, options)) streamed += piece;
    expect(streamed).toBe(reply);
  });

  it('adds BOS for a template that does not write it; stops at the ChatML markers and the caller\'s stops', async () => {
    const options = { maxTokens: 20, temperature: 0 };
    const { content: reply } = await plain.chat(messages.slice(0, 2), options);
    expect(reply).toBe(await plain.generate(plain.formatChat(messages.slice(0, 2)),
      { ...options, stop: ['<|im_end|>', '<|im_start|>'] }));
    // The caller's stop strings still apply beside the markers.
    const prompt = plain.formatChat(messages.slice(0, 2));
    const free = await plain.generate(prompt, { maxTokens: 60, temperature: 0 });
    const cut = free.split(' ')[3];  // a word the reply is known to contain
    let stats;
    const onStats = (s) => (stats = s);
    const { content: stopped } = await plain.chat(messages.slice(0, 2), { maxTokens: 60, temperature: 0, stop: cut, onStats });
    expect(stopped).toBe(free.slice(0, free.indexOf(cut)));
    expect(stats.stopReason).toBe('stop_string');
  });

  it('rejects malformed messages', () => {
    expect(() => templated.formatChat([])).toThrow(TypeError);
    expect(() => templated.formatChat([{ role: 'user' }])).toThrow(/role.*content/);
    expect(() => templated.chat('hello')).toThrow(TypeError);
  });
});

// A chat template is code from the model file: one that would loop for
// minutes, or build a huge range, fails at once with a TypeError instead.
describe('a hostile chat template', () => {
  const hostile = [
    ['a loop of 10^8 steps', '{% for i in range(100000000) %}{% endfor %}'],
    ['nested loops of 10^4 x 10^4 steps', '{% for i in range(10000) %}{% for j in range(10000) %}x{% endfor %}{% endfor %}'],
    ['a recursive macro', '{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}'],
  ];
  it.each(hostile)('%s is refused', (name, chatTemplate) => {
    const formatter = new ChatFormatter({ chatTemplate, bosToken: '', eosToken: '' });
    const started = performance.now();
    expect(() => formatter.format([{ role: 'user', content: 'hi' }])).toThrow(TypeError);
    // Seconds, not the minutes the template asks for (a loaded machine is slower).
    expect(performance.now() - started).toBeLessThan(20_000);
  });

  it('leaves real templates and long conversations alone', () => {
    const formatter = new ChatFormatter({ chatTemplate: template, bosToken: '<s>', eosToken: '</s>' });
    const conversation = Array.from({ length: 400 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `turn ${i}` }));
    expect(formatter.format(conversation)).toContain('[USER] turn 398');
    // A template's own range() still works below the limit.
    const counting = new ChatFormatter({ chatTemplate: '{% for i in range(3) %}{{ i }}{% endfor %}', bosToken: '', eosToken: '' });
    expect(counting.format([{ role: 'user', content: 'hi' }])).toBe('012');
  });
});
