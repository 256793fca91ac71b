// Granite 3.x: the <|tool_call|> token and a JSON list of calls,
//   <|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]
// (Granite 4 writes Hermes' <tool_call> tags: hermes.js.)
import { jsonCallList } from './grammar.js';
import { parseTagged } from './hermes.js';
import { readCallList } from './scan.js';

const TOOL_CALL = '<|tool_call|>';

export const granite = {
  name: 'granite',
  detect: (source) => source.includes(TOOL_CALL),
  triggers: [TOOL_CALL],
  startTriggers: [],
  preservedTokens: [TOOL_CALL],
  parallel: true,

  grammar: (g, tools, { parallel }) => jsonCallList(g, TOOL_CALL, tools, parallel),

  parse: (text) => parseTagged(text, TOOL_CALL, (at) => readCallList(text, at)),

  write: (calls) => `${TOOL_CALL}${JSON.stringify(calls.map((c) => ({ name: c.name, arguments: c.arguments })))}`,
};
