// The tool-call formats, and which one a chat template uses: the first whose
// markers the template's source holds (as llama.cpp recognizes templates,
// common/chat.cpp). A template that mentions no format we know gets the
// generic one.
//
// A format is {name, detect(source), triggers and startTriggers (where its
// calls begin: the lazy grammar's triggers), preservedTokens (its markers,
// which may be control tokens), parallel (whether a reply may hold several
// calls), grammar(g, tools, {parallel}, source) → the root expression of its
// calls (grammar.js), parse(text, tools) → {content, toolCalls},
// write(calls, source) → the calls as the model writes them}, and where it
// needs them: idLength (the call ids its template checks),
// templateContext(tools, source) (more template variables),
// adaptMessages(messages) (its template's own shape for results).
import { gemma4 } from './gemma4.js';
import { generic } from './generic.js';
import { granite } from './granite.js';
import { hermes } from './hermes.js';
import { lfm2 } from './lfm2.js';
import { llama3 } from './llama3.js';
import { mistral } from './mistral.js';
import { qwenXml } from './qwen-xml.js';

// Most specific first: the XML format's templates also hold <tool_call>.
export const TOOL_FORMATS = Object.freeze([qwenXml, hermes, mistral, lfm2, llama3, gemma4, granite]);

export function detectToolFormat(source) {
  return TOOL_FORMATS.find((f) => f.detect(source)) ?? generic;
}

export { generic };
