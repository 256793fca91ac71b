// Tool calls without a model: which format each real chat template uses
// (tests/js/chat-templates/), the calls read out of replies as models write
// them in each format, and conversations with calls and results rendered
// back through the templates. tool-chat.test.mjs generates calls.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChatFormatter } from '../../js/chat.js';
import { ToolChat, normalizeTools } from '../../js/tool-calls.js';
import { TOOL_FORMATS, detectToolFormat, generic } from '../../js/tool-formats/index.js';
import { repoRoot } from './helpers.mjs';
import { TOOLS as TOOLS_CASES } from './tool-cases.mjs';

const templates = path.join(repoRoot, 'tests/js/chat-templates');
const format = (name) => [...TOOL_FORMATS, generic].find((f) => f.name === name);

const [WEATHER] = TOOLS_CASES;
const TOOLS = normalizeTools([WEATHER, { name: 'brave_search', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } }, { name: 'code_interpreter', parameters: { type: 'object', properties: { code: { type: 'string' } } } }]);

function formatter(file) {
  return new ChatFormatter({ chatTemplate: fs.readFileSync(path.join(templates, file), 'utf8'), bosToken: '<s>', eosToken: '</s>' });
}

describe('each template', () => {
  const expected = {
    'Qwen-Qwen3-0.6B.jinja': 'hermes',
    'NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja': 'hermes',
    'Qwen3.5-4B.jinja': 'qwen-xml',
    'Qwen3-Coder.jinja': 'qwen-xml',
    'meta-llama-Llama-3.1-8B-Instruct.jinja': 'llama3',
    'meta-llama-Llama-3.2-3B-Instruct.jinja': 'llama3',
    'mistralai-Mistral-Nemo-Instruct-2407.jinja': 'mistral',
    'Mistral-Small-3.2-24B-Instruct-2506.jinja': 'mistral',
    'LFM2-8B-A1B.jinja': 'lfm2',
    'google-gemma-2-2b-it.jinja': 'generic',
    'gemma-4.jinja': 'gemma4',
    'ibm-granite-granite-3.3-2B-Instruct.jinja': 'granite',
  };

  it('has its format recognized', () => {
    expect(fs.readdirSync(templates).filter((f) => f.endsWith('.jinja')).sort()).toEqual(Object.keys(expected).sort());
    for (const [file, name] of Object.entries(expected)) {
      expect(detectToolFormat(formatter(file).source).name, file).toBe(name);
    }
  });

  it.each(Object.keys(expected))('%s: describes the tools, and takes a call and its result back', (file) => {
    const f = formatter(file);
    const messages = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = new ToolChat(f, messages, { tools: [WEATHER] });
    expect(first.prompt).toContain('get_weather');
    expect(first.prompt).toContain('The weather in a city');
    // What the model would write for a call, read back as the reply.
    const written = first.format.write([{ name: 'get_weather', arguments: { city: 'Paris', days: 2 }, id: 'a1B2c3D4e' }], f.source);
    const reply = first.reply(`${written}`);
    expect(reply.toolCalls).toMatchObject([{ name: 'get_weather', arguments: { city: 'Paris', days: 2 } }]);
    // The next turn: the call and its result in the template's own shape.
    const next = new ToolChat(f, [...messages, reply, { role: 'tool', toolCallId: reply.toolCalls[0].id, content: '{"temp": 21}' }], { tools: [WEATHER] });
    expect(next.prompt.startsWith(first.prompt.slice(0, first.prompt.indexOf('Weather in Paris?')))).toBe(true);
    expect(next.prompt).toContain('Paris');
    expect(next.prompt).toContain('21');
    expect(next.prompt.length).toBeGreaterThan(first.prompt.length + 20);
  });

  it('Qwen3 gets the call back exactly as its template writes calls, and the result as a tool response', () => {
    const f = formatter('Qwen-Qwen3-0.6B.jinja');
    const call = { id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } };
    const prompt = new ToolChat(f, [
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: '', toolCalls: [call] },
      { role: 'tool', toolCallId: 'call_1', content: 'sunny' },
    ], { tools: [WEATHER] }).prompt;
    expect(prompt).toContain('<|im_start|>assistant\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>\n' +
      '<|im_start|>user\n<tool_response>\nsunny\n</tool_response><|im_end|>\n<|im_start|>assistant\n');
  });

  it('a template without tools gets them in its first user turn when it refuses a system message', () => {
    const prompt = new ToolChat(formatter('google-gemma-2-2b-it.jinja'), [{ role: 'user', content: 'Hi' }], { tools: [WEATHER] }).prompt;
    expect(prompt).toMatch(/^<s><start_of_turn>user\nYou can call these tools[\s\S]*<tool_call>[\s\S]*\n\nHi<end_of_turn>\n<start_of_turn>model\n$/);
  });

  it("Llama 3.1's template gets its built-in tools as functions (its list of them needs a filter the renderer lacks)", () => {
    const prompt = new ToolChat(formatter('meta-llama-Llama-3.1-8B-Instruct.jinja'), [{ role: 'user', content: 'Hi' }], { tools: TOOLS }).prompt;
    expect(prompt).toContain('Environment: ipython\n');
    expect(prompt).toContain('"name": "brave_search"');
  });
});

describe('reading calls', () => {
  it('hermes: one or more tagged JSON calls after text; a missing last closing tag; arguments as JSON text', () => {
    const hermes = format('hermes');
    expect(hermes.parse('Let me look.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n' +
      '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo", "days": 3}}\n</tool_call>')).toEqual({
      content: 'Let me look.',
      toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }, { name: 'get_weather', arguments: { city: 'Oslo', days: 3 } }],
    });
    expect(hermes.parse('<tool_call>{"name":"f","arguments":"{\\"x\\": 1}"}').toolCalls).toEqual([{ name: 'f', arguments: { x: 1 } }]);
    // Cut short (maxTokens): not a call, all of it stays text.
    const cut = 'Sure <tool_call>\n{"name": "get_weather", "arguments": {"ci';
    expect(hermes.parse(cut)).toEqual({ content: cut, toolCalls: [] });
    expect(hermes.parse('no calls here')).toEqual({ content: 'no calls here', toolCalls: [] });
  });

  it('llama3: a whole-reply JSON call, and built-in tools and code after <|python_tag|>', () => {
    const llama3 = format('llama3');
    expect(llama3.parse(' {"name": "get_weather", "parameters": {"city": "Paris"}}')).toEqual({
      content: '', toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }],
    });
    expect(llama3.parse('<|python_tag|>brave_search.call(query="weather in Paris")').toolCalls)
      .toEqual([{ name: 'brave_search', arguments: { query: 'weather in Paris' } }]);
    expect(llama3.parse('<|python_tag|>print(2 ** 10)').toolCalls).toEqual([{ name: 'code_interpreter', arguments: { code: 'print(2 ** 10)' } }]);
    expect(llama3.parse('<|python_tag|>{"name": "get_weather", "parameters": {"city": "Oslo"}}').toolCalls)
      .toEqual([{ name: 'get_weather', arguments: { city: 'Oslo' } }]);
    // JSON inside an answer is no call.
    const text = 'Here: {"name": "x", "parameters": {}}';
    expect(llama3.parse(text)).toEqual({ content: text, toolCalls: [] });
  });

  it('mistral: the JSON list with ids, and name[CALL_ID]id[ARGS]{...}', () => {
    const mistral = format('mistral');
    expect(mistral.parse('[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "a1B2c3D4e"}, ' +
      '{"name": "get_weather", "arguments": {"city": "Oslo"}, "id": "Z9y8X7w6v"}]').toolCalls).toEqual([
      { name: 'get_weather', arguments: { city: 'Paris' }, id: 'a1B2c3D4e' },
      { name: 'get_weather', arguments: { city: 'Oslo' }, id: 'Z9y8X7w6v' },
    ]);
    expect(mistral.parse('Checking.[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{"city": "Paris"}[TOOL_CALLS]get_weather[ARGS]{"city": "Rome"}'))
      .toEqual({
        content: 'Checking.',
        toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' }, id: 'a1B2c3D4e' }, { name: 'get_weather', arguments: { city: 'Rome' } }],
      });
  });

  it('granite: <|tool_call|> and a JSON list', () => {
    expect(format('granite').parse('<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "now", "arguments": {}}]'))
      .toEqual({ content: '', toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }, { name: 'now', arguments: {} }] });
  });

  it('lfm2: Python-style calls in a list, JSON values or Python literals', () => {
    const lfm2 = format('lfm2');
    expect(lfm2.parse('<|tool_call_start|>[get_weather(city="Paris", days=2), now()]<|tool_call_end|>Checking.')).toEqual({
      content: 'Checking.',
      toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris', days: 2 } }, { name: 'now', arguments: {} }],
    });
    expect(lfm2.parse("<|tool_call_start|>[f(a=True, b=None, c='it\\'s', d=[1, 2], e={\"k\": false})]<|tool_call_end|>").toolCalls)
      .toEqual([{ name: 'f', arguments: { a: true, b: null, c: "it's", d: [1, 2], e: { k: false } } }]);
    expect(lfm2.parse('<|tool_call_start|>[f(a=')).toEqual({ content: '<|tool_call_start|>[f(a=', toolCalls: [] });
  });

  it('gemma4: bare keys and <|"|>-quoted strings, nested, one call after another', () => {
    const gemma = format('gemma4');
    expect(gemma.parse('Let me see.<|tool_call>call:get_weather{city:<|"|>New York, NY<|"|>,days:3}<tool_call|>' +
      '<|tool_call>call:tag{tags:[<|"|>red<|"|>,<|"|>blue<|"|>],meta:{deep:{x:null}},urgent:false}<tool_call|>')).toEqual({
      content: 'Let me see.',
      toolCalls: [
        { name: 'get_weather', arguments: { city: 'New York, NY', days: 3 } },
        { name: 'tag', arguments: { tags: ['red', 'blue'], meta: { deep: { x: null } }, urgent: false } },
      ],
    });
    const cut = '<|tool_call>call:f{a:<|"|>unfinished';
    expect(gemma.parse(cut)).toEqual({ content: cut, toolCalls: [] });
    expect(() => new ToolChat(formatter('gemma-4.jinja'), [{ role: 'user', content: 'x' }], {
      tools: [{ name: 'f', parameters: { type: 'object', properties: { d: { type: 'string', format: 'date' } } } }],
    })).toThrow("tool 'f': the schema at /properties/d: 'format' cannot be enforced on a raw string");
  });

  it('qwen-xml: raw strings over lines, JSON for other types, by the tool\'s schema', () => {
    const xml = format('qwen-xml');
    const tools = normalizeTools([WEATHER, { name: 'note', parameters: { type: 'object', properties: { text: { type: 'string' }, tags: { type: 'array' } } } }]);
    expect(xml.parse('I will check.\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\nNew York\n</parameter>\n' +
      '<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=note>\n<parameter=text>\n' +
      'two\nlines {"not": "json"}\n</parameter>\n<parameter=tags>\n["a"]\n</parameter>\n</function>\n</tool_call>', tools)).toEqual({
      content: 'I will check.',
      toolCalls: [
        { name: 'get_weather', arguments: { city: 'New York', days: 3 } },
        { name: 'note', arguments: { text: 'two\nlines {"not": "json"}', tags: ['a'] } },
      ],
    });
  });
});

describe('the tool options', () => {
  const f = new ChatFormatter({ chatTemplate: null });
  const messages = [{ role: 'user', content: 'Hi' }];

  it('take OpenAI\'s tool shape or the function alone, and refuse malformed ones with TypeError', () => {
    expect(normalizeTools([WEATHER, { name: 'now' }])).toEqual([WEATHER.function, { name: 'now', parameters: { type: 'object', properties: {} } }]);
    for (const [tools, message] of [
      [{}, 'tools must be an array'],
      [[{ name: 'a b' }], 'needs a name without spaces'],
      [[{ name: 'a' }, { type: 'function', function: { name: 'a' } }], "two tools are named 'a'"],
      [[{ type: 'retrieval' }], "must be {type: 'function'"],
      [[{ name: 'a', parameters: [] }], 'parameters must be a JSON schema object'],
    ]) {
      expect(() => new ToolChat(f, messages, { tools }), message).toThrow(TypeError);
      expect(() => new ToolChat(f, messages, { tools })).toThrow(message);
    }
    expect(() => new ToolChat(f, messages, { tools: [WEATHER], toolChoice: 'always' })).toThrow("toolChoice must be 'auto'");
    expect(() => new ToolChat(f, messages, { tools: [WEATHER], toolChoice: { name: 'nope' } })).toThrow("toolChoice names 'nope'");
    expect(() => new ToolChat(f, messages, { tools: [], toolChoice: 'required' })).toThrow('needs at least one tool');
    expect(() => new ToolChat(f, [{ role: 'tool', content: 1 }], { tools: [WEATHER] })).toThrow('content must be a string');
  });

  it('toolChoice picks the grammar: lazy with triggers for auto, from the start for required, none for none', () => {
    const auto = new ToolChat(f, messages, { tools: [WEATHER] }).constraint;
    expect(auto).toMatchObject({ kind: 'grammar', triggers: ['<tool_call>'], startTriggers: [] });
    expect(auto.schemas).toEqual([{ name: expect.any(String), schema: JSON.stringify(WEATHER.function.parameters) }]);
    const required = new ToolChat(f, messages, { tools: [WEATHER], toolChoice: 'required' }).constraint;
    expect(required).toMatchObject({ triggers: [], startTriggers: [] });
    expect(required.text).toBe(auto.text);
    expect(new ToolChat(f, messages, { tools: [WEATHER], toolChoice: 'none' }).constraint).toBeNull();
    // One named tool: only its call, and only one, parallel calls allowed or not.
    for (const parallelToolCalls of [false, true]) {
      const one = new ToolChat(f, messages, { tools: TOOLS, toolChoice: { type: 'function', function: { name: 'brave_search' } }, parallelToolCalls });
      expect(one.constraint.schemas).toHaveLength(1);
      expect(one.constraint.text).not.toContain(')*');
    }
    expect(new ToolChat(f, messages, { tools: TOOLS, toolChoice: 'required' }).constraint.text).toContain(')*');
  });

  it('a call cut short (by maxTokens) is dropped: it is neither content nor a call', () => {
    const call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
    const cut = '<tool_call>\n{"name": "get_';
    for (const toolChoice of ['required', 'auto', { name: 'get_weather' }]) {
      const chat = new ToolChat(f, messages, { tools: [WEATHER], toolChoice });
      expect(chat.reply(`${call}\n${cut}`)).toMatchObject({ content: '', toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] });
      expect(chat.reply(cut)).toEqual({ role: 'assistant', content: '', toolCalls: [] });
    }
    const auto = new ToolChat(f, messages, { tools: [WEATHER] });
    expect(auto.reply(`Let me look. ${cut}`)).toEqual({ role: 'assistant', content: 'Let me look.', toolCalls: [] });
    // Text that only might have begun a call is content; with 'none' nothing is read.
    expect(auto.reply('a <tool_cal').content).toBe('a <tool_cal');
    expect(new ToolChat(f, messages, { tools: [WEATHER], toolChoice: 'none' }).reply(cut).content).toBe(cut);
    // A reply that is one JSON call (Llama 3), cut short.
    const llama = new ToolChat(formatter('meta-llama-Llama-3.2-3B-Instruct.jinja'), messages, { tools: [WEATHER], toolChoice: 'required' });
    expect(llama.reply(' {"name": "get_weather", "parameters": {"ci').content).toBe('');
    // Mistral's JSON list: the whole list is cut.
    const mistral = new ToolChat(formatter('mistralai-Mistral-Nemo-Instruct-2407.jinja'), messages, { tools: [WEATHER] });
    expect(mistral.reply('Sure. [TOOL_CALLS][{"name": "get_weather", "arguments": {}, "id": "a1B2c3D4e"}, {"na'))
      .toEqual({ role: 'assistant', content: 'Sure.', toolCalls: [] });
  });

  it('the streamed content stops where a call begins, holding back what may begin one', () => {
    const chat = new ToolChat(f, messages, { tools: [WEATHER] });
    const shown = [];
    const filter = chat.contentFilter((piece) => shown.push(piece));
    const pieces = ['Let', ' me <', 'tool', '_call>\n{"name": "get_weather", "arguments": {"city": "X"}}\n</tool_call>'];
    for (const p of pieces) filter.push(p);
    expect(shown.join('')).toBe('Let me ');
    expect(filter.finish(pieces.join('')).toolCalls).toHaveLength(1);
    // A held-back beginning that was no call after all comes out at the end.
    const shown2 = [];
    const filter2 = chat.contentFilter((piece) => shown2.push(piece));
    filter2.push('a <tool');
    expect(shown2.join('')).toBe('a ');
    expect(filter2.finish('a <tool').content).toBe('a <tool');
    expect(shown2.join('')).toBe('a <tool');
  });
});
