// Mistral's [TOOL_CALLS] control token, in two generations of templates:
// Mistral 7B v0.3 and Nemo write a JSON list with 9-character ids,
//   [TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "a1B2c3D4e"}]
// and Mistral Small 3.2, Devstral and Ministral the name before [ARGS]
// (Small 3.2 with a [CALL_ID] between them),
//   [TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{"city": "Paris"}
import { literal } from '../gbnf.js';
import { argumentsRule, jsonCallList, repeatCalls } from './grammar.js';
import { parseTagged } from './hermes.js';
import { readCallList, readJson } from './scan.js';

const TOOL_CALLS = '[TOOL_CALLS]';
const ARGS = '[ARGS]';
const CALL_ID = '[CALL_ID]';
const ID = '[a-zA-Z0-9]{9}';

export const mistral = {
  name: 'mistral',
  detect: (source) => source.includes(TOOL_CALLS),
  triggers: [TOOL_CALLS],
  startTriggers: [],
  preservedTokens: [TOOL_CALLS, ARGS, CALL_ID],
  parallel: true,
  // The templates check that a call's id is 9 letters and digits.
  idLength: 9,

  grammar(g, tools, { parallel }, source) {
    if (source.includes(ARGS)) {
      const callId = source.includes(CALL_ID) ? ` ${literal(CALL_ID)} ${ID}` : '';
      const named = tools.map((tool) =>
        g.rule('tool', `${literal(tool.name)}${callId} ${literal(ARGS)} ${argumentsRule(g, tool)}`));
      return repeatCalls(g.rule('call', `${literal(TOOL_CALLS)} ( ${named.join(' | ')} )`), parallel);
    }
    return jsonCallList(g, TOOL_CALLS, tools, parallel, () => `${literal(', "id": "')} ${ID} "\\""`);
  },

  parse: (text) => parseTagged(text, TOOL_CALLS, (at) => (text.slice(at).trimStart().startsWith('[')
    ? readCallList(text, at)
    : readNamed(text, at))),

  write(calls, source) {
    if (source.includes(ARGS)) {
      const id = (c) => (source.includes(CALL_ID) ? `${CALL_ID}${c.id}` : '');
      return calls.map((c) => `${TOOL_CALLS}${c.name}${id(c)}${ARGS}${JSON.stringify(c.arguments)}`).join('');
    }
    return `${TOOL_CALLS}${JSON.stringify(calls.map((c) => ({ name: c.name, arguments: c.arguments, id: c.id })))}`;
  },
};

// name([CALL_ID]id)?[ARGS]{...}, one or more (Ministral writes several
// after one [TOOL_CALLS]), from text[i]: {calls, end}, or null.
function readNamed(text, i) {
  const calls = [];
  let end = i;
  for (;;) {
    const head = /^\s*([^[\s]+)(?:\[CALL_ID\]([A-Za-z0-9]+))?\[ARGS\]/.exec(text.slice(end));
    const json = head && readJson(text, end + head[0].length);
    const args = json?.value;
    if (!json || args === null || typeof args !== 'object' || Array.isArray(args)) break;
    calls.push(head[2] ? { name: head[1], arguments: args, id: head[2] } : { name: head[1], arguments: args });
    end = json.end;
  }
  return calls.length > 0 ? { calls, end } : null;
}
