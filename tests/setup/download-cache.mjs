// Every test file gets a download cache folder of its own (WASM_LLM_CACHE,
// which LLM.load, LLM.cache and the CLIs it starts read): no test loads an
// entry another one left (test servers on reused ports serve the same URLs),
// and nothing lands in the user's ~/.cache/wasm-llm.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-test-cache-'));
process.env.WASM_LLM_CACHE = dir;
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
