// Chat mode: the conversation so far ({role, content} messages, as
// llm.chatStream takes them) and its transcript on the page.
import { followEnd } from './scroll.js';

export class Conversation {
  constructor(log) {
    this.log = log;
    this.messages = [];
    this.reply = null;  // {bubble, text} of the reply being written
  }

  // Adds the user's turn and an empty reply; returns the messages to answer.
  start(userText) {
    this.messages.push({ role: 'user', content: userText });
    this.#addBubble('user', userText);
    this.reply = { bubble: this.#addBubble('assistant', ''), text: '' };
    return [...this.messages];
  }

  append(piece) {
    followEnd(this.log, () => this.reply.bubble.querySelector('.content').append(piece));
    this.reply.text += piece;
  }

  // stopped: a reply cut short stays in the conversation; failed: the whole
  // turn is taken back, so the user can send it again.
  end({ stopped = false, failed = false } = {}) {
    const { bubble, text } = this.reply;
    this.reply = null;
    if (failed) {
      this.messages.pop();
      bubble.previousElementSibling?.remove();
      bubble.remove();
      return;
    }
    if (stopped) bubble.classList.add('stopped');
    this.messages.push({ role: 'assistant', content: text });
  }

  reset() {
    this.messages = [];
    this.reply = null;
    this.log.replaceChildren();
  }

  #addBubble(role, text) {
    const item = document.createElement('li');
    item.className = `message ${role}`;
    const who = document.createElement('span');
    who.className = 'role';
    who.textContent = role === 'user' ? 'You' : 'Model';
    const content = document.createElement('p');
    content.className = 'content';
    content.textContent = text;
    item.append(who, content);
    this.log.append(item);
    return item;
  }
}
