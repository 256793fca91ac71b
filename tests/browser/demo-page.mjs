// Drives the demo page (web-demo/) as a user would — through its controls —
// for tests/browser/demo.test.mjs. Every action that starts a load or a
// generation waits until the page is back in body[data-state="idle"].
import { openTestPage } from './browser.mjs';

// openTestPage on the demo, once its presets and cache list are in.
export async function openDemo(options = {}) {
  const t = await openTestPage({ ...options, pagePath: 'web-demo/', readySelector: 'body[data-state="idle"]' });
  return { ...t, demo: new DemoPage(t.page) };
}

export class DemoPage {
  constructor(page) {
    this.page = page;
  }

  text(selector) {
    return this.page.locator(selector).textContent();
  }

  // {title, detail} of the error box, or null when it is hidden.
  async error() {
    if (await this.page.locator('#error').isHidden()) return null;
    return { title: await this.text('#error .error-title'), detail: await this.text('#error .error-detail') };
  }

  // The figures panel as {prefill, decode, tokens, memory, threads, build}.
  stats() {
    return this.page.$$eval('#stats [data-stat]', (cells) =>
      Object.fromEntries(cells.map((dd) => [dd.dataset.stat, dd.textContent])));
  }

  // Sets fields of the settings form: {maxTokens: 200, temperature: 0, ...}.
  async settings(values) {
    for (const [name, value] of Object.entries(values)) {
      await this.page.fill(`#settings [name="${name}"]`, String(value));
    }
  }

  async loadPreset(optionText) {
    await this.page.selectOption('#preset', { label: optionText });
    await this.#untilIdle(() => this.page.click('#preset-form button[type="submit"]'));
  }

  async loadUrl(url) {
    await this.page.fill('#model-url', url);
    await this.#untilIdle(() => this.page.click('#url-form button[type="submit"]'));
  }

  // file: a path, or {name, mimeType, buffer}.
  async loadFile(file) {
    await this.#untilIdle(() => this.page.setInputFiles('#model-file', file));
  }

  // Drops `bytes` on the page as a file named `name`, as a drag from the desktop would.
  async dropFile(name, bytes) {
    await this.#untilIdle(() =>
      this.page.evaluate(({ name, base64 }) => {
        const data = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
        const transfer = new DataTransfer();
        transfer.items.add(new File([data], name));
        const target = document.getElementById('drop-zone');
        for (const type of ['dragenter', 'dragover', 'drop']) {
          target.dispatchEvent(new DragEvent(type, { dataTransfer: transfer, bubbles: true, cancelable: true }));
        }
      }, { name, base64: Buffer.from(bytes).toString('base64') }));
  }

  async setMode(mode) {
    await this.page.check(`input[name="mode"][value="${mode}"]`);
  }

  // Generates from `prompt` (or sends it, in chat mode) and waits for the end.
  async generate(prompt) {
    await this.page.fill('#prompt', prompt);
    await this.#untilIdle(() => this.page.click('#generate'));
  }

  // Starts a generation and resolves as soon as it runs (the page is 'generating').
  async startGenerating(prompt) {
    await this.page.fill('#prompt', prompt);
    await this.page.click('#generate');
    await this.page.waitForSelector('body[data-state="generating"]');
  }

  // Runs action(), which starts a load or a generation, and waits until the
  // page is idle again. The states are recorded as they change (a failed
  // load may pass through 'loading' in a millisecond), so this also fails if
  // the page never left 'idle'.
  async #untilIdle(action) {
    await this.page.evaluate(() => {
      window.demoStates?.observer.disconnect();
      const seen = [];
      const observer = new MutationObserver(() => seen.push(document.body.dataset.state));
      observer.observe(document.body, { attributes: true, attributeFilter: ['data-state'] });
      window.demoStates = { seen, observer };
    });
    await action();
    await this.page.waitForFunction(
      () => window.demoStates.seen.some((state) => state !== 'idle') && document.body.dataset.state === 'idle',
      null,
      { timeout: 120_000 },
    );
  }
}
