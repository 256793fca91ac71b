// Writing GBNF (llama.cpp's grammar format) from JS: the tool-call grammars
// (js/tool-formats/) are built as text, which the engine parses and checks
// like any user grammar. JSON values inside them are the engine's business:
// a grammar names a schema and the engine compiles it (the constraint's
// `schemas`, cpp/grammar/output_constraint.h).

// A GBNF literal matching exactly the text `s`.
export function literal(s) {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0);
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

// A GBNF expression matching any text that does not contain `delimiter`,
// such that the delimiter can follow and be its first occurrence: the
// states of a KMP matcher for the delimiter, one rule each, named
// `${name}-0`... Returns [expression, rules text].
export function textWithout(name, delimiter) {
  const chars = [...delimiter];
  // fail[i]: the longest proper border of chars[0..i).
  const fail = [0, 0];
  for (let i = 1, k = 0; i < chars.length; i += 1) {
    while (k > 0 && chars[i] !== chars[k]) k = fail[k];
    if (chars[i] === chars[k]) k += 1;
    fail[i + 1] = k;
  }
  const next = (state, ch) => {
    let k = state;
    while (k > 0 && chars[k] !== ch) k = fail[k];
    return chars[k] === ch ? k + 1 : 0;
  };
  // A text ending in a partial match could make the delimiter appear early
  // only if the delimiter overlaps itself (has a border).
  const canEndMidMatch = fail[chars.length] === 0;
  const alphabet = [...new Set(chars)];
  let rules = '';
  for (let state = 0; state < chars.length; state += 1) {
    // From `state` matched delimiter characters: each character that keeps
    // a partial match leads to its state, one that would complete the
    // delimiter is refused, and every other one leads back to state 0.
    const matching = alphabet.filter((ch) => next(state, ch) > 0);
    const alternatives = matching.filter((ch) => next(state, ch) < chars.length)
      .map((ch) => `${literal(ch)} ${name}-${next(state, ch)}`);
    alternatives.push(`[^${matching.map(classChar).join('')}] ${name}-0`);
    if (state === 0 || canEndMidMatch) alternatives.push('""');
    rules += `${name}-${state} ::= ${alternatives.join(' | ')}\n`;
  }
  return [`${name}-0`, rules];
}

// One character inside a GBNF [...] class.
function classChar(ch) {
  if (ch === ']' || ch === '[' || ch === '\\' || ch === '^' || ch === '-') return `\\${ch}`;
  if (ch === '\n') return '\\n';
  if (ch === '\r') return '\\r';
  if (ch === '\t') return '\\t';
  return ch;
}

// The GBNF expression for a list of items in their order, separated by
// `separator` (an expression), where each item is required or may be left
// out: {expr, required}. Rules it needs are added through addRule(body) →
// name. The grammar stays linear in the number of items.
export function subsequence(items, separator, addRule) {
  const sep = separator ? `${separator} ` : '';
  // After the first written item: each later one with its separator.
  const after = (from) => items.slice(from).map((it) => (it.required ? `${sep}${it.expr}` : `( ${sep}${it.expr} )?`));
  const startingWith = (i) => [items[i].expr, ...after(i + 1)].join(' ');
  // The first written item is the first required one, or an optional one
  // before it: a rule per optional item that may come first.
  const required = items.findIndex((it) => it.required);
  let first = required < 0 ? '""' : startingWith(required);
  for (let i = (required < 0 ? items.length : required) - 1; i >= 0; i -= 1) {
    first = addRule(`${startingWith(i)} | ${first}`);
  }
  return first;
}
