// Tool calls for a model whose chat template has no format of its own for
// them (Gemma 2 and 3, Llama 2, ChatML, or a template we cannot read): the
// tools and the Hermes format (hermes.js) are described in the system
// message, calls go back as the reply's text and results as user turns.
import { hermes } from './hermes.js';

export const generic = {
  ...hermes,
  name: 'generic',
  detect: () => true,

  // The instructions to add to the system message.
  instructions(tools, required) {
    const list = tools.map((t) => JSON.stringify({ type: 'function', function: t })).join('\n');
    return 'You can call these tools (each with a JSON Schema of its arguments):\n' +
      `<tools>\n${list}\n</tools>\n` +
      `${required ? 'Call one or more of them' : 'To call tools'}: for each call, write\n` +
      '<tool_call>\n{"name": <tool name>, "arguments": <arguments as a JSON object>}\n</tool_call>\n' +
      'Each result comes back as <tool_response>...</tool_response>.' +
      (required ? '' : ' Answer directly when no tool is needed.');
  },

  // A tool's result as the user turn that carries it.
  toolResult: (content) => `<tool_response>\n${content}\n</tool_response>`,
};
