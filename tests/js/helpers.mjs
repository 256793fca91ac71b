// Shared by the JS tests: paths, the native CLI, and a local HTTP server.
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { cached, runCli, sharedModels } from '../reference/reference.mjs';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const modelPath = path.join(path.resolve(repoRoot, '../shared/models'), 'stories260K.gguf');
const cliPath = path.join(repoRoot, 'build/native/wasm-llm');

// The kernels the package runs in the Node running the tests: V8 runs relaxed
// SIMD without a flag from 11.4 on (Node 22; Node 20 has 11.3), and then the
// package loads its relaxed-SIMD build.
const [v8Major, v8Minor] = process.versions.v8.split('.').map(Number);
export const v8RunsRelaxedSimd = v8Major > 11 || (v8Major === 11 && v8Minor >= 4);
export const nodeKernels = v8RunsRelaxedSimd ? 'relaxed' : 'simd128';

// Node 24, which tools/setup.sh fetches into build/node24 on x64 Linux (the
// only platform of its npm package): where the Node 24 tests run.
export const node24 = path.join(repoRoot, 'build/node24/bin/node');
export const node24Platform = process.platform === 'linux' && process.arch === 'x64';

// A small synthetic model of `type` (rows of 256 so every K-quant applies to every matrix).
export function syntheticModel(type) {
  return cached(`parity-256x4-${type}.gguf`, (file) =>
    runCli(['synth', '--shape', '256x4:4/2:768', '--type', type, '--seed', '11', '--ctx', '512',
      '--vocab', path.join(sharedModels, 'vocab', 'ggml-vocab-llama-spm.gguf'), '-o', file]));
}

// The continuation the native CLI prints after the prompt (stdout is
// prompt + continuation + "\n"; the summary line goes to stderr).
export async function nativeContinuation(prompt, args, model = modelPath) {
  const { stdout } = await promisify(execFile)(cliPath, ['generate', '-m', model, '-p', prompt, ...args], {
    encoding: 'utf8',
    maxBuffer: 16 << 20,
  });
  if (!stdout.startsWith(prompt) || !stdout.endsWith('\n')) throw new Error(`unexpected CLI output: ${stdout}`);
  return stdout.slice(prompt.length, -1);
}

// Serves `bytes` at /<random>/model.gguf with Range support; anything else
// is 404. The random folder makes each server's URL its own: a later server
// on a reused port does not find the download cache's entry for an earlier one.
// dropAfter: the first full (non-Range) response breaks off after that many bytes.
// Resolves to {url, base (the origin), requests (the Range header of each, or null), close()}.
export async function serveModel(bytes, { dropAfter } = {}) {
  const urlPath = `/${crypto.randomUUID()}/model.gguf`;
  const requests = [];
  let dropped = false;
  const server = http.createServer((req, res) => {
    if (req.url !== urlPath) {
      res.writeHead(404).end('not found');
      return;
    }
    const range = req.headers.range ?? null;
    requests.push(range);
    const match = range && /^bytes=(\d+)-$/.exec(range);
    if (match) {
      const from = Number(match[1]);
      res.writeHead(206, {
        'Content-Length': bytes.length - from,
        'Content-Range': `bytes ${from}-${bytes.length - 1}/${bytes.length}`,
      });
      res.end(bytes.subarray(from));
      return;
    }
    res.writeHead(200, { 'Content-Length': bytes.length, 'Accept-Ranges': 'bytes' });
    if (dropAfter !== undefined && !dropped) {
      dropped = true;
      res.write(bytes.subarray(0, dropAfter), () => setTimeout(() => res.socket.destroy(), 50));
      return;
    }
    res.end(bytes);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}${urlPath}`,
    base: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.close(resolve);
        server.closeAllConnections();
      }),
  };
}

export function readModel() {
  return fs.readFileSync(modelPath);
}

// Serves files by name (`files`: {'/name': bytes}) with Range support; any
// other path is 404. Each request is logged as {path, range, pending (the
// paths of earlier requests not answered yet)}. answer(path), if given, may
// return {status} (answered with no body) or {delay} (ms before answering).
export async function serveFiles(files, { answer = () => ({}) } = {}) {
  const requests = [];
  const pending = new Set();
  const server = http.createServer((req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    const range = req.headers.range ?? null;
    const request = { path, range, pending: [...pending].map((r) => r.path) };
    requests.push(request);
    pending.add(request);
    const { status, delay = 0 } = answer(path);
    setTimeout(() => {
      pending.delete(request);
      const bytes = files[path];
      if (status || !bytes) {
        res.writeHead(status ?? 404).end();
        return;
      }
      const from = Number(/^bytes=(\d+)-$/.exec(range ?? '')?.[1] ?? 0);
      const headers = { 'Content-Length': bytes.length - from, 'Accept-Ranges': 'bytes' };
      if (range) headers['Content-Range'] = `bytes ${from}-${bytes.length - 1}/${bytes.length}`;
      res.writeHead(range ? 206 : 200, headers);
      res.end(bytes.subarray(from));
    }, delay).unref();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${server.address().port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.close(resolve);
        server.closeAllConnections();
      }),
  };
}

// A GGUF file (version 3) holding only an SPM vocabulary: tokens and their types.
export function tinyVocabGguf(tokens, types) {
  const parts = [];
  const u32 = (v) => { const b = Buffer.alloc(4); b.writeUInt32LE(v); parts.push(b); };
  const u64 = (v) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); parts.push(b); };
  const str = (s) => { const b = Buffer.from(s, 'utf8'); u64(b.length); parts.push(b); };
  parts.push(Buffer.from('GGUF'));
  u32(3);
  u64(0);  // tensors
  u64(4);  // key-value pairs
  str('tokenizer.ggml.model'); u32(8); str('llama');
  str('tokenizer.ggml.tokens'); u32(9); u32(8); u64(tokens.length); tokens.forEach(str);
  str('tokenizer.ggml.scores'); u32(9); u32(6); u64(tokens.length);
  for (let i = 0; i < tokens.length; i += 1) { const b = Buffer.alloc(4); b.writeFloatLE(-i); parts.push(b); }
  str('tokenizer.ggml.token_type'); u32(9); u32(5); u64(types.length);
  for (const t of types) { const b = Buffer.alloc(4); b.writeInt32LE(t); parts.push(b); }
  const bytes = Buffer.concat(parts);
  return Buffer.concat([bytes, Buffer.alloc((32 - (bytes.length % 32)) % 32)]);
}
