// Static checks of what bundlers see (no browser needed): package.json sends
// browsers to js/browser.js, and nothing reachable from it or from its worker
// imports a node: module or the Node-only code.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../js/helpers.mjs';

// Every module specifier in `file`: static imports and re-exports, and import('...').
function specifiersOf(file) {
  const text = fs.readFileSync(file, 'utf8');
  const found = [];
  for (const re of [/\b(?:import|export)\s[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
    /^\s*import\s*['"]([^'"]+)['"]/gm]) {
    for (const match of text.matchAll(re)) found.push(match[1]);
  }
  return found;
}

// The files reachable from `entries` through relative imports, and every
// non-relative specifier met on the way (as 'specifier ← importing file').
function importGraph(entries) {
  const files = new Set();
  const external = [];
  const queue = entries.map((e) => path.join(repoRoot, e));
  while (queue.length > 0) {
    const file = queue.pop();
    if (files.has(file)) continue;
    files.add(file);
    for (const spec of specifiersOf(file)) {
      if (spec.startsWith('.')) queue.push(path.resolve(path.dirname(file), spec));
      else external.push(`${spec} ← ${path.relative(repoRoot, file)}`);
    }
  }
  return { files: [...files].map((f) => path.relative(repoRoot, f)).sort(), external };
}

describe('the browser entry', () => {
  const graph = importGraph(['js/browser.js', 'worker/browser-worker.js']);

  it('reaches the browser worker, the shared worker code and the web glue, and no Node-only file', () => {
    expect(graph.files).toEqual(expect.arrayContaining([
      'js/browser.js', 'js/browser/platform.js', 'js/browser/opfs-cache.js', 'worker/browser-worker.js',
      'worker/engine-host.js', 'worker/serve.js', 'worker/relaxed-simd.js', 'dist/wasm/wasm-llm-mt-web.js',
      'dist/wasm/wasm-llm-st-web.js', 'dist/wasm/wasm-llm-mt-relaxed-web.js', 'dist/wasm/wasm-llm-st-relaxed-web.js',
    ]));
    expect(graph.files.filter((f) => f.startsWith('js/node/') || f === 'js/index.js' || f.includes('node-worker'))).toEqual([]);
  });

  it('imports no node: module (only @huggingface/jinja from outside)', () => {
    expect(graph.external.map((e) => e.split(' ')[0]).filter((s) => s !== '@huggingface/jinja')).toEqual([]);
  });

  it('has web glue without Node code', () => {
    for (const variant of ['mt', 'st', 'mt-relaxed', 'st-relaxed']) {
      const glue = fs.readFileSync(path.join(repoRoot, `dist/wasm/wasm-llm-${variant}-web.js`), 'utf8');
      expect(/\bexport default\b/.test(glue), variant).toBe(true);
      expect(/\brequire\(|__dirname/.test(glue), variant).toBe(false);  // what breaks in browsers and bundlers
    }
  });

  it('the platform starts the worker the way bundlers recognise', () => {
    const platform = fs.readFileSync(path.join(repoRoot, 'js/browser/platform.js'), 'utf8');
    expect(platform).toMatch(/new Worker\(new URL\('\.\.\/\.\.\/worker\/browser-worker\.js', import\.meta\.url\), \{\s*type: 'module'/);
  });
});

describe('package.json exports', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
  const root = pkg.exports['.'];

  it('sends browsers to js/browser.js, before the default, and keeps Node on js/index.js', () => {
    const conditions = Object.keys(root);
    expect(conditions).toEqual(['node', 'browser', 'default']);
    expect(root.browser).toEqual({ types: './js/index.d.ts', default: './js/browser.js' });
    expect(root.node.import.default).toBe('./js/index.js');
    expect(root.default.default).toBe('./js/index.js');
  });

  it('lists types first in every condition', () => {
    const check = (entry) => {
      if (typeof entry !== 'object') return;
      const keys = Object.keys(entry);
      if (keys.includes('types')) expect(keys[0]).toBe('types');
      for (const value of Object.values(entry)) check(value);
    };
    check(pkg.exports);
  });

  it('ships the files the browser needs', () => {
    expect(pkg.files).toEqual(expect.arrayContaining(['js/', 'worker/', 'dist/wasm/']));
  });
});
