// LFM2 and LFM2.5 (Liquid): Python-style calls in a list between tokens,
//   <|tool_call_start|>[get_weather(city="Paris"), get_time(zone="CET")]<|tool_call_end|>
// with JSON values (true, false and null as JSON writes them). The template
// does not write a reply's tool calls, so they go back as the reply's text.
import { literal } from '../gbnf.js';
import { keywordArguments, repeatCalls } from './grammar.js';
import { parseTagged } from './hermes.js';
import { closing, readKeywordArguments, skipSpace } from './scan.js';

const START = '<|tool_call_start|>';
const END = '<|tool_call_end|>';

export const lfm2 = {
  name: 'lfm2',
  detect: (source) => source.includes('<|tool_list_start|>') || source.includes('List of tools: ['),
  triggers: [START],
  startTriggers: [],
  preservedTokens: [START, END],
  parallel: true,

  grammar(g, tools, { parallel }) {
    const calls = tools.map((tool) => g.rule('call', `${literal(`${tool.name}(`)} ${keywordArguments(g, tool)} ")"`));
    const call = g.rule('calls', calls.join(' | '));
    return `${literal(`${START}[`)} ${repeatCalls(call, parallel, '", "')} ${literal(`]${END}`)}`;
  },

  parse: (text) => parseTagged(text, START, (at) => readList(text, at)),

  write: (calls) => `${START}[${calls.map((c) => `${c.name}(${Object.entries(c.arguments)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ')})`).join(', ')}]${END}`,
};

// [name(args), ...] and the end token (which may be missing at the very
// end): {calls, end}, or null.
function readList(text, i) {
  let at = skipSpace(text, i);
  if (text[at] !== '[') return null;
  const calls = [];
  for (;;) {
    const name = /^\s*([A-Za-z_][\w.-]*)\(/.exec(text.slice(at + 1));
    const args = name && readKeywordArguments(text, at + 1 + name[0].length);
    if (!args) return null;
    calls.push({ name: name[1], arguments: args.arguments });
    at = skipSpace(text, args.end);
    if (text[at] === ']') break;
    if (text[at] !== ',') return null;
  }
  const end = closing(text, at + 1, END);
  return end < 0 ? null : { calls, end };
}
