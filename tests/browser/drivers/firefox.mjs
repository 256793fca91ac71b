// Debian's Firefox ESR (never a downloaded one), driven by puppeteer-core over
// WebDriver BiDi, with a fresh profile (puppeteer's, removed on close).
import fs from 'node:fs';
import puppeteer from 'puppeteer-core';

const FIREFOX = '/usr/bin/firefox-esr';
// The longest a page script may run (vitest's test timeout).
const SCRIPT_TIMEOUT_MS = 600_000;

export async function launchFirefox({ initScript } = {}) {
  if (!fs.existsSync(FIREFOX)) throw new Error(`${FIREFOX} is missing: run tools/setup.sh (apt package firefox-esr)`);
  // networkEnabled: false: the tests count requests at the server; Firefox
  // then reports no network events to puppeteer.
  const browser = await puppeteer.launch({
    browser: 'firefox', executablePath: FIREFOX, headless: true, networkEnabled: false, protocolTimeout: SCRIPT_TIMEOUT_MS,
  });
  try {
    const page = (await browser.pages())[0] ?? (await browser.newPage());
    if (initScript) await page.evaluateOnNewDocument(initScript);
    const pageErrors = [];
    page.on('pageerror', (error) => pageErrors.push(`uncaught: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(`console: ${message.text()} (${message.location().url})`);
    });
    return {
      name: 'firefox',
      version: `Firefox ESR ${(await browser.version()).replace(/^firefox\//, '')}`,
      pageErrors,
      goto: (url) => page.goto(url),
      reload: () => page.reload(),
      evaluate: (fn, arg) => page.evaluate(fn, arg),
      waitFor: (fn, arg, timeout) => page.waitForFunction(fn, { timeout }, arg),
      close: () => browser.close(),
    };
  } catch (error) {
    await browser.close();
    throw error;
  }
}
