// WebKitGTK, the engine of Safari (Debian's webkit2gtk-driver): WebKitWebDriver
// drives the GTK MiniBrowser over classic WebDriver (HTTP requests), on a
// display of its own (Xvfb: the MiniBrowser has no headless mode), with its
// files in a fresh folder. Its automation sessions are private (ephemeral):
// OPFS rejects every call there, as in Safari's Private Browsing. Classic
// WebDriver does not report the page's errors: the test page collects its
// uncaught ones (window.uncaughtErrors), and each evaluate() moves them into
// pageErrors.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const DRIVER = '/usr/bin/WebKitWebDriver';
const XVFB = '/usr/bin/Xvfb';
// WebKitGTK ships the storage APIs behind features Safari has on: the page
// gets them as in Safari.
const FEATURES = '+FileSystem,+FileSystemWritableStream,+StorageAPI';
// The longest a page script may run (vitest's test timeout).
const SCRIPT_TIMEOUT_MS = 600_000;
const START_TIMEOUT_MS = 30_000;

// In the page: runs the test's function (its source) on the JSON argument and
// answers with the JSON of its result or error and the errors collected since.
const EVALUATE = `
  const [source, argument, done] = arguments;
  const errors = () => (window.uncaughtErrors ?? []).splice(0);
  Promise.resolve()
    .then(() => (0, eval)('(' + source + ')')(JSON.parse(argument).arg))
    .then(
      (value) => done(JSON.stringify({ value, errors: errors() })),
      (error) => done(JSON.stringify({ error: String(error?.name) + ': ' + String(error?.message ?? error), errors: errors() })),
    );`;

export async function launchWebKit({ initScript } = {}) {
  if (initScript) throw new Error('the WebKit driver runs no init scripts (classic WebDriver has none)');
  const miniBrowser = findMiniBrowser();
  for (const file of [DRIVER, XVFB, miniBrowser]) {
    if (!file || !fs.existsSync(file)) throw new Error('WebKitWebDriver, the MiniBrowser or Xvfb is missing: run tools/setup.sh (apt packages webkit2gtk-driver, xvfb)');
  }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-webkit-'));
  let xvfb = null;
  let driver = null;  // leads a process group: the MiniBrowser and its web processes
  let session = null;
  const close = async () => {
    if (session) await session.request('DELETE', '').catch(() => {});
    await stop(driver, true);
    await stop(xvfb, false);
    // The web processes may still be writing their caches for a moment.
    fs.rmSync(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  };
  try {
    let display;
    ({ child: xvfb, display } = await startXvfb());
    const port = await freePort();
    driver = spawn(DRIVER, [`--port=${port}`], {
      stdio: 'ignore',
      detached: true,
      env: {
        ...process.env, DISPLAY: `:${display}`, NO_AT_BRIDGE: '1',
        XDG_DATA_HOME: path.join(dataDir, 'data'), XDG_CACHE_HOME: path.join(dataDir, 'cache'), XDG_CONFIG_HOME: path.join(dataDir, 'config'),
      },
    });
    session = await newSession(`http://127.0.0.1:${port}`, {
      browserName: 'MiniBrowser',
      'webkitgtk:browserOptions': { binary: miniBrowser, args: ['--automation', `--features=${FEATURES}`] },
    });
    await session.request('POST', '/timeouts', { script: SCRIPT_TIMEOUT_MS });
    const pageErrors = [];
    const evaluate = async (fn, arg) => {
      const reply = JSON.parse(await session.request('POST', '/execute/async', {
        script: EVALUATE, args: [fn.toString(), JSON.stringify({ arg })],
      }));
      pageErrors.push(...reply.errors);
      if ('error' in reply) throw new Error(reply.error);
      return reply.value;
    };
    return {
      name: 'webkit',
      version: `WebKitGTK ${session.capabilities.browserVersion}`,
      pageErrors,
      goto: (url) => session.request('POST', '/url', { url }),
      reload: () => session.request('POST', '/refresh', {}),
      evaluate,
      waitFor: async (fn, arg, timeout) => {
        const deadline = Date.now() + timeout;
        while (!(await evaluate(fn, arg))) {
          if (Date.now() > deadline) throw new Error(`waitFor timed out after ${timeout} ms: ${fn}`);
          await sleep(100);
        }
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

// Ends `child` (with its process group) and waits for it.
async function stop(child, group) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    process.kill(group ? -child.pid : child.pid, 'SIGTERM');
  } catch {
    return;  // it ended meanwhile
  }
  await exited;
}

// The MiniBrowser lives in the multiarch library folder (x86_64-linux-gnu, aarch64-linux-gnu, …).
function findMiniBrowser() {
  for (const dir of fs.readdirSync('/usr/lib')) {
    const file = path.join('/usr/lib', dir, 'webkit2gtk-4.1/MiniBrowser');
    if (fs.existsSync(file)) return file;
  }
  return null;
}

// Xvfb on a display number it picks itself (written to the pipe at fd 3), so
// parallel runs never collide.
async function startXvfb() {
  const child = spawn(XVFB, ['-displayfd', '3', '-nolisten', 'tcp', '-screen', '0', '1280x800x24'], {
    stdio: ['ignore', 'ignore', 'ignore', 'pipe'],
  });
  const display = await new Promise((resolve, reject) => {
    let text = '';
    child.stdio[3].on('data', (chunk) => {
      text += chunk;
      if (text.includes('\n')) resolve(text.trim());
    });
    child.on('exit', (code) => reject(new Error(`Xvfb exited (${code}) before it opened a display`)));
  });
  return { child, display };
}

async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// Waits for the driver to listen, then opens a session: {capabilities, request(method, path, body)}.
async function newSession(base, capabilities) {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const ready = await request('GET', `${base}/status`).then((r) => r.status === 200, () => false);
    if (ready) break;
    if (Date.now() > deadline) throw new Error('WebKitWebDriver did not start');
    await sleep(100);
  }
  const call = async (method, url, body) => {
    const { status, reply } = await request(method, url, body);
    if (status !== 200) throw new Error(`WebDriver ${method} ${url}: ${reply.value?.error}: ${reply.value?.message}`);
    return reply.value;
  };
  const created = await call('POST', `${base}/session`, { capabilities: { alwaysMatch: capabilities } });
  const sessionUrl = `${base}/session/${created.sessionId}`;
  return { capabilities: created.capabilities, request: (method, suffix, body) => call(method, sessionUrl + suffix, body) };
}

// One WebDriver request: {status, reply (the JSON answer)}. Not fetch: its
// default five-minute timeouts would cut off a long page script.
function request(method, url, body) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? null : JSON.stringify(body);
    const req = http.request(url, { method, headers: data ? { 'content-type': 'application/json' } : {} }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode, reply: JSON.parse(text) });
        } catch (error) {
          reject(error);
        }
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(data);
  });
}
