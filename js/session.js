// A conversation that remembers its messages (llm.session()): each turn sends
// the conversation so far plus the new message through llm.chat() and keeps
// the reply. The engine keeps the tokens its KV cache holds, so a turn
// evaluates only what the cache does not hold yet: the new message and the
// template's text around it. Sessions share the one cache: a turn after
// another session's evaluates from the prefix the two conversations share
// (their system message, say).
import { asInvalidArgument } from './errors.js';
import { streamOf } from './stream-of.js';

export class ChatSession {
  #llm;
  #messages;
  #turns = Promise.resolve();  // the last turn: each waits for the one before

  // messages: the conversation to start from ([{role, content}], copied).
  constructor(llm, messages) {
    this.#llm = llm;
    if (!Array.isArray(messages)) {
      throw asInvalidArgument(new TypeError('messages must be an array of {role, content}'));
    }
    this.#messages = messages.map(checkMessage);
  }

  // The conversation so far (a copy).
  get messages() {
    return this.#messages.map((m) => ({ ...m }));
  }

  // The assistant's reply to `message` (a string: the user's words; or a
  // {role, content} message) after the conversation so far: the message
  // {role: 'assistant', content, toolCalls} as llm.chat() resolves to it,
  // with its options. With `tools`, the calls join the conversation with the
  // reply; send their results as {role: 'tool', toolCallId, content}
  // messages. Turns run one after another, in call order. The message and
  // the reply join the conversation when the reply is complete; a turn that
  // fails or is aborted leaves the conversation as it was.
  async chat(message, options = {}) {
    return this.#turn(message, (messages) => this.#llm.chat(messages, options));
  }

  // chat() as llm.chatStream() streams it: an async iterator of the reply's
  // text pieces, with stream.stats and stream.reply (promises); leaving the
  // loop early aborts the turn.
  chatStream(message, options = {}) {
    return streamOf(async (onToken, signal) => {
      let stats;
      const onStats = (s) => {
        stats = s;
        options.onStats?.(s);
      };
      const reply = await this.#turn(message, (messages) => this.#llm.chat(messages, { ...options, onToken, onStats, signal }));
      return { returns: { ...stats, toolCalls: reply.toolCalls }, stats, reply };
    }, options.signal, ['stats', 'reply']);
  }

  // Runs reply(messages) once the turns before it have ended; if it
  // succeeds, the message and its reply join the conversation.
  #turn(message, reply) {
    const next = toMessage(message);  // a bad message fails now, not in a later turn
    const run = this.#turns.then(async () => {
      const messages = [...this.#messages, next];
      const answer = await reply(messages);
      this.#messages = [...messages, { ...answer }];
      return answer;
    });
    this.#turns = run.catch(() => {});
    return run;
  }
}

function toMessage(message) {
  return checkMessage(typeof message === 'string' ? { role: 'user', content: message } : message);
}

// A copy of message m; its fields beyond role and content (toolCalls,
// toolCallId, name) are checked where the conversation is formatted.
function checkMessage(m) {
  if (typeof m?.role !== 'string' || typeof m?.content !== 'string') {
    throw asInvalidArgument(new TypeError('a message must be a string or {role: string, content: string}'));
  }
  return { ...m };
}
