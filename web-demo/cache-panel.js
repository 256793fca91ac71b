// The OPFS download cache: what is in it (URL and size) and a button that
// empties it (LLM.cache).
import { LLM } from '../js/browser.js';
import { formatBytes } from './format.js';

export class CachePanel {
  constructor({ summary, list, clear }, onError) {
    this.elements = { summary, list, clear };
    clear.addEventListener('click', async () => {
      try {
        await LLM.cache.clear();
      } catch (error) {
        onError(error);
      }
      await this.refresh();
    });
  }

  async refresh() {
    const { summary, list, clear } = this.elements;
    let entries;
    try {
      entries = await LLM.cache.list();
    } catch {
      entries = [];
    }
    const total = entries.reduce((sum, entry) => sum + entry.size, 0);
    summary.textContent = entries.length === 0
      ? 'empty'
      : `${entries.length} model${entries.length === 1 ? '' : 's'}, ${formatBytes(total)}`;
    list.replaceChildren(...entries.map((entry) => {
      const item = document.createElement('li');
      const url = document.createElement('span');
      url.className = 'cache-url';
      url.textContent = entry.url;
      item.append(url, ` ${formatBytes(entry.size)}`);
      return item;
    }));
    clear.disabled = entries.length === 0 || this.busy === true;
  }

  // No clearing while a load may be writing an entry.
  setBusy(busy) {
    this.busy = busy;
    this.elements.clear.disabled = busy || this.elements.list.childElementCount === 0;
  }
}
