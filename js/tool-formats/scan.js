// Reading tool calls out of a reply: JSON values and Python-style keyword
// arguments at a position in the text. The grammars make the model write
// them well-formed; these readers also cope with text written without one
// (tool_choice 'none' is not parsed, but a reply cut by maxTokens is), and
// return null where the text is not what they read.

// The JSON value starting at text[i] (after whitespace): {value, end}, or null.
export function readJson(text, i) {
  const start = skipSpace(text, i);
  const end = jsonEnd(text, start);
  if (end < 0) return null;
  try {
    return { value: JSON.parse(text.slice(start, end)), end };
  } catch {
    return null;
  }
}

// The index just past the JSON value that starts at text[i], or -1: the
// brackets balanced outside strings, a string closed, or a scalar's run of
// characters. JSON.parse then checks it.
function jsonEnd(text, i) {
  const first = text[i];
  if (first === '"') return stringEnd(text, i);
  if (first !== '{' && first !== '[') {
    const match = /^(?:-?\d[\d.eE+-]*|true|false|null)/.exec(text.slice(i, i + 400));
    return match ? i + match[0].length : -1;
  }
  let depth = 0;
  for (let j = i; j < text.length; j += 1) {
    const c = text[j];
    if (c === '"') {
      j = stringEnd(text, j) - 1;
      if (j < 0) return -1;
    } else if (c === '{' || c === '[') {
      depth += 1;
    } else if (c === '}' || c === ']') {
      depth -= 1;
      if (depth === 0) return j + 1;
    }
  }
  return -1;
}

// The index just past the JSON string whose quote is at text[i], or -1.
function stringEnd(text, i) {
  for (let j = i + 1; j < text.length; j += 1) {
    if (text[j] === '\\') j += 1;
    else if (text[j] === '"') return j + 1;
  }
  return -1;
}

export function skipSpace(text, i) {
  while (i < text.length && ' \t\r\n'.includes(text[i])) i += 1;
  return i;
}

// `prefix` at text[i] (after whitespace): the index past it, or -1.
export function expect(text, i, prefix) {
  const at = skipSpace(text, i);
  return text.startsWith(prefix, at) ? at + prefix.length : -1;
}

// The index past `close` at text[i] (after whitespace); the text's end if
// only whitespace is left (a model may stop before writing it); else -1.
export function closing(text, i, close) {
  const end = expect(text, i, close);
  if (end >= 0) return end;
  return text.slice(i).trim() === '' ? text.length : -1;
}

// A call's name and arguments from the JSON object a model wrote for it:
// {name, arguments} (or `parameters`, Llama 3's word); arguments given as a
// JSON string are parsed. null if it is not that shape.
export function callFromJson(value, argumentsKeys = ['arguments', 'parameters']) {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || typeof value.name !== 'string') return null;
  const key = argumentsKeys.find((k) => k in value);
  let args = key === undefined ? {} : value[key];
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args);
    } catch {
      return null;
    }
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return null;
  const call = { name: value.name, arguments: args };
  if (typeof value.id === 'string') call.id = value.id;
  return call;
}

// A JSON list of calls [{"name": ..., "arguments": ...}, ...] at text[i]:
// {calls, end}, or null.
export function readCallList(text, i) {
  const json = readJson(text, i);
  if (!json || !Array.isArray(json.value)) return null;
  const calls = json.value.map((v) => callFromJson(v));
  return calls.length > 0 && calls.every(Boolean) ? { calls, end: json.end } : null;
}

// Python-style keyword arguments `name=value, ...` from text[i] up to the
// closing ')': {arguments, end (past the ')')}, or null. Values are JSON, or
// the Python literals a model may write unconstrained (True, False, None,
// 'single-quoted' strings).
export function readKeywordArguments(text, i) {
  const args = {};
  let at = skipSpace(text, i);
  if (text[at] === ')') return { arguments: args, end: at + 1 };
  for (;;) {
    const key = /^[A-Za-z_][\w.-]*/.exec(text.slice(at, at + 200));
    if (!key) return null;
    at = expect(text, at + key[0].length, '=');
    if (at < 0) return null;
    const value = readPythonValue(text, at);
    if (!value) return null;
    args[key[0]] = value.value;
    at = skipSpace(text, value.end);
    if (text[at] === ')') return { arguments: args, end: at + 1 };
    if (text[at] !== ',') return null;
    at = skipSpace(text, at + 1);
  }
}

const PYTHON_WORDS = { True: true, False: false, None: null };

function readPythonValue(text, i) {
  const json = readJson(text, i);
  if (json) return json;
  const at = skipSpace(text, i);
  const word = /^(True|False|None)\b/.exec(text.slice(at, at + 6));
  if (word) return { value: PYTHON_WORDS[word[1]], end: at + word[1].length };
  const quoted = /^'((?:[^'\\]|\\.)*)'/.exec(text.slice(at));
  if (quoted) return { value: quoted[1].replace(/\\(.)/g, '$1'), end: at + quoted[0].length };
  return null;
}
