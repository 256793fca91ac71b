// Text completion's output: the prompt, then the continuation as it streams in.
import { followEnd } from './scroll.js';

export class CompletionView {
  constructor(box) {
    this.box = box;
    this.prompt = box.querySelector('.output-prompt');
    this.text = box.querySelector('.output-text');
  }

  start(prompt) {
    this.prompt.textContent = prompt;
    this.text.textContent = '';
  }

  // One text node per piece: what is already shown is never re-rendered.
  append(piece) {
    followEnd(this.box, () => this.text.append(piece));
  }

  end() {}
}
