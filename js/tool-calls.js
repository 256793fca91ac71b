// Tool calls in chat(): the tools go to the model's chat template, which
// describes them to the model in its own words; the reply is generated under
// a grammar that lets the model write either plain text or calls in the
// template's format, with arguments valid against each tool's JSON schema;
// and the calls are read back out of the reply. Messages of role 'tool' (a
// call's result) and assistant messages with toolCalls go back through the
// template the same way.
//
// The grammar is lazy with tool choice 'auto' (llama.cpp's lazy grammars):
// the model writes freely until it begins a call (a trigger such as
// <tool_call>), and from there on the call must be well-formed. 'required'
// applies the grammar from the first token; 'none' describes the tools but
// neither constrains nor reads calls.
import { literal } from './gbnf.js';
import { ToolGrammar } from './tool-formats/grammar.js';
import { detectToolFormat, generic } from './tool-formats/index.js';

const TOOL_CHOICES = ['auto', 'none', 'required'];
const THINK_END = '</think>';

// Everything one chat() with tools needs: the prompt, the engine's output
// constraint (null for 'none'), and how to read the reply.
export class ToolChat {
  // formatter: the model's ChatFormatter; options: {tools, toolChoice,
  // parallelToolCalls, addGenerationPrompt (formatChat's)}. Throws
  // TypeError for anything malformed.
  constructor(formatter, messages, { tools, toolChoice = 'auto', parallelToolCalls = true, addGenerationPrompt = true }) {
    this.tools = normalizeTools(tools);
    const choice = normalizeToolChoice(toolChoice, this.tools);
    if (typeof parallelToolCalls !== 'boolean') throw new TypeError('parallelToolCalls must be a boolean');
    const source = formatter.source;
    // A template that describes tools in a format we cannot read gets the generic one.
    const detected = detectToolFormat(source);
    this.format = detected === generic || formatter.knowsTools() ? detected : generic;
    this.mode = choice.mode;
    this.idLength = this.format.idLength;
    const render = (ms, context = {}) => formatter.format(ms, { addGenerationPrompt, context });
    this.prompt = renderPrompt(render, source, messages, this.tools, this.format, choice.mode === 'required');
    this.constraint = null;
    this.labels = new Map();
    this.reasons = false;  // whether a 'required' reply may reason (<think>) before its calls
    if (this.mode !== 'none') {
      const g = new ToolGrammar();
      const parallel = parallelToolCalls && this.format.parallel && !choice.single;
      let root = this.format.grammar(g, choice.tools, { parallel }, source);
      // A prompt that opens the model's reasoning (Qwen3.5's <think>) lets it
      // finish that before the calls it must make.
      this.reasons = this.mode === 'required' && /<think>\s*$/.test(this.prompt);
      if (this.reasons) {
        root = `${g.textWithout('thought', THINK_END)} ${literal(THINK_END)} [ \n]{0,4} ( ${root} )`;
      }
      this.constraint = g.constraint(root, { ...this.format, lazy: this.mode === 'auto' });
      this.labels = g.labels;
    }
  }

  // An engine error about the grammar, with its schemas named by their tools.
  explainError(error) {
    for (const [name, label] of this.labels) {
      if (error?.message?.includes(`schema '${name}'`)) error.message = error.message.replace(`schema '${name}'`, label);
    }
    return error;
  }

  // The reply {role: 'assistant', content, toolCalls} in `text`. Under the
  // grammar, everything from where the calls begin (the first trigger; all of
  // a 'required' reply but its reasoning) is calls and nothing else: what the
  // format cannot read there is a call cut short (by maxTokens or a stop
  // string: the stats' stopReason says which), never content. It is dropped.
  reply(text) {
    const { content, toolCalls } = this.mode === 'none' ? { content: text, toolCalls: [] } : this.#readCalls(text);
    return {
      role: 'assistant',
      content,
      toolCalls: toolCalls.map((c) => ({ id: c.id ?? newCallId(this.idLength), name: c.name, arguments: c.arguments })),
    };
  }

  #readCalls(text) {
    const { triggers, startTriggers } = this.format;
    // The reasoning a 'required' reply may begin with is free text: the calls follow it.
    const from = this.reasons && text.includes(THINK_END) ? text.indexOf(THINK_END) + THINK_END.length : 0;
    const start = firstTrigger(text.slice(from), triggers, startTriggers);
    if (!start.found) return { content: text, toolCalls: [] };
    const callsAt = from + start.safe;
    const { toolCalls } = this.format.parse(text.slice(callsAt), this.tools);
    return { content: text.slice(0, callsAt).trim(), toolCalls };
  }

  // A filter for the reply's text as it streams: it passes on to onContent
  // the text before the first call, holding back what may be a call's
  // beginning; finish(text) then passes on whatever the whole reply shows
  // to be content after all (a held-back beginning that became no call) and
  // returns the reply.
  contentFilter(onContent) {
    const { triggers = [], startTriggers = [] } = this.mode === 'none' ? {} : this.format;
    let text = '';
    let sent = 0;
    let inCall = false;
    return {
      push(piece) {
        text += piece;
        if (inCall) return;
        const at = firstTrigger(text, triggers, startTriggers);
        if (at.found) inCall = true;
        if (at.safe > sent) {
          onContent(text.slice(sent, at.safe));
          sent = at.safe;
        }
      },
      finish: (whole) => {
        const reply = this.reply(whole);
        const shown = whole.slice(0, sent);
        if (reply.content.length > sent && reply.content.startsWith(shown)) onContent(reply.content.slice(sent));
        return reply;
      },
    };
  }
}

// How far `text` can be shown as content: up to the first trigger (found),
// or to where a trigger might be beginning.
function firstTrigger(text, triggers, startTriggers) {
  const start = text.length - text.trimStart().length;
  const head = text.slice(start);
  for (const t of startTriggers) {
    if (head.startsWith(t)) return { found: true, safe: start };
    if (t.startsWith(head)) return { found: false, safe: 0 };  // still may become one
  }
  let safe = text.length;
  for (const t of triggers) {
    const at = text.indexOf(t);
    if (at >= 0) return { found: true, safe: at };
    for (let n = Math.min(t.length - 1, text.length); n > 0; n -= 1) {
      if (text.endsWith(t.slice(0, n))) {
        safe = Math.min(safe, text.length - n);
        break;
      }
    }
  }
  return { found: false, safe };
}

// Tools as [{name, description, parameters}], from OpenAI's shape
// ({type: 'function', function: {...}}) or that inner object alone.
export function normalizeTools(tools) {
  if (!Array.isArray(tools)) throw new TypeError('tools must be an array of tools');
  const names = new Set();
  return tools.map((tool, i) => {
    const fn = tool?.type === 'function' && tool.function !== undefined ? tool.function : tool;
    if (fn === null || typeof fn !== 'object' || (tool.type !== undefined && tool.type !== 'function')) {
      throw new TypeError(`tools[${i}] must be {type: 'function', function: {name, description, parameters}}`);
    }
    const { name, description, parameters = { type: 'object', properties: {} } } = fn;
    if (typeof name !== 'string' || !/^[^\s"'<>()[\]{}=,]+$/.test(name)) {
      throw new TypeError(`tools[${i}] needs a name without spaces, quotes or brackets`);
    }
    if (names.has(name)) throw new TypeError(`two tools are named '${name}'`);
    names.add(name);
    if (description !== undefined && typeof description !== 'string') {
      throw new TypeError(`tool '${name}': description must be a string`);
    }
    if (parameters === null || typeof parameters !== 'object' || Array.isArray(parameters)) {
      throw new TypeError(`tool '${name}': parameters must be a JSON schema object`);
    }
    return description === undefined ? { name, parameters } : { name, description, parameters };
  });
}

// {mode: 'auto' | 'none' | 'required', tools: the ones the model may call,
// single: whether the reply is one call whatever parallelToolCalls says}.
function normalizeToolChoice(choice, tools) {
  if (TOOL_CHOICES.includes(choice)) {
    if (choice === 'required' && tools.length === 0) throw new TypeError("toolChoice 'required' needs at least one tool");
    return { mode: tools.length === 0 ? 'none' : choice, tools };
  }
  const name = choice?.type === 'function' ? choice.function?.name : choice?.name;
  if (typeof name !== 'string') {
    throw new TypeError("toolChoice must be 'auto', 'none', 'required' or {type: 'function', function: {name}}");
  }
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new TypeError(`toolChoice names '${name}', which is not one of the tools`);
  // One call of it, as OpenAI's forced function: parallelToolCalls cannot make more.
  return { mode: 'required', tools: [tool], single: true };
}

// The prompt: the messages in the template's shape, with the tools.
// render(messages, context) renders the template.
function renderPrompt(render, source, messages, tools, format, required) {
  if (!Array.isArray(messages) || messages.length === 0) throw new TypeError('messages must be a non-empty array');
  const writes = format !== generic && source.includes('tool_calls');
  // A template with its own shape for results (Gemma 4's tool_responses) gets them so.
  const plain = templateMessages(messages, format, writes, source);
  const converted = format.adaptMessages ? format.adaptMessages(plain) : plain;
  if (tools.length === 0) return render(converted);
  if (format !== generic) {
    const context = { tools: tools.map((t) => ({ type: 'function', function: t })) };
    const extra = format.templateContext?.(tools, source);
    try {
      return render(converted, { ...context, ...extra });
    } catch (error) {
      // Llama 3.1 lists its built-in tools with a filter (reject) the
      // renderer lacks: they are then described like the others.
      if (!extra) throw error;
      return render(converted, context);
    }
  }
  // The instructions go in the system message, or, for templates that take
  // none, at the start of the first user message.
  const instructions = generic.instructions(tools, required);
  const [first, ...rest] = converted;
  try {
    const system = first.role === 'system'
      ? [{ ...first, content: `${first.content}\n\n${instructions}` }, ...rest]
      : [{ role: 'system', content: instructions }, ...converted];
    return render(system);
  } catch {
    const userAt = converted.findIndex((m) => m.role === 'user');
    if (userAt < 0) throw new TypeError('the model\'s chat template takes no system message, and there is no user message for the tools');
    return render(converted.map((m, i) => (i === userAt ? { ...m, content: `${instructions}\n\n${m.content}` } : m)));
  }
}

// Our messages ({role, content, toolCalls, toolCallId, name}) as chat
// templates read them (OpenAI's shape: tool_calls, tool_call_id). Where the
// template does not write tool calls (`writes` false), they become the
// reply's text; with the generic format, results become user turns.
function templateMessages(messages, format, writes, source) {
  const callNames = new Map();
  const out = [];
  messages.forEach((m, i) => {
    if (m === null || typeof m !== 'object' || typeof m.role !== 'string') {
      throw new TypeError(`messages[${i}] must be {role, content}`);
    }
    const { role } = m;
    const calls = m.toolCalls ?? [];
    const content = m.content ?? (role === 'assistant' && calls.length > 0 ? '' : m.content);
    if (typeof content !== 'string') throw new TypeError(`messages[${i}].content must be a string`);
    if (!Array.isArray(calls) || (calls.length > 0 && role !== 'assistant')) {
      throw new TypeError(`messages[${i}].toolCalls must be an array, on an assistant message`);
    }
    calls.forEach((c, j) => {
      if (typeof c?.name !== 'string' || c.arguments === null || typeof c.arguments !== 'object' || Array.isArray(c.arguments)) {
        throw new TypeError(`messages[${i}].toolCalls[${j}] must be {id, name, arguments: object}`);
      }
      if (c.id !== undefined) callNames.set(c.id, c.name);
    });
    if (calls.length > 0) {
      if (!writes) {
        const written = format.write(calls, source);
        out.push({ role, content: content ? `${content}\n${written}` : written });
      } else {
        const toolCalls = calls.map((c) => ({ id: c.id ?? newCallId(format.idLength), type: 'function', function: { name: c.name, arguments: c.arguments } }));
        out.push({ role, content, tool_calls: toolCalls });
      }
    } else if (role === 'tool') {
      if (m.toolCallId !== undefined && typeof m.toolCallId !== 'string') throw new TypeError(`messages[${i}].toolCallId must be a string`);
      const name = m.name ?? callNames.get(m.toolCallId);
      if (format === generic) {
        const result = generic.toolResult(content);
        const previous = out.at(-1);
        if (previous?.role === 'user' && previous.toolResults) previous.content += `\n${result}`;
        else out.push({ role: 'user', content: result, toolResults: true });
      } else {
        out.push({ role, content, ...(m.toolCallId === undefined ? {} : { tool_call_id: m.toolCallId }), ...(name === undefined ? {} : { name }) });
      }
    } else {
      out.push({ role, content });
    }
  });
  return out.map(({ toolResults, ...m }) => m);
}

const ID_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

// A call id for a call the model wrote none for: `length` letters and digits
// where the template checks that (Mistral's 9), else call_ and 24 of them.
function newCallId(length) {
  let id = '';
  for (let i = 0; i < (length ?? 24); i += 1) id += ID_CHARS[Math.floor(Math.random() * ID_CHARS.length)];
  return length ? id : `call_${id}`;
}
