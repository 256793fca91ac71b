// Debian's Chromium (never a downloaded one), driven by playwright-core over
// the DevTools protocol, with a fresh profile. Besides the driver interface
// (see browser.mjs) it gives playwright's page, for the Chromium-only tests
// that route requests or use the demo's controls.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync',
];

// initScript: code run in every page before its own scripts.
export async function launchChromium({ initScript } = {}) {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run tools/setup.sh (apt package chromium)`);
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-chromium-'));
  let context = null;
  const close = async () => {
    await context?.close().catch(() => {});
    fs.rmSync(userDataDir, { recursive: true, force: true });
  };
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
    });
    if (initScript) await context.addInitScript(initScript);
    const page = context.pages()[0] ?? (await context.newPage());
    const pageErrors = [];
    page.on('pageerror', (error) => pageErrors.push(`uncaught: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(`console: ${message.text()} (${message.location().url})`);
    });
    return {
      name: 'chromium',
      // Not the user agent's: it says 156.0.0.0. (Debian's launcher script writes noise to stderr.)
      version: execFileSync(CHROMIUM, ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().match(/Chromium [\d.]+/)[0],
      page,
      pageErrors,
      goto: (url) => page.goto(url),
      reload: () => page.reload(),
      evaluate: (fn, arg) => page.evaluate(fn, arg),
      waitFor: (fn, arg, timeout) => page.waitForFunction(fn, arg, { timeout }),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
