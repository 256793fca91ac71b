// The chat templates real models carry (Qwen2, Qwen3.5, Command-R, Gemma 4:
// the vocabularies of ../shared/models/vocab/), rendered through chat()'s
// formatter exactly as Python's Jinja2 renders them the way transformers
// does (tests/js/chat-golden/, written by tools/gen_chat_golden.py):
// conversations of several turns, tools, calls and results where a template
// takes them, and a template's own refusal (raise_exception) as an error
// with its message. Each template comes from a model file through the
// engine (a small synthetic model on that vocabulary), as a user's would.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatFormatter } from '../../js/chat.js';
import { LLM } from '../../js/index.js';
import { cached, runCli, sharedModels } from '../reference/reference.mjs';

const goldenDir = new URL('./chat-golden/', import.meta.url);
const fixtures = fs.readdirSync(goldenDir).filter((f) => f.endsWith('.json')).sort()
  .map((f) => JSON.parse(fs.readFileSync(new URL(f, goldenDir), 'utf8')));

const sha256 = (text) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');

describe.each(fixtures)('$vocab', (fixture) => {
  let llm;
  beforeAll(async () => {
    const model = await cached(`chat-${path.basename(fixture.vocab, '.gguf')}.gguf`, (out) =>
      runCli(['synth', '--shape', '64x1:2/1:128', '--tied', '--type', 'q8_0', '--ctx', '256',
        '--vocab', path.join(sharedModels, 'vocab', fixture.vocab), '-o', out]));
    llm = await LLM.load(model, { threads: 1 });
  });
  afterAll(() => llm?.dispose());

  it('carries the template and the BOS and EOS texts the expectations were made with', () => {
    const main = fixture.templates.find((t) => t.source === null);
    expect(sha256(llm.info.chatTemplate)).toBe(main.sha256);
    expect(llm.info.bosToken).toBe(fixture.bos_token);
    expect(llm.info.eosToken).toBe(fixture.eos_token);
  });

  for (const template of fixture.templates) {
    describe(template.name, () => {
      it.each(template.cases)('$name', (c) => {
        // The model's own template through the public API; with tools, or a
        // named template (Command-R's tool_use), through the formatter chat()
        // uses.
        const options = { addGenerationPrompt: c.add_generation_prompt };
        let render;
        if (template.source === null && c.tools === undefined) {
          render = () => llm.formatChat(c.messages, options);
        } else {
          expect(sha256(template.source ?? llm.info.chatTemplate)).toBe(template.sha256);
          const formatter = new ChatFormatter({ ...llm.info, chatTemplate: template.source ?? llm.info.chatTemplate });
          render = () => formatter.format(c.messages, { ...options, context: { tools: c.tools } });
        }
        if (c.error === undefined) {
          expect(render()).toBe(c.expected);
        } else {
          expect(render).toThrow(TypeError);
          expect(render).toThrow(c.error);
        }
      });
    });
  }
});
