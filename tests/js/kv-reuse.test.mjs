// The engine keeps the tokens its KV cache holds: a prompt that shares a
// prefix with them evaluates only the rest (stats.cachedTokens says how many
// it reused), and the text is the native CLI's, which starts from an empty
// cache, bit for bit. Greedy and seeded, for every way a prompt can share a
// prefix with the cache (the same prompt, an extension, a divergence in the
// middle, a shorter prompt, nothing in common), on stories260K and on the
// architectures whose layers limit how far back the cache can go (gemma3: a
// sliding-window ring; lfm2: the convolution state). Then sessions
// (llm.session()): each turn evaluates only what is new, and replies are
// those of an engine that reuses nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LLM } from '../../js/index.js';
import { architectureModel, architectures } from '../reference/architectures.mjs';
import { modelPath, nativeContinuation } from './helpers.mjs';

const SEEDED = { js: { temperature: 0.8, seed: 9 }, cli: ['--temp', '0.8', '--seed', '9'] };
const GREEDY = { js: { temperature: 0 }, cli: ['--temp', '0'] };
const STORY = 'Once upon a time, there was a little girl named Lily. She loved to play in the park with her dog.';

// The prompts of one model's run, in order: each shares some prefix with what
// the cache holds after the one before. `reply` is the first prompt's reply.
function promptsAfter(first, reply) {
  return [
    ['the same prompt', first],
    ['an extension', `${first}${reply} Then the sun came out and`],
    ['a divergence in the middle', `${first.slice(0, Math.floor(first.length / 2))} A big red ball`],
    ['a shorter prompt', first.slice(0, Math.floor(first.length / 3))],
    ['nothing in common', 'The cat sat on the mat.'],
  ];
}

// The tokens two prompts share at their start.
function sharedPrefix(a, b) {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n += 1;
  return n;
}

const MODELS = [
  { name: 'stories260K', path: async () => modelPath, first: STORY },
  // Longer than gemma3's ring (a window of 32 + a batch) and lfm2's
  // convolution checkpoint interval (64 positions).
  ...['gemma3', 'lfm2'].map((arch) => ({
    name: `${arch} q4_0`,
    path: () => architectureModel(architectures.find((r) => r.arch === arch), 'q4_0'),
    first: Array(5).fill(STORY).join(' '),
  })),
];

describe.each(MODELS)('$name: every prefix the cache shares with a prompt', ({ path, first }) => {
  let llm;
  let model;
  beforeAll(async () => {
    model = await path();
    llm = await LLM.load(model, { threads: 2 });
  });
  afterAll(() => llm?.dispose());

  it.each([['greedy', GREEDY], ['seeded', SEEDED]])('%s: the native text, with the tokens it reused', async (_, mode) => {
    const run = async (prompt) => {
      let stats;
      const text = await llm.generate(prompt, { maxTokens: 24, ...mode.js, onStats: (s) => (stats = s) });
      expect(text).toBe(await nativeContinuation(prompt, ['-n', '24', ...mode.cli], model));
      return { text, stats, tokens: await llm.tokenize(prompt) };
    };
    let before = await run(first);
    for (const [kind, prompt] of promptsAfter(first, before.text)) {
      const now = await run(prompt);
      const shared = sharedPrefix(now.tokens, before.tokens);
      expect(now.stats.promptTokens, kind).toBe(now.tokens.length);
      // At most what the prompt shares with the last prompt and its reply,
      // short of the prompt's last token (its logits are needed).
      expect(now.stats.cachedTokens, kind).toBeLessThan(now.tokens.length);
      if (kind === 'the same prompt' && model === modelPath) {
        expect(now.stats.cachedTokens).toBe(now.tokens.length - 1);
      }
      if (kind === 'an extension') expect(now.stats.cachedTokens).toBeGreaterThanOrEqual(before.tokens.length - 1);
      if (kind === 'a divergence in the middle' && model === modelPath) expect(now.stats.cachedTokens).toBe(shared);
      if (kind === 'nothing in common') expect(now.stats.cachedTokens).toBeLessThanOrEqual(1);  // BOS
      before = now;
    }
  });
});

describe('cachePrompt: false', () => {
  it('evaluates the whole prompt, with the same text', async () => {
    const llm = await LLM.load(modelPath, { threads: 1 });
    try {
      const stats = [];
      const options = { maxTokens: 8, temperature: 0, onStats: (s) => stats.push(s) };
      const first = await llm.generate(STORY, options);
      expect(await llm.generate(STORY, options)).toBe(first);
      expect(await llm.generate(STORY, { ...options, cachePrompt: false })).toBe(first);
      expect(stats.map((s) => s.cachedTokens)).toEqual([0, stats[0].promptTokens - 1, 0]);
    } finally {
      await llm.dispose();
    }
  });
});

describe('sessions', () => {
  let llm;
  let fresh;  // reuses nothing: what each reply must be
  const options = { maxTokens: 20, temperature: 0 };
  const system = { role: 'system', content: 'You are a storyteller. Tell short stories about animals.' };
  beforeAll(async () => {
    llm = await LLM.load(modelPath, { threads: 2 });
    fresh = await LLM.load(modelPath, { threads: 1 });
  });
  afterAll(async () => {
    await llm?.dispose();
    await fresh?.dispose();
  });

  const expectedReply = async (messages) => (await fresh.chat(messages, { ...options, cachePrompt: false })).content;

  it('remember the conversation; each turn evaluates only its new tokens', async () => {
    const session = llm.session({ messages: [system] });
    const turns = ['Tell me about a cat.', 'What did the cat eat?', 'And then?', 'Where did it sleep?', 'The end?'];
    let previousPrompt = 0;
    for (const [i, words] of turns.entries()) {
      let stats;
      const history = session.messages;
      const reply = i % 2 === 0
        ? (await session.chat(words, { ...options, onStats: (s) => (stats = s) })).content
        : await collect(session.chatStream(words, options), (s) => (stats = s));
      expect(reply).toBe(await expectedReply([...history, { role: 'user', content: words }]));
      expect(session.messages).toEqual([
        ...history, { role: 'user', content: words }, { role: 'assistant', content: reply, toolCalls: [] },
      ]);
      // The turns before were in the cache: at least the last turn's prompt.
      expect(stats.cachedTokens).toBeGreaterThanOrEqual(i === 0 ? 0 : previousPrompt);
      expect(stats.promptTokens - stats.cachedTokens).toBeLessThan(i === 0 ? Infinity : 60);
      previousPrompt = stats.promptTokens;
    }
  });

  it('switching between sessions reuses the prefix they share, with the replies of an empty cache', async () => {
    const a = llm.session({ messages: [system] });
    const b = llm.session({ messages: [system] });
    const systemTokens = (await llm.tokenize(llm.formatChat([system], { addGenerationPrompt: false }))).length;
    for (const [session, words] of [[a, 'A dog.'], [b, 'A bird.'], [a, 'Was it happy?'], [b, 'Did it fly?']]) {
      let stats;
      const history = session.messages;
      const { content: reply } = await session.chat(words, { ...options, onStats: (s) => (stats = s) });
      expect(reply).toBe(await expectedReply([...history, { role: 'user', content: words }]));
      expect(stats.cachedTokens).toBeGreaterThanOrEqual(systemTokens - 1);
    }
    expect(a.messages.length).toBe(5);
    expect(b.messages.map((m) => m.content)).toContain('Did it fly?');
  });

  it('turns run in call order; a failed or aborted turn leaves the conversation as it was', async () => {
    const session = llm.session();
    const [first, second] = await Promise.all([session.chat('One.', options), session.chat('Two.', options)]);
    expect(session.messages.map((m) => m.content)).toEqual(['One.', first.content, 'Two.', second.content]);
    const before = session.messages;
    const controller = new AbortController();
    controller.abort();
    await expect(session.chat('Three.', { ...options, signal: controller.signal })).rejects.toMatchObject({
      name: 'AbortError',
    });
    for await (const piece of session.chatStream('Four.', options)) {
      expect(piece.length).toBeGreaterThan(0);
      break;  // leaving the loop aborts the turn
    }
    await expect(session.chat('Five.', { ...options, maxTokens: -1 })).rejects.toMatchObject({
      code: 'invalid_argument',
    });
    expect(session.messages).toEqual(before);
    await expect(session.chat(42)).rejects.toMatchObject({ name: 'TypeError', code: 'invalid_argument' });
    expect(() => llm.session({ history: [] })).toThrow(/unknown session option 'history'/);
    expect(() => llm.session({ messages: [{ role: 'user' }] })).toThrow(TypeError);
    // A message of any role joins as it is.
    await session.chat({ role: 'user', content: 'Six.' }, options);
    expect(session.messages.at(-2)).toEqual({ role: 'user', content: 'Six.' });
  });
});

// The text of a stream; onReturn gets its return value (the stats).
async function collect(stream, onReturn) {
  let text = '';
  for (;;) {
    const next = await stream.next();
    if (next.done) {
      onReturn(next.value);
      return text;
    }
    text += next.value;
  }
}
