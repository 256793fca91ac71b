// Hermes-style tool calls, the format of Qwen2.5, Qwen3, Hermes 2 Pro/3 and
// SmolLM3's templates: a JSON object per call between tags,
//   <tool_call>
//   {"name": "get_weather", "arguments": {"city": "Paris"}}
//   </tool_call>
// It is also what models whose template knows no tools are asked to write
// (generic.js).
import { literal } from '../gbnf.js';
import { jsonCallRule, repeatCalls } from './grammar.js';
import { callFromJson, closing, readJson } from './scan.js';

const OPEN = '<tool_call>';
const CLOSE = '</tool_call>';

export const hermes = {
  name: 'hermes',
  detect: (source) => source.includes(OPEN),
  triggers: [OPEN],
  startTriggers: [],
  preservedTokens: [OPEN, CLOSE],
  parallel: true,

  grammar(g, tools, { parallel }) {
    const call = g.rule('tagged', `${literal(`${OPEN}\n`)} ${jsonCallRule(g, tools, 'arguments')} ${literal(`\n${CLOSE}`)}`);
    return repeatCalls(call, parallel, '"\\n"');
  },

  parse: (text) => parseTagged(text, OPEN, (at) => {
    const json = readJson(text, at);
    const call = json && callFromJson(json.value);
    if (!call) return null;
    const end = closing(text, json.end, CLOSE);
    return end < 0 ? null : { calls: [call], end };
  }),

  write: (calls) => calls.map((c) => `${OPEN}\n${JSON.stringify({ name: c.name, arguments: c.arguments })}\n${CLOSE}`)
    .join('\n'),
};

// The calls of `text` in blocks that each begin with `open`, read by
// readBlock(index past `open`) → {calls, end} or null; the text around them
// is the content. A block that cannot be read ends the search: it and the
// rest stay content.
export function parseTagged(text, open, readBlock) {
  const toolCalls = [];
  const content = [];
  let i = 0;
  for (;;) {
    const at = text.indexOf(open, i);
    const read = at < 0 ? null : readBlock(at + open.length);
    if (!read) break;
    content.push(text.slice(i, at));
    toolCalls.push(...read.calls);
    i = read.end;
  }
  content.push(text.slice(i));
  return { content: toolCalls.length > 0 ? content.join('').trim() : text, toolCalls };
}
