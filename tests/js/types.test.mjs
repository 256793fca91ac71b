// index.d.ts and index.d.cts type-check as users compile them: the typed
// examples in tests/types/ (a Node ES module, a CommonJS module, a browser
// app) use every option of every call and must compile with no error, and
// the lines they mark @ts-expect-error (a misspelt option, a removed field)
// must not. tsc runs with the repository as the package `wasm-llm`, so
// package.json's "exports" picks the declaration file, as for a user.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './helpers.mjs';

const tsc = path.join(repoRoot, 'node_modules/typescript/bin/tsc');

// tsc's diagnostics for the project in `dir` ('' when it compiles).
async function typeCheck(dir) {
  try {
    await promisify(execFile)(process.execPath, [tsc, '--noEmit', '-p', path.join(repoRoot, dir)], { cwd: repoRoot });
    return '';
  } catch (error) {
    if (error.stdout === undefined) throw error;
    return `${error.stdout}${error.stderr}`;
  }
}

describe('the declarations', () => {
  it('compile for Node, in ES modules and CommonJS', async () => {
    expect(await typeCheck('tests/types')).toBe('');
  });

  it('compile for a bundled browser app', async () => {
    expect(await typeCheck('tests/types/browser')).toBe('');
  });
});
