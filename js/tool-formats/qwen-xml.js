// XML-style calls, the format of Qwen3-Coder, Qwen3.5 and Nemotron Nano 3:
//   <tool_call>
//   <function=get_weather>
//   <parameter=city>
//   Paris
//   </parameter>
//   </function>
//   </tool_call>
// A string parameter is written as it is (no quotes); any other value as JSON.
import { literal } from '../gbnf.js';
import { objectProperties, repeatCalls } from './grammar.js';
import { parseTagged } from './hermes.js';

const OPEN = '<tool_call>';
const CLOSE = '</tool_call>';
const VALUE_END = '\n</parameter>';
const ANNOTATIONS = new Set(['title', 'description', 'default', 'examples', '$comment', 'deprecated', '$defs',
  'definitions']);

export const qwenXml = {
  name: 'qwen-xml',
  detect: (source) => source.includes(OPEN) && source.includes('<function=') && source.includes('<parameter='),
  triggers: [OPEN],
  startTriggers: [],
  preservedTokens: [OPEN, CLOSE],
  parallel: true,

  grammar(g, tools, { parallel }) {
    const calls = tools.map((tool) => {
      const items = objectProperties(tool).map(({ key, schema, required }) => {
        const value = rawStringValues(schema);
        let valueRule;
        if (value === true) valueRule = g.textWithout('text', VALUE_END);
        else if (value) valueRule = g.rule('choice', value.map(literal).join(' | '));
        else valueRule = g.schema('value', schema, `tool '${tool.name}', parameter '${key}'`);
        return { expr: g.rule('param', `${literal(`<parameter=${key}>\n`)} ${valueRule} ${literal(`${VALUE_END}\n`)}`), required };
      });
      return g.rule('function', `${literal(`<function=${tool.name}>\n`)} ${g.subsequence(items, '')} "</function>\\n"`);
    });
    const call = g.rule('call', `${literal(`${OPEN}\n`)} ( ${calls.join(' | ')} ) ${literal(CLOSE)}`);
    return repeatCalls(call, parallel, '"\\n"');
  },

  parse: (text, tools) => parseTagged(text, OPEN, (at) => {
    const fn = /^\s*<function=([^>\n]+)>\n?/.exec(text.slice(at, at + 300));
    if (!fn) return null;
    const schema = tools.find((t) => t.name === fn[1])?.parameters;
    const args = {};
    let i = at + fn[0].length;
    for (;;) {
      const param = /^\s*<parameter=([^>\n]+)>\n?/.exec(text.slice(i, i + 300));
      if (!param) break;
      const valueStart = i + param[0].length;
      // The value ends at the first "\n</parameter>" (or, unconstrained, "</parameter>").
      const close = [VALUE_END, '</parameter>'].map((s) => [text.indexOf(s, valueStart), s]).find(([e]) => e >= 0);
      if (!close) return null;
      args[param[1]] = readValue(text.slice(valueStart, close[0]), schema?.properties?.[param[1]]);
      i = close[0] + close[1].length;
    }
    const close = /^\s*<\/function>\s*(<\/tool_call>|$)/.exec(text.slice(i));
    return close ? { calls: [{ name: fn[1], arguments: args }], end: i + close[0].length } : null;
  }),

  write: (calls) => calls.map((c) => `${OPEN}\n<function=${c.name}>\n${Object.entries(c.arguments)
    .map(([k, v]) => `<parameter=${k}>\n${typeof v === 'string' ? v : JSON.stringify(v)}\n</parameter>\n`).join('')}` +
    `</function>\n${CLOSE}`).join('\n'),
};

// How a parameter's value is written raw: true for any text (a plain string
// schema), a list of strings for an enum/const of strings; false when it is
// written as JSON (other types, and strings with lengths, patterns or formats).
function rawStringValues(schema) {
  if (schema === null || typeof schema !== 'object') return false;
  const keys = Object.keys(schema).filter((k) => !ANNOTATIONS.has(k));
  const values = schema.enum ?? ('const' in schema ? [schema.const] : null);
  if (values) {
    const onlyValues = keys.every((k) => k === 'enum' || k === 'const' || (k === 'type' && schema.type === 'string'));
    return onlyValues && values.length > 0 && values.every((v) => typeof v === 'string') ? values : false;
  }
  return keys.length === 1 && schema.type === 'string';
}

function readValue(raw, schema) {
  if (rawStringValues(schema)) return raw;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}
