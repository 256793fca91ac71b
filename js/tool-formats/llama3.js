// Llama 3.1, 3.2 and 3.3: a reply that is one JSON object,
//   {"name": "get_weather", "parameters": {"city": "Paris"}}
// and, for the built-in tools of Llama 3.1's template (brave_search,
// wolfram_alpha, code_interpreter), Python after the <|python_tag|> token:
//   <|python_tag|>brave_search.call(query="weather in Paris")
//   <|python_tag|>print(2 ** 10)                    (code_interpreter)
// One call per reply: the templates refuse more.
import { literal } from '../gbnf.js';
import { jsonCallRule, keywordArguments } from './grammar.js';
import { callFromJson, readJson, readKeywordArguments } from './scan.js';

const PYTHON_TAG = '<|python_tag|>';
const BUILTIN_TOOLS = ['brave_search', 'wolfram_alpha', 'code_interpreter'];

export const llama3 = {
  name: 'llama3',
  detect: (source) => source.includes('<|start_header_id|>') && /ipython|<\|python_tag\|>/.test(source),
  triggers: [PYTHON_TAG],
  startTriggers: ['{'],
  preservedTokens: [PYTHON_TAG],
  parallel: false,

  // Llama 3.1's template announces the built-in tools it is given by name.
  templateContext(tools, source) {
    const builtin = tools.filter((t) => BUILTIN_TOOLS.includes(t.name)).map((t) => t.name);
    return builtin.length > 0 && source.includes('builtin_tools') ? { builtin_tools: builtin } : {};
  },

  grammar(g, tools) {
    const json = jsonCallRule(g, tools, 'parameters');
    const tagged = [json];
    for (const tool of tools.filter((t) => BUILTIN_TOOLS.includes(t.name))) {
      tagged.push(tool.name === 'code_interpreter'
        ? g.rule('code', '[^\\x00]*')
        : g.rule('builtin', `${literal(`${tool.name}.call(`)} ${keywordArguments(g, tool)} ")"`));
    }
    return `${json} | ${literal(PYTHON_TAG)} ( ${tagged.join(' | ')} )`;
  },

  parse(text) {
    if (text.trimStart().startsWith('{')) {
      const json = readJson(text, 0);
      const call = json && callFromJson(json.value);
      if (call && text.slice(json.end).trim() === '') return { content: '', toolCalls: [call] };
    }
    const tag = text.indexOf(PYTHON_TAG);
    if (tag < 0) return { content: text, toolCalls: [] };
    const call = readTagged(text, tag + PYTHON_TAG.length);
    return call ? { content: text.slice(0, tag).trim(), toolCalls: [call] } : { content: text, toolCalls: [] };
  },

  write: ([call]) => (call.name === 'code_interpreter'
    ? `${PYTHON_TAG}${call.arguments.code ?? ''}`
    : JSON.stringify({ name: call.name, parameters: call.arguments })),
};

// What follows <|python_tag|> at text[i]: a JSON call, a built-in tool's
// `name.call(...)`, or code for code_interpreter.
function readTagged(text, i) {
  const rest = text.slice(i);
  if (rest.trimStart().startsWith('{')) {
    const json = readJson(text, i);
    return json && text.slice(json.end).trim() === '' ? callFromJson(json.value) : null;
  }
  const builtin = /^([A-Za-z_]\w*)\.call\(/.exec(rest);
  if (builtin) {
    const args = readKeywordArguments(text, i + builtin[0].length);
    return args && text.slice(args.end).trim() === '' ? { name: builtin[1], arguments: args.arguments } : null;
  }
  return { name: 'code_interpreter', arguments: { code: rest } };
}
