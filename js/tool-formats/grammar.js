// A tool-call grammar under construction: GBNF rules the formats write, and
// the JSON schemas whose values the engine's compiler writes rules for
// (each named by a rule the grammar uses). The result is the engine's
// output constraint (js/options.js describes the plain kinds).
import { literal, subsequence, textWithout } from '../gbnf.js';

export class ToolGrammar {
  #rules = [];
  #schemas = [];
  #count = 0;
  // The tool each schema's rule is named for, to name it in errors.
  labels = new Map();

  // A new rule with this body; its name starts with `prefix`.
  rule(prefix, body) {
    const name = this.name(prefix);
    this.define(name, body);
    return name;
  }

  // A new rule name, for a rule defined later with define() (one that
  // refers to itself).
  name(prefix) {
    return `${prefix}-${(this.#count += 1)}`;
  }

  define(name, body) {
    this.#rules.push(`${name} ::= ${body}`);
  }

  // A rule matching one JSON value valid against `schema`; `label` says
  // where it comes from in errors ("tool 'get_weather'").
  schema(prefix, schema, label) {
    const name = this.name(prefix);
    this.#schemas.push({ name, schema: JSON.stringify(schema) });
    if (label) this.labels.set(name, label);
    return name;
  }

  // A rule matching any text without `delimiter` (which may follow it).
  textWithout(prefix, delimiter) {
    const [expression, rules] = textWithout(this.name(prefix), delimiter);
    this.#rules.push(rules.trimEnd());
    return expression;
  }

  // Items in order, each required or optional, with `separator` between the
  // ones written (see gbnf.js).
  subsequence(items, separator) {
    return subsequence(items, separator, (body) => this.rule('seq', body));
  }

  // The constraint for the engine: root ::= `root`, lazy with `triggers`
  // (and `startTriggers`) unless `lazy` is false.
  constraint(root, { triggers = [], startTriggers = [], preservedTokens = [], lazy = true }) {
    const text = [`root ::= ${root}`, ...this.#rules].join('\n');
    return {
      kind: 'grammar',
      text: `${text}\n`,
      schemas: this.#schemas,
      preservedTokens,
      triggers: lazy ? triggers : [],
      startTriggers: lazy ? startTriggers : [],
    };
  }
}

// A rule for the JSON object {"name": "<tool's name>", "<argumentsKey>":
// <arguments>} of one of `tools`, written as models write it: one space
// after each colon and comma. extra(tool): more members after the arguments.
export function jsonCallRule(g, tools, argumentsKey, extra = () => '') {
  const alternatives = tools.map((tool) => {
    const members = `${literal(`${JSON.stringify(tool.name)}, "${argumentsKey}": `)} ${argumentsRule(g, tool)}`;
    const more = extra(tool);
    return g.rule('tool', more ? `${members} ${more}` : members);
  });
  return g.rule('call', `${literal('{"name": ')} ( ${alternatives.join(' | ')} ) "}"`);
}

// `marker` and a JSON list of calls (one, unless parallel), as Mistral's and
// Granite's models write them: [{"name": ..., "arguments": ...}, ...].
export function jsonCallList(g, marker, tools, parallel, extra) {
  const call = jsonCallRule(g, tools, 'arguments', extra);
  return `${literal(`${marker}[`)} ${repeatCalls(call, parallel, '", "')} "]"`;
}

// A rule for a tool's arguments: one JSON value valid against its parameters.
export function argumentsRule(g, tool) {
  return g.schema('args', tool.parameters, `tool '${tool.name}'`);
}

// One call or (parallel) one or more with `separator` between them.
export function repeatCalls(call, parallel, separator = '') {
  return parallel ? `${call} ( ${separator ? `${separator} ` : ''}${call} )*` : call;
}

// The keyword arguments `name=<JSON value>, ...` for a tool whose
// parameters are an object schema: its properties in the schema's order,
// the required ones always (properties it does not list are not written:
// stricter than the schema, never looser).
export function keywordArguments(g, tool) {
  const items = objectProperties(tool).map(({ key, schema, required }) => ({
    expr: g.rule('arg', `${literal(`${key}=`)} ${g.schema('value', schema, `tool '${tool.name}', parameter '${key}'`)}`),
    required,
  }));
  return g.subsequence(items, '", "');
}

// The properties of a tool's parameters schema: [{key, schema, required}],
// each schema carrying the document's $defs so its $refs still resolve.
// Formats that write arguments as keyword arguments need an object schema.
export function objectProperties(tool) {
  const { parameters } = tool;
  const keys = Object.keys(parameters);
  const allowed = new Set(['type', 'properties', 'required', 'additionalProperties', '$defs', 'definitions',
    'title', 'description', '$schema', '$comment', '$id', 'examples', 'default']);
  const other = keys.find((k) => !allowed.has(k));
  if ((parameters.type !== undefined && parameters.type !== 'object') || other !== undefined) {
    throw new TypeError(`tool '${tool.name}': this model writes arguments as keyword arguments, so its parameters ` +
      `must be an object schema with properties${other ? ` ('${other}' is not supported here)` : ''}`);
  }
  const required = new Set(parameters.required ?? []);
  const defs = {};
  if (parameters.$defs) defs.$defs = parameters.$defs;
  if (parameters.definitions) defs.definitions = parameters.definitions;
  const properties = Object.entries(parameters.properties ?? {}).map(([key, schema]) => ({
    key,
    schema: typeof schema === 'object' && schema !== null && !Array.isArray(schema) ? { ...schema, ...defs } : schema,
    required: required.has(key),
  }));
  for (const key of required) {
    if (!(key in (parameters.properties ?? {}))) properties.push({ key, schema: true, required: true });
  }
  return properties;
}
