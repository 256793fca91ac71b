// The loading progress bar: bytes and speed while a model streams in (from
// the network, the OPFS cache or a local file), then where it came from.
import { formatBytes } from './format.js';

const PHASE_TEXT = {
  download: 'Downloading',
  cache: 'Reading from the cache (OPFS)',
  read: 'Reading the file',
};
const FROM_TEXT = {
  network: 'downloaded',
  cache: 'from cache (OPFS), no download',
  local: 'from a local file',
};

export class LoadProgress {
  constructor({ box, bar, text, cancel }, onCancel) {
    this.elements = { box, bar, text };
    cancel.addEventListener('click', () => onCancel());
  }

  start(label) {
    const { box, bar, text } = this.elements;
    this.startedAt = performance.now();
    this.label = label;
    bar.removeAttribute('value');  // indeterminate until the size is known
    text.textContent = `Opening ${label}…`;
    box.hidden = false;
  }

  // onProgress of LLM.load: {phase, loaded, total}.
  update({ phase, loaded, total }) {
    const { bar, text } = this.elements;
    if (total > 0) bar.value = Math.min(1, loaded / total);
    if (phase === 'init' || phase === 'done') {
      text.textContent = `Setting up ${this.label}…`;
      return;
    }
    const seconds = (performance.now() - this.startedAt) / 1000;
    const speed = seconds > 0.05 ? ` · ${formatBytes(loaded / seconds)}/s` : '';
    const of = total > 0 ? ` of ${formatBytes(total)}` : '';
    text.textContent = `${PHASE_TEXT[phase] ?? 'Loading'}: ${formatBytes(loaded)}${of}${speed}`;
  }

  hide() {
    this.elements.box.hidden = true;
  }
}

// 'stories260K.gguf loaded in 0.4 s, from cache (OPFS), no download'.
export function loadedText(label, info, seconds) {
  return `${label} loaded in ${seconds.toFixed(1)} s, ${FROM_TEXT[info.loadedFrom] ?? info.loadedFrom}: ` +
    `${info.architecture}, ${info.layers} layers, ${info.embeddingSize}-wide, context ${info.contextSize}.`;
}
