#!/usr/bin/env node
// A small static file server for the browser tests and the demo: serves the
// repository root (and a models folder under /models/) with Range requests,
// the MIME types wasm needs, and — unless told otherwise — the headers that
// make a page cross-origin isolated, which SharedArrayBuffer and so the
// threaded build need.
//
//   node tools/serve.mjs [--port N] [--host H] [--no-isolation] [--models DIR] [--demo]
//
// --demo serves the demo page (web-demo/) at the root too (/ redirects to it)
// and prints its URL first; `npm run demo` uses it. When the port is taken
// and none was asked for, the next free one is used.
//
// Tests start it in-process: `const server = await startServer({port: 0})`.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const MIME_TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.cjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.wasm': 'application/wasm',
  '.gguf': 'application/octet-stream',
  '.bin': 'application/octet-stream',
};

// Cross-origin isolation: the page may use SharedArrayBuffer, and everything
// it loads must opt in (same-origin resources do, with CORP).
const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

// Where the demo page is, from the root.
const DEMO_PATH = '/web-demo/';

// The URL path of the models folder, on every response (see startServer).
export const MODELS_HEADER = 'X-Wasm-Llm-Models';

// Starts serving. Options:
//   root: the folder served at / (default: the repository)
//   models: a folder served at /models/ (default: ../shared/models beside the repository, if any)
//   mounts: more folders, {'/prefix/': folder}
//   port (default 8080; 0 picks a free one), host (default 127.0.0.1)
//   isolated: send the cross-origin isolation headers (default true)
//   home: a URL path the root (/) redirects to, e.g. '/web-demo/' (default: none)
//   onRequest({method, path, range}): called for every request (tests count them)
//   answerFor(path): a handler (req, res, headers) that answers requests for
//     this path instead of the files, or none (tests answer with errors, other
//     files or nothing at all); headers are those every answer carries
// Resolves to {url, port, close()}; close() also ends open connections.
export async function startServer({
  root = repoRoot,
  models = defaultModelsDir(),
  port = 8080,
  host = '127.0.0.1',
  mounts = {},
  isolated = true,
  home,
  onRequest = () => {},
  answerFor = () => null,
} = {}) {
  // Longest prefix first, so '/models/' wins over '/'.
  const folders = Object.entries({ ...mounts, '/models/': models, '/': root })
    .filter(([, dir]) => dir)
    .map(([prefix, dir]) => [prefix, path.resolve(dir)])
    .sort(([a], [b]) => b.length - a.length);
  // Tells pages (the demo's preset list) where the models are; a plain
  // static host sends no such header, so they look for none there.
  const modelsHeader = models ? { [MODELS_HEADER]: '/models/' } : {};
  const server = http.createServer((req, res) => {
    const urlPath = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
    onRequest({ method: req.method, path: urlPath, range: req.headers.range ?? null });
    const headers = { 'Cache-Control': 'no-store', ...(isolated ? ISOLATION_HEADERS : {}), ...modelsHeader };
    const answer = answerFor(urlPath);
    if (answer) {
      answer(req, res, headers);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { ...headers, Allow: 'GET, HEAD' }).end();
      return;
    }
    if (home && urlPath === '/') {
      res.writeHead(302, { ...headers, Location: home }).end();
      return;
    }
    const file = resolveFile(folders, urlPath);
    if (!file) {
      res.writeHead(404, { ...headers, 'Content-Type': 'text/plain' }).end('not found\n');
      return;
    }
    sendFile(req, res, file, headers);
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const address = server.address();
  return {
    url: `http://${host}:${address.port}/`,
    port: address.port,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function defaultModelsDir() {
  const dir = process.env.WASM_LLM_MODELS ?? path.resolve(repoRoot, '../shared/models');
  return fs.existsSync(dir) ? dir : null;
}

// The file a URL path names, or null. The longest matching prefix owns the
// path; paths never leave their folder; a folder means its index.html.
function resolveFile(folders, urlPath) {
  const [prefix, dir] = folders.find(([p]) => urlPath.startsWith(p)) ?? [];
  if (!dir) return null;
  let file = path.resolve(dir, `.${urlPath.slice(prefix.length - 1)}`);
  if (file !== dir && !file.startsWith(dir + path.sep)) return null;
  try {
    if (fs.statSync(file).isDirectory()) file = path.join(file, 'index.html');
    return fs.statSync(file).isFile() ? file : null;
  } catch {
    return null;
  }
}

// Sends the file whole (200) or the one byte range asked for (206; 416 if
// it is outside the file).
function sendFile(req, res, file, headers) {
  const size = fs.statSync(file).size;
  const type = MIME_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
  const common = { ...headers, 'Content-Type': type, 'Accept-Ranges': 'bytes' };
  let start = 0;
  let end = size - 1;
  let status = 200;
  if (req.headers.range) {
    const range = parseRange(req.headers.range, size);
    if (!range) {
      res.writeHead(416, { ...common, 'Content-Range': `bytes */${size}` }).end();
      return;
    }
    [start, end] = range;
    status = 206;
    common['Content-Range'] = `bytes ${start}-${end}/${size}`;
  }
  res.writeHead(status, { ...common, 'Content-Length': Math.max(0, end - start + 1) });
  if (req.method === 'HEAD' || end < start) {
    res.end();
    return;
  }
  // 1 MiB reads: fewer, larger chunks to the socket than the 64 KiB default.
  const stream = fs.createReadStream(file, { start, end, highWaterMark: 1 << 20 });
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}

// [start, end] (inclusive) of a single 'bytes=a-b', 'bytes=a-' or 'bytes=-n'
// range within a file of `size` bytes, or null if it is not satisfiable.
function parseRange(header, size) {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return null;
  let start;
  let end;
  if (match[1] === '') {
    start = Math.max(0, size - Number(match[2]));
    end = size - 1;
  } else {
    start = Number(match[1]);
    end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  }
  return start < size && start <= end ? [start, end] : null;
}

function parseArgs(argv) {
  const options = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--no-isolation') options.isolated = false;
    else if (arg === '--isolated') options.isolated = true;
    else if (arg === '--port') options.port = Number(argv[++i]);
    else if (arg === '--host') options.host = argv[++i];
    else if (arg === '--models') options.models = argv[++i];
    else if (arg === '--root') options.root = argv[++i];
    else if (arg === '--demo') options.demo = true;
    else throw new Error(`unknown option ${arg} (options: --port N --host H --root DIR --models DIR --no-isolation --demo)`);
  }
  return options;
}

// startServer on the port asked for, or from 8080 up to the first free one.
async function listenOnFreePort({ demo, ...options }) {
  if (demo) options.home = DEMO_PATH;
  if (options.port !== undefined) return startServer(options);
  for (let port = 8080; ; port++) {
    try {
      return await startServer({ ...options, port });
    } catch (error) {
      if (error.code !== 'EADDRINUSE' || port >= 8099) throw error;
    }
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const options = parseArgs(process.argv.slice(2));
  const server = await listenOnFreePort(options);
  const isolated = options.isolated !== false;
  const isolation = isolated ? 'cross-origin isolated' : 'not cross-origin isolated';
  if (options.demo) {
    console.log(`demo: ${new URL(DEMO_PATH, server.url)}  (${isolated ? 'threaded' : 'single-thread'} build)`);
    console.log(`\nserving ${options.root ?? repoRoot} at ${server.url} (${isolation}); / redirects to the demo`);
    if (isolated) console.log('single-thread, as on a static host without COOP/COEP: node tools/serve.mjs --demo --no-isolation');
    console.log('stop with Ctrl+C');
  } else {
    console.log(`serving ${options.root ?? repoRoot} at ${server.url} (${isolation})`);
  }
}
