// The demo page (web-demo/) in Chromium, used through its controls: the
// native CLI's exact text streamed into the page, threads on an isolated page
// and the single-thread build without isolation, Stop, the OPFS cache across
// a reload, local files, readable errors the page recovers from, chat, and
// chat's JSON mode with a schema.
// No test may leave an uncaught error or a console error on the page.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { modelPath, nativeContinuation, repoRoot } from '../js/helpers.mjs';
import { slowModel } from './browser.mjs';
import { openDemo } from './demo-page.mjs';

const MODEL_PATH = '/models/stories260K.gguf';
const LOCAL_PRESET = 'stories260K · this server';
const prompt = 'Once upon a time';
const artifacts = path.join(repoRoot, 'build/test-artifacts');
let expected;  // the native CLI's greedy 200 tokens
let scratchDir;
let slowModelUrl;
let hugeContextUrl;

beforeAll(async () => {
  expected = await nativeContinuation(prompt, ['-n', '200', '--temp', '0']);
  scratchDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-demo-'));
  slowModelUrl = `/scratch/${await slowModel(scratchDir)}`;
  hugeContextUrl = `/scratch/${await hugeContextModel(scratchDir)}`;
  fs.mkdirSync(artifacts, { recursive: true });
});

afterAll(() => fs.rmSync(scratchDir, { recursive: true, force: true }));

// A small model with a 16M-token training context: with all of it as the
// context, its KV cache would need ~32 GiB, far beyond the 4 GB wasm memory.
async function hugeContextModel(dir) {
  const file = path.join(dir, 'huge-context.gguf');
  await promisify(execFile)(path.join(repoRoot, 'build/native/wasm-llm'), [
    'synth', '--shape', '256x4:4/2:768', '--type', 'q8_0', '--ctx', '16000000',
    '--vocab', path.resolve(repoRoot, '../shared/models/vocab/ggml-vocab-llama-spm.gguf'), '-o', file,
  ]);
  return path.basename(file);
}

// Records the text of the output element at every change, with the page's
// state then; returns a function that stops recording and returns
// [{length, state}].
async function watchOutput(page) {
  await page.evaluate(() => {
    const output = document.querySelector('#completion .output-text');
    const seen = [];
    const observer = new MutationObserver(() => {
      seen.push({ length: output.textContent.length, state: document.body.dataset.state });
    });
    observer.observe(output, { childList: true, characterData: true, subtree: true });
    window.outputWatch = { seen, observer };
  });
  return () => page.evaluate(() => {
    window.outputWatch.observer.disconnect();
    return window.outputWatch.seen;
  });
}

// Clicks Stop and measures, in the page, the milliseconds until it is idle.
function stopAndTime(page) {
  return page.evaluate(() => new Promise((resolve) => {
    const started = performance.now();
    const observer = new MutationObserver(() => {
      if (document.body.dataset.state !== 'idle') return;
      observer.disconnect();
      resolve(performance.now() - started);
    });
    observer.observe(document.body, { attributes: true, attributeFilter: ['data-state'] });
    document.getElementById('stop').click();
  }));
}

// The GET requests for `urlPath` the server has seen (the preset list's HEAD
// probes are not downloads).
const downloads = (t, urlPath) => t.requestsFor(urlPath).filter((r) => r.method === 'GET').length;

describe('cross-origin isolated page: the threaded build', () => {
  let t;
  beforeAll(async () => {
    t = await openDemo({ isolated: true, mounts: { '/scratch/': scratchDir } });
  });
  afterAll(() => t?.close());
  afterEach(() => {
    expect(t.pageErrors).toEqual([]);
  });

  it('says it is isolated, offers the registry and the local model, and nothing is loaded yet', async () => {
    const { demo, page } = t;
    expect(await demo.text('#mode')).toMatch(/^Threaded: this page is cross-origin isolated/);
    const presets = await page.$$eval('#preset option', (options) => options.map((o) => o.textContent));
    expect(presets).toEqual([LOCAL_PRESET, 'stories260K · huggingface.co · 1.19 MB']);
    expect(await page.isDisabled('#generate')).toBe(true);
    expect(await page.isDisabled('[name="threads"]')).toBe(false);
    expect(await demo.text('#model-status')).toBe('No model loaded.');
  });

  it('loads stories260K through the preset list and streams exactly the native CLI text on 3 threads', async () => {
    const { demo, page } = t;
    await demo.settings({ threads: 3, temperature: 0, maxTokens: 200 });
    await demo.loadPreset(LOCAL_PRESET);
    expect(await demo.error()).toBeNull();
    expect(await demo.text('#model-status')).toMatch(/^stories260K\.gguf loaded in [\d.]+ s, downloaded: llama, 5 layers/);
    expect(await demo.stats()).toMatchObject({ build: 'threaded, relaxed SIMD', threads: '3 available' });

    const stopWatching = await watchOutput(page);
    await demo.generate(prompt);
    const seen = await stopWatching();
    expect(await demo.text('#completion .output-text')).toBe(expected);
    expect(await demo.text('#completion .output-prompt')).toBe(prompt);
    expect(await demo.text('#generation-status')).toBe('Done: 200 tokens, reached the token limit.');

    // Streaming: the text grew in many steps while the generation was running.
    const partial = seen.filter((s) => s.state === 'generating' && s.length > 0 && s.length < expected.length);
    expect(new Set(partial.map((s) => s.length)).size).toBeGreaterThan(50);

    // Every thread of the pool ran work (the stats' threadsUsed).
    const stats = await demo.stats();
    expect(stats).toMatchObject({ tokens: '200', threads: '3 of 3', build: 'threaded, relaxed SIMD' });
    expect(stats.prefill).toMatch(/^\d+(\.\d+)? tok\/s$/);
    expect(stats.decode).toMatch(/^\d+(\.\d+)? tok\/s$/);
    expect(stats.memory).toMatch(/^\d+(\.\d+)? MB$/);

    await page.setViewportSize({ width: 1280, height: 800 });
    await page.screenshot({ path: path.join(artifacts, 'demo-desktop.png'), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: path.join(artifacts, 'demo-phone.png'), fullPage: true });
    // At phone width nothing sticks out sideways.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('Stop ends a long generation within a fraction of a second, and the next generation runs', async () => {
    const { demo, page } = t;
    await demo.settings({ temperature: 0, maxTokens: 2000 });
    await demo.loadUrl(slowModelUrl);
    await demo.startGenerating(prompt);
    await page.waitForFunction(() => document.querySelector('#completion .output-text').textContent.length > 40);
    const stopMs = await stopAndTime(page);
    expect(stopMs).toBeLessThan(500);
    expect(await demo.text('#generation-status')).toBe('Stopped.');
    const stoppedText = await demo.text('#completion .output-text');
    expect(stoppedText.length).toBeGreaterThan(40);
    // The live figures at the stop: how long the rest of the 2000 tokens would have taken.
    const { tokens, decode } = await demo.stats();
    const rate = Number(/^≈ ([\d.]+) tok\/s$/.exec(decode)[1]);
    const remainingMs = ((2000 - Number(tokens.replace('≈ ', ''))) / rate) * 1000;
    await page.waitForTimeout(200);
    expect(await demo.text('#completion .output-text')).toBe(stoppedText);  // nothing more arrived

    // Queued behind the stopped generation, 5 tokens would wait for the rest
    // of it if the worker had not stopped.
    await demo.settings({ maxTokens: 5 });
    const started = Date.now();
    await demo.generate(prompt);
    expect(Date.now() - started).toBeLessThan(remainingMs / 4);
    // The same prompt: all of it but its last token was in the KV cache.
    expect(await demo.text('#generation-status'))
      .toMatch(/^Done: 5 tokens, reached the token limit\. Reused \d+ prompt tokens from the cache\.$/);
    expect(stoppedText.startsWith(await demo.text('#completion .output-text'))).toBe(true);  // same greedy path
  });

  it('after a reload, a URL model loads from the OPFS cache with no request, and the page says so', async () => {
    const { demo, page } = t;
    const url = `${t.origin}${MODEL_PATH}`;
    // Start from an empty cache (the button lists what it holds).
    expect(await demo.text('#cache-summary')).not.toBe('empty');
    await page.click('#cache-panel summary');
    expect(await demo.text('#cache-list')).toContain(url);
    await page.click('#clear-cache');
    await page.waitForFunction(() => document.getElementById('cache-summary').textContent === 'empty');

    const before = downloads(t, MODEL_PATH);
    await demo.loadUrl(url);
    expect(await demo.text('#model-status')).toMatch(/^stories260K\.gguf loaded in [\d.]+ s, downloaded:/);
    expect(downloads(t, MODEL_PATH)).toBe(before + 1);
    expect(await demo.text('#cache-summary')).toBe('1 model, 1.19 MB');
    expect(await demo.text('#cache-list')).toBe(`${url} 1.19 MB`);

    await page.reload();
    await page.waitForSelector('body[data-state="idle"]');
    await demo.loadUrl(url);
    expect(await demo.text('#model-status')).toMatch(/^stories260K\.gguf loaded in [\d.]+ s, from cache \(OPFS\), no download:/);
    expect(downloads(t, MODEL_PATH)).toBe(before + 1);
    await demo.settings({ temperature: 0, maxTokens: 200 });
    await demo.generate(prompt);
    expect(await demo.text('#completion .output-text')).toBe(expected);
  });

  it('loads a local file, from the file picker and dropped on the page', async () => {
    const { demo } = t;
    await demo.settings({ temperature: 0, maxTokens: 200 });
    await demo.loadFile(modelPath);
    expect(await demo.text('#model-status')).toMatch(/^stories260K\.gguf loaded in [\d.]+ s, from a local file:/);
    await demo.generate(prompt);
    expect(await demo.text('#completion .output-text')).toBe(expected);

    await demo.dropFile('dropped.gguf', fs.readFileSync(modelPath));
    expect(await demo.text('#model-status')).toMatch(/^dropped\.gguf loaded in [\d.]+ s, from a local file:/);
    await demo.generate(prompt);
    expect(await demo.text('#completion .output-text')).toBe(expected);
  });

  it('shows readable errors for a file that is not GGUF, a 404, a model too large, a bad URL and a prompt too long, and recovers', async () => {
    const { demo, page } = t;
    await demo.loadFile({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('just some text, not a model\n') });
    expect(await demo.error()).toEqual({
      title: 'notes.txt is not a valid GGUF model file.',
      detail: "cannot load the model: not a GGUF file (the first 4 bytes are not 'GGUF') nor a llama2.c checkpoint " +
        '(its dim would be 1953723754)',
    });
    expect(await demo.text('#model-status')).toBe('No model loaded.');
    expect(await page.isDisabled('#generate')).toBe(true);

    await demo.loadUrl('/models/missing.gguf');
    expect(await demo.error()).toEqual({
      title: 'missing.gguf was not found (HTTP 404).',
      detail: `cannot fetch ${t.origin}/models/missing.gguf: HTTP 404 Not Found`,
    });

    await demo.settings({ contextSize: 16_000_000 });
    await demo.loadUrl(hugeContextUrl);
    const tooLarge = await demo.error();
    expect(tooLarge.title).toBe('huge-context.gguf is too large for the 4 GB WebAssembly memory.');
    expect(tooLarge.detail).toMatch(
      /^cannot load the model: the model needs \d+\.\d MiB \(weights [\d.]+ MiB \+ context of 16000000\) but only [\d.]+ MiB are available$/,
    );
    await demo.settings({ contextSize: 0 });

    await demo.loadUrl('ftp://example.com/model.gguf');
    expect(await demo.error()).toEqual({
      title: 'Could not load model.gguf.',
      detail: "cannot load 'ftp://example.com/model.gguf': only http(s) URLs can be fetched",
    });

    // Still usable: the real model loads (the error goes away) and generates.
    await demo.settings({ temperature: 0, maxTokens: 200 });
    await demo.loadPreset(LOCAL_PRESET);
    expect(await demo.error()).toBeNull();
    await demo.generate(prompt);
    expect(await demo.text('#completion .output-text')).toBe(expected);

    // A generation's error: its headline comes from the code.
    await demo.generate('Once upon a time '.repeat(600));
    expect(await demo.error()).toEqual({
      title: 'The prompt is too long for the context.',
      detail: expect.stringMatching(/^the prompt has \d+ tokens but the context holds \d+$/),
    });
    await demo.generate(prompt);
    expect(await demo.error()).toBeNull();
  });

  it('chat mode keeps the conversation and its KV cache: the second reply answers both turns, evaluating only the ' +
    'new tokens; New chat starts over', async () => {
    const { demo, page } = t;
    await demo.settings({ temperature: 0, maxTokens: 24 });
    await demo.loadPreset(LOCAL_PRESET);
    await demo.setMode('chat');
    expect(await page.isVisible('#completion')).toBe(false);
    await demo.generate('Tell me a story.');
    expect(await page.inputValue('#prompt')).toBe('');  // sent
    await demo.generate('What happened next?');
    const figures = await demo.stats();
    const [, promptTokens, reused] = /^(\d+) \(reused (\d+)\)$/.exec(figures.prompt).map(Number);
    expect(await demo.text('#generation-status')).toContain(`Reused ${reused} prompt tokens from the cache.`);

    const log = await page.$$eval('#chat-log .message', (items) => items.map((li) => ({
      role: li.classList.contains('user') ? 'user' : 'assistant',
      content: li.querySelector('.content').textContent,
    })));
    expect(log.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(log[0].content).toBe('Tell me a story.');
    expect(log[2].content).toBe('What happened next?');

    // The same replies from the library directly, with and without the first turn.
    const reference = await page.evaluate(async ({ url, log }) => {
      // (A Function, so that Vitest does not rewrite this import() as its own.)
      const { LLM } = await new Function('return import("/js/browser.js")')();
      const llm = await LLM.load(url, { threads: 1 });
      try {
        const options = { temperature: 0, maxTokens: 24 };
        return {
          first: (await llm.chat(log.slice(0, 1), options)).content,
          second: (await llm.chat(log.slice(0, 3), options)).content,
          secondAlone: (await llm.chat(log.slice(2, 3), options)).content,
          secondWithoutCache: (await llm.chat(log.slice(0, 3), { ...options, cachePrompt: false })).content,
          firstPromptTokens: (await llm.tokenize(llm.formatChat(log.slice(0, 1)))).length,
          secondTurnTokens: (await llm.tokenize(llm.formatChat(log.slice(0, 3)))).length,
        };
      } finally {
        await llm.dispose();
      }
    }, { url: MODEL_PATH, log });
    expect(log[1].content).toBe(reference.first);
    expect(log[3].content).toBe(reference.second);
    expect(reference.second).toBe(reference.secondWithoutCache);
    expect(reference.second).not.toBe(reference.secondAlone);  // so the history mattered
    // The second turn did not evaluate the first turn's prompt again.
    expect(promptTokens).toBe(reference.secondTurnTokens);
    expect(reused).toBeGreaterThanOrEqual(reference.firstPromptTokens);

    await page.click('#new-chat');
    expect(await page.locator('#chat-log .message').count()).toBe(0);
    await demo.generate('Hello!');
    expect(await page.locator('#chat-log .message').count()).toBe(2);
    await demo.setMode('complete');
  });

  it('chat\'s JSON mode gives replies valid against the schema in its box, and readable errors for a bad schema', async () => {
    const { demo, page } = t;
    await demo.settings({ temperature: 0.8, seed: 5, maxTokens: 120 });
    await demo.loadPreset(LOCAL_PRESET);
    await demo.setMode('chat');
    await page.click('#new-chat');
    expect(await page.isVisible('#json-mode')).toBe(true);
    expect(await page.isDisabled('#json-schema')).toBe(true);  // until JSON mode is on
    await page.check('#json-toggle');
    const schema = {
      type: 'object',
      properties: { name: { type: 'string', minLength: 1, maxLength: 10 }, age: { type: 'integer', minimum: 0, maximum: 99 } },
      required: ['name', 'age'],
    };
    await page.fill('#json-schema', JSON.stringify(schema));
    await demo.generate('Who is the hero?');
    const reply = await page.locator('#chat-log .message.assistant .content').last().textContent();
    const value = JSON.parse(reply);
    expect(Object.keys(value).sort()).toEqual(['age', 'name']);
    expect(value.age).toBeLessThanOrEqual(99);
    // The library's reply for the same conversation and format.
    const reference = await page.evaluate(async ({ url, schema }) => {
      const { LLM } = await new Function('return import("/js/browser.js")')();
      const llm = await LLM.load(url, { threads: 1 });
      try {
        const format = { type: 'json_schema', schema };
        return (await llm.chat([{ role: 'user', content: 'Who is the hero?' }], { format, temperature: 0.8, seed: 5, maxTokens: 120, topK: 40, topP: 0.95 })).content;
      } finally {
        await llm.dispose();
      }
    }, { url: MODEL_PATH, schema });
    expect(reply).toBe(reference);

    // A schema that is not JSON is refused before generating.
    await page.fill('#json-schema', '{"type": ');
    await page.fill('#prompt', 'Again');
    await page.click('#generate');
    expect(await demo.error()).toMatchObject({ title: 'The JSON schema is not valid JSON.' });
    expect(await page.inputValue('#prompt')).toBe('Again');
    // One the engine cannot enforce names the keyword.
    await page.fill('#json-schema', '{"type": "number", "multipleOf": 3}');
    await demo.generate('Again');
    const error = await demo.error();
    expect(error.title).toBe('The JSON schema cannot be used.');
    expect(error.detail).toContain("'multipleOf' is not supported");
    // Off again: free text.
    await page.fill('#json-schema', '');
    await page.uncheck('#json-toggle');
    expect(await page.isDisabled('#json-schema')).toBe(true);
    await demo.generate('Tell me more.');
    expect(await demo.error()).toBeNull();
    await page.click('#new-chat');
    await demo.setMode('complete');
    expect(await page.isVisible('#json-mode')).toBe(false);
  });
});

describe('page without cross-origin isolation: the single-thread build', () => {
  let t;
  beforeAll(async () => {
    t = await openDemo({ isolated: false });
  });
  afterAll(() => t?.close());
  afterEach(() => {
    expect(t.pageErrors).toEqual([]);
  });

  it('says so, explains why threads are off, and generates the same text with the single-thread build', async () => {
    const { demo, page } = t;
    expect(await demo.text('#mode')).toBe('Single-thread: this page is not cross-origin isolated');
    expect(await page.isDisabled('[name="threads"]')).toBe(true);
    expect(await demo.text('#threads-hint')).toMatch(/cross-origin isolated page \(the COOP and COEP headers\)/);
    await demo.settings({ temperature: 0, maxTokens: 200 });
    await demo.loadPreset(LOCAL_PRESET);
    await demo.generate(prompt);
    expect(await demo.text('#completion .output-text')).toBe(expected);
    expect(await demo.stats()).toMatchObject({ tokens: '200', threads: '1 of 1', build: 'single-thread, relaxed SIMD' });
    expect(t.requests.filter((r) => r.path.includes('wasm-llm-mt'))).toEqual([]);
    expect(downloads(t, '/dist/wasm/wasm-llm-st-relaxed-web.wasm')).toBe(1);
  });
});

describe('a plain static host: no isolation headers, no models folder', () => {
  let t;
  beforeAll(async () => {
    t = await openDemo({ isolated: false, models: null });
  });
  afterAll(() => t?.close());

  it('offers only the registry presets, without a failed request on the console', async () => {
    const presets = await t.page.$$eval('#preset option', (options) => options.map((o) => o.textContent));
    expect(presets).toEqual(['stories260K · huggingface.co · 1.19 MB']);
    expect(await t.demo.text('#mode')).toBe('Single-thread: this page is not cross-origin isolated');
    expect(t.requests.filter((r) => r.path.startsWith('/models/'))).toEqual([]);
    expect(t.pageErrors).toEqual([]);
  });
});
