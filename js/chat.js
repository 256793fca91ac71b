// Chat prompts: a conversation rendered with the model's own Jinja template
// (GGUF key tokenizer.chat_template), as transformers and llama.cpp do.
import { Template } from '@huggingface/jinja';
import { renderBounded } from './bounded-template.js';

// ChatML: what llama.cpp falls back to when a model has no template.
export const FALLBACK_CHAT_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}" +
  "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

export class ChatFormatter {
  // info: the model's info ({chatTemplate, bosToken, eosToken}).
  constructor(info) {
    this.source = info.chatTemplate || FALLBACK_CHAT_TEMPLATE;
    // A model's own end-of-turn token ends generation in the engine; with
    // the fallback, the model may only know the markers as text.
    this.stopStrings = info.chatTemplate ? [] : ['<|im_end|>', '<|im_start|>'];
    this.bosToken = info.bosToken ?? '';
    this.eosToken = info.eosToken ?? '';
    this.template = null;  // compiled on first use
  }

  // The prompt text for `messages` ([{role, content}]), ending where the
  // assistant's reply begins (addGenerationPrompt, the default). context:
  // more variables for the template (tools, ...: js/tool-calls.js).
  format(messages, { addGenerationPrompt = true, context = {} } = {}) {
    if (!Array.isArray(messages) || messages.length === 0) throw new TypeError('messages must be a non-empty array');
    for (const m of messages) {
      if (typeof m?.role !== 'string' || typeof m?.content !== 'string') {
        throw new TypeError('each message must be {role: string, content: string}');
      }
    }
    try {
      this.template ??= new Template(this.source);
      return renderBounded(this.template, {
        // Absent, not undefined: templates test `tools is defined`.
        ...Object.fromEntries(Object.entries(context).filter(([, value]) => value !== undefined)),
        messages,
        add_generation_prompt: addGenerationPrompt,
        bos_token: this.bosToken,
        eos_token: this.eosToken,
      });
    } catch (error) {
      throw new TypeError(`the model's chat template failed: ${error.message}`, { cause: error });
    }
  }

  // Whether the template describes tools to the model itself.
  knowsTools() {
    return /\btools\b/.test(this.source);
  }

  // Whether a formatted prompt already starts with BOS (then the tokenizer
  // must not add another).
  startsWithBos(prompt) {
    return this.bosToken !== '' && prompt.startsWith(this.bosToken);
  }
}
