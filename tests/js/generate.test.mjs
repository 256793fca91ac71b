// Generation through the worker: results, streaming, abort, queueing, tokenizer,
// the benchmark request.
import { setImmediate } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AbortError, GenerationError, LLM, LLMError } from '../../js/index.js';
import { openFileReader } from '../../js/node/file-reader.js';
import { instantiateWasm } from '../../js/node/wasm-engine.js';
import { benchPrompt } from '../../bench/bench-prompt.js';
import { EngineHost } from '../../worker/engine-host.js';
import { heapAlloc } from '../../worker/wasm-heap.js';
import { modelPath } from './helpers.mjs';

const prompt = 'Once upon a time';
let llm;

beforeAll(async () => {
  llm = await LLM.load(modelPath, { threads: 1 });
});

afterAll(() => llm?.dispose());

describe('generate', () => {
  it('returns the continuation and passes every piece to onToken', async () => {
    const pieces = [];
    const text = await llm.generate(prompt, { maxTokens: 40, temperature: 0, onToken: (p) => pieces.push(p) });
    expect(text.length).toBeGreaterThan(40);
    expect(pieces.join('')).toBe(text);
  });

  it('streams several pieces before the end', async () => {
    const expected = await llm.generate(prompt, { maxTokens: 40, temperature: 0 });
    const pieces = [];
    for await (const piece of llm.stream(prompt, { maxTokens: 40, temperature: 0 })) pieces.push(piece);
    expect(pieces.length).toBeGreaterThan(5);
    expect(pieces.join('')).toBe(expected);
  });

  it('stops at a stop string', async () => {
    const full = await llm.generate(prompt, { maxTokens: 40, temperature: 0 });
    const stop = full.slice(10, 14);
    const text = await llm.generate(prompt, { maxTokens: 40, temperature: 0, stop: [stop] });
    expect(text).toBe(full.slice(0, full.indexOf(stop)));
  });

  it('rejects promptly with AbortError when aborted, and the next call works', async () => {
    const expected = await llm.generate(prompt, { maxTokens: 30, temperature: 0 });
    const controller = new AbortController();
    let pieces = 0;
    let abortedAt = 0;
    const run = llm.generate(prompt, {
      maxTokens: 1800,
      temperature: 1,
      minP: 0,
      seed: 7,
      signal: controller.signal,
      onToken: () => {
        if (++pieces === 3) {
          abortedAt = performance.now();
          controller.abort();
        }
      },
    });
    const error = await run.catch((e) => e);
    expect(error).toBeInstanceOf(AbortError);
    expect(error.name).toBe('AbortError');
    expect(performance.now() - abortedAt).toBeLessThan(100);
    // The worker stopped too: the whole run would take seconds, the next call starts at once.
    expect(await llm.generate(prompt, { maxTokens: 30, temperature: 0 })).toBe(expected);
    expect(performance.now() - abortedAt).toBeLessThan(1500);
  });

  it('aborts when the stream consumer leaves the loop early', async () => {
    let count = 0;
    for await (const piece of llm.stream(prompt, { maxTokens: 1800, temperature: 1, seed: 3 })) {
      expect(typeof piece).toBe('string');
      if (++count === 3) break;
    }
    expect(count).toBe(3);
    expect((await llm.generate(prompt, { maxTokens: 5, temperature: 0 })).length).toBeGreaterThan(0);
  });

  it('rejects at once when the signal is already aborted', async () => {
    const error = await llm.generate(prompt, { signal: AbortSignal.abort() }).catch((e) => e);
    expect(error).toBeInstanceOf(AbortError);
  });

  it('queues concurrent calls in order, each with its own result', async () => {
    const a = { maxTokens: 40, temperature: 0 };
    const b = { maxTokens: 40, temperature: 0.8, seed: 42 };
    const expectedA = await llm.generate('Once upon a time', a);
    const expectedB = await llm.generate('The cat', b);
    const order = [];
    const [resultA, resultB, tokens] = await Promise.all([
      llm.generate('Once upon a time', a).then((t) => (order.push('a'), t)),
      llm.generate('The cat', b).then((t) => (order.push('b'), t)),
      llm.tokenize('The cat').then((t) => (order.push('tokenize'), t)),
    ]);
    expect(resultA).toBe(expectedA);
    expect(resultB).toBe(expectedB);
    expect(tokens.length).toBeGreaterThan(1);
    expect(order).toEqual(['a', 'b', 'tokenize']);
  });

  it('reports engine errors as GenerationError', async () => {
    const error = await llm.generate(prompt, { topP: 2 }).catch((e) => e);
    expect(error).toBeInstanceOf(GenerationError);
    expect(error.message).toMatch(/top.?p/i);
  });
});

describe('tokenizer', () => {
  it('round-trips text through tokenize and detokenize', async () => {
    const text = 'Once upon a time, there was a little dog named Max.';
    const ids = await llm.tokenize(text);
    expect(ids[0]).toBe(1);  // BOS
    expect(await llm.tokenize(text, { addSpecial: false })).toEqual(ids.slice(1));
    // The llama vocabulary adds a space before the text (SentencePiece's dummy prefix).
    expect(await llm.detokenize(ids)).toBe(` ${text}`);
  });

  it('rejects ids outside the vocabulary', async () => {
    const error = await llm.detokenize([1, 100000]).catch((e) => e);
    expect(error).toBeInstanceOf(GenerationError);
    expect(error.message).toMatch(/100000/);
  });
});

describe('bench', () => {
  it('times a prefill and greedy decode steps, as the CLI\'s bench does', async () => {
    const r = await llm.bench({ promptTokens: 20, generateTokens: 6 });
    expect(r).toMatchObject({ promptTokens: 20, generatedTokens: 6, threadsUsed: 1 });
    expect(r.prefillSeconds).toBeGreaterThan(0);
    expect(r.decodeSeconds).toBeGreaterThan(0);
    // Runs repeat while they take under a second in all: this tiny model's take milliseconds.
    expect(r.runs).toBe(5);
  });

  it('rejects counts that are not positive integers or do not fit the context', async () => {
    await expect(llm.bench({ promptTokens: 0, generateTokens: 6 })).rejects.toBeInstanceOf(RangeError);
    await expect(llm.bench({ promptTokens: 20 })).rejects.toBeInstanceOf(RangeError);
    const error = await llm.bench({ promptTokens: llm.info.contextSize, generateTokens: 1 }).catch((e) => e);
    expect(error).toBeInstanceOf(GenerationError);
    expect(error.message).toMatch(/do not fit the context/);
  });

  it('the JS engines\' prompt is the C++ benchmark\'s (engine_test checks the same ids)', () => {
    expect(benchPrompt(4, 32000)).toEqual([12868, 467, 4374, 12157]);
  });
});

// Out-of-range integers, each once too large and once too small or fractional.
const BAD_INTEGERS = [
  ['maxTokens', 2 ** 31, '0 to 2147483647'], ['maxTokens', -1, '0 to 2147483647'], ['maxTokens', 2.5, '0 to 2147483647'],
  ['topK', 1e12, '-2147483648 to 2147483647'], ['topK', -(2 ** 31) - 1, '-2147483648 to 2147483647'],
  ['repeatLastN', 2 ** 20 + 1, '0 to 1048576'], ['repeatLastN', -1, '0 to 1048576'],
  ['seed', 2 ** 53, '0 to 9007199254740991'], ['seed', -1, '0 to 9007199254740991'], ['seed', 0.5, '0 to 9007199254740991'],
];

describe('integer options', () => {
  it.each(BAD_INTEGERS)('%s: %d is a RangeError naming the range', async (key, value, range) => {
    const error = await llm.generate(prompt, { [key]: value }).catch((e) => e);
    expect(error).toBeInstanceOf(RangeError);
    expect(error.message).toBe(`${key} must be an integer from ${range}, got ${value}`);
  });

  it('takes the ends of the ranges', async () => {
    const text = await llm.generate(prompt, { maxTokens: 5, temperature: 0 });
    expect(await llm.generate(prompt, { maxTokens: 5, temperature: 0, topK: 2 ** 31 - 1, seed: 2 ** 53 - 1 })).toBe(text);
    expect(await llm.generate(prompt, { maxTokens: 0 })).toBe('');
  });

  it('load and bench counts are range-checked too', async () => {
    for (const options of [{ contextSize: 2 ** 31 }, { memoryLimit: Infinity }, { memoryLimit: 2 ** 53 }, { threads: 257 }]) {
      await expect(LLM.load(modelPath, options)).rejects.toThrow(RangeError);
    }
    await expect(llm.bench({ promptTokens: 2 ** 53, generateTokens: 1 })).rejects.toThrow(
      'promptTokens must be an integer from 1 to 2147483647, got 9007199254740992');
  });

  // The engine host in this thread, with the options passed straight to the
  // bindings (the public API checks them first).
  it('the bindings refuse out-of-range integers themselves instead of casting them', async () => {
    const module = await instantiateWasm('st', { printErr: () => {} });
    const host = new EngineHost(module, 1, {
      readers: { path: (source) => openFileReader(source.path) },
      cache: () => null,
      yieldToEventLoop: () => setImmediate(),
    });
    const signal = new AbortController().signal;
    const contextError = await host.load({ kind: 'path', path: modelPath }, { contextSize: 2 ** 31 }, () => {}, signal)
      .catch((e) => e);
    expect(contextError.message).toMatch(/contextSize must be an integer from 0 to 2147483647, got 2147483648/);
    await host.load({ kind: 'path', path: modelPath }, {}, () => {}, signal);
    for (const [key, value, range] of BAD_INTEGERS) {
      const error = await host.generate(prompt, { [key]: value }, () => {}, signal).catch((e) => e);
      expect(error).toBeInstanceOf(GenerationError);
      expect(error.message).toBe(`${key} must be an integer from ${range}, got ${value}`);
    }
    expect(() => host.bench(2 ** 53, 1)).toThrow(/promptTokens must be an integer from 1 to 2147483647/);
    const pieces = [];
    await host.generate(prompt, { maxTokens: 3, temperature: 0, topK: 2 ** 31 - 1 }, (t) => pieces.push(t), signal);
    expect(pieces.length).toBeGreaterThan(0);
  });

  // Bytes JS hands the engine go through heapAlloc: a pointer of 0 from the
  // engine's malloc would have JS write over the engine's own data.
  it("an allocation the engine's heap cannot hold throws out_of_memory instead of returning address 0", async () => {
    const { WasmEngine } = await instantiateWasm('st', { printErr: () => {} });
    expect(WasmEngine.alloc(2 ** 32)).toBe(0);  // past what wasm32 addresses: refused, not wrapped around
    expect(WasmEngine.alloc(Number.NaN)).toBe(0);
    const half = heapAlloc(WasmEngine, 2 ** 31);  // the heap grows past 2 GiB (untouched pages)
    try {
      let error;
      try {
        heapAlloc(WasmEngine, 2 ** 31);  // the 4 GiB maximum leaves no room for another
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(LLMError);
      expect(error.code).toBe('out_of_memory');
      expect(error.message).toBe("could not allocate 2048.0 MiB in the engine's memory");
      const small = heapAlloc(WasmEngine, 1 << 20);  // the heap still serves what fits
      expect(small).toBeGreaterThan(0);
      WasmEngine.free(small);
    } finally {
      WasmEngine.free(half);
    }
  });
});

describe('dispose', () => {
  it('rejects pending calls at once and fails later ones', async () => {
    const other = await LLM.load(modelPath, { threads: 1 });
    const running = expect(other.generate(prompt, { maxTokens: 1800, temperature: 1 })).rejects.toThrow(
      /the model was disposed/,
    );
    await other.dispose();
    await running;
    await expect(other.generate(prompt)).rejects.toBeInstanceOf(GenerationError);
  });
});
