// The API from a Node ES module, typed: every option of every call (the
// `satisfies Required<...>` objects fail to compile if an option is added to
// index.d.ts and not here), errors branched on by code, per-call stats.
// Lines marked @ts-expect-error must not compile. Type-checked, never run.
import {
  AbortError, DEFAULT_MODEL, GenerationError, LLM, LLMError, LoadError, MODELS,
  type BenchOptions, type ChatMessage, type ChatSession, type ErrorCode, type FormatChatOptions, type GenerateOptions,
  type GenerationStats, type LoadOptions, type LoadProgress, type ModelInfo, type SessionOptions, type StateBytes,
  type StateOptions, type TokenizeOptions,
} from 'wasm-llm';

const controller = new AbortController();

const loadOptions = {
  threads: 2,
  contextSize: 512,
  memoryLimit: 256 * 1024 * 1024,
  sha256: MODELS[DEFAULT_MODEL]!.sha256,
  cache: true,
  relaxedSimd: false,
  cacheDir: '/tmp/wasm-llm-cache',
  modelsDir: '/srv/models',
  size: 1185376,
  onProgress: (p: LoadProgress) => console.log(p.phase, p.loaded, p.total ?? 'unknown'),
  signal: controller.signal,
} satisfies Required<LoadOptions>;

const llm: LLM = await LLM.load('stories260K', loadOptions);
const info: Readonly<ModelInfo> = llm.info;
console.log(info.architecture, info.contextSize, info.memory.total, info.loadedFrom, info.kernels);

let stats: GenerationStats | undefined;
const generateOptions = {
  maxTokens: 40,
  temperature: 0.7,
  topK: 40,
  topP: 0.95,
  minP: 0.05,
  repeatPenalty: 1.1,
  repeatLastN: 64,
  frequencyPenalty: 0,
  presencePenalty: 0,
  seed: 3,
  stop: ['\n\n'],
  addSpecial: true,
  parseSpecial: false,
  cachePrompt: true,
  signal: controller.signal,
  onToken: (piece: string) => process.stdout.write(piece),
  onStats: (s: GenerationStats) => {
    stats = s;
  },
  // One of format and grammar (they exclude each other): format here, grammar below.
  format: {
    type: 'json_schema', schema: { type: 'object', properties: { name: { type: 'string' } } }, name: 'x', strict: true,
  },
} satisfies Required<Omit<GenerateOptions, 'grammar'>>;
const grammarOptions = { grammar: 'root ::= "yes" | "no"' } satisfies GenerateOptions;

const text: string = await llm.generate('Once upon a time', generateOptions);
const answer: string = await llm.generate('Is it?', grammarOptions);
console.log(answer);
console.log(text.length, stats?.generatedTokens, stats?.cachedTokens, stats?.stopReason);

// The stream's return value is the stats.
const pieces = llm.stream('Once upon a time', { maxTokens: 20, stop: 'The end' });
for (let r = await pieces.next(); ; r = await pieces.next()) {
  if (r.done) {
    const finished: GenerationStats = r.value;
    console.log(finished.decodeSeconds, finished.threadsUsed);
    break;
  }
  const piece: string = r.value;
  console.log(piece);
}
for await (const piece of llm.chatStream([{ role: 'user', content: 'Hi' }], { maxTokens: 8 })) console.log(piece);
const reply: string = await llm.chat([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }]);
console.log(reply);

// A conversation that remembers: each turn evaluates only its new tokens.
const system: ChatMessage = { role: 'system', content: 'Be brief.' };
const sessionOptions = { messages: [system] } satisfies Required<SessionOptions>;
const session: ChatSession = llm.session(sessionOptions);
const first: string = await session.chat('Hi', { maxTokens: 16 });
const second: string = await session.chat({ role: 'user', content: 'And then?' }, {
  onStats: (s) => console.log(s.cachedTokens),
});
for await (const piece of session.chatStream('Go on.', { maxTokens: 8 })) console.log(piece);
const history: ChatMessage[] = session.messages;
console.log(first, second, history.length);
// @ts-expect-error: the history is read-only
session.messages = [];

// A saved state: bytes to keep (a file, OPFS, IndexedDB) and restore later, in any build.
const stateOptions = { signal: controller.signal } satisfies Required<StateOptions>;
await llm.generate('A long system prompt', { maxTokens: 0 });
const state: StateBytes = await llm.saveState(stateOptions);
await llm.loadState(state, stateOptions);
await llm.loadState(state.buffer);
await llm.loadState(new Blob([state]));

const formatOptions = { addGenerationPrompt: false } satisfies Required<FormatChatOptions>;
const prompt: string = llm.formatChat([{ role: 'user', content: 'Hi' }], formatOptions);
const tokenizeOptions = { addSpecial: false, parseSpecial: true } satisfies Required<TokenizeOptions>;
const ids: number[] = await llm.tokenize(prompt, tokenizeOptions);
console.log(await llm.detokenize(ids), await llm.detokenize(new Int32Array(ids)));
const benchOptions = { promptTokens: 32, generateTokens: 16 } satisfies Required<BenchOptions>;
const bench = await llm.bench(benchOptions);
console.log(bench.prefillSeconds, bench.decodeSeconds, bench.runs);

for (const entry of await LLM.cache.list()) console.log(entry.url, entry.size, entry.sha256, entry.savedAt, entry.file);
const deleted: boolean = await LLM.cache.delete('https://example.com/model.gguf');
await LLM.cache.clear();
console.log(deleted);

// Errors: one base class, a code to branch on; the switch must name every code.
function explain(error: unknown): string {
  if (!(error instanceof LLMError)) throw error;
  const code: ErrorCode = error.code;
  switch (code) {
    case 'invalid_argument': return 'check the options';
    case 'not_found': return 'no such model';
    case 'http_error': return `the server answered ${error instanceof LoadError ? error.status : '?'}`;
    case 'network': return 'offline?';
    case 'io': return 'cannot read the file';
    case 'bad_file': return 'not a GGUF model';
    case 'unsupported': return 'not supported';
    case 'sha256_mismatch': return 'not the expected file';
    case 'out_of_memory': return 'too big';
    case 'context_full': return 'the prompt is too long';
    case 'bad_state': return 'not a saved state of this model';
    case 'aborted': return 'cancelled';
    case 'disposed': return 'the model is gone';
    case 'worker_failed': return 'the engine stopped';
    case 'internal': return 'a bug';
    default: {
      const unhandled: never = code;
      return unhandled;
    }
  }
}

try {
  await LLM.load('https://example.com/missing.gguf');
} catch (error) {
  if (error instanceof LoadError) {
    const status: number | undefined = error.status;
    // A LoadError's code is narrower than ErrorCode.
    if (error.code === 'not_found' || error.code === 'http_error') console.log(status);
    // @ts-expect-error: loading never fails with context_full
    if (error.code === 'context_full') console.log('impossible');
  } else if (error instanceof AbortError) {
    const code: 'aborted' = error.code;
    const name: 'AbortError' = error.name;
    console.log(code, name, error.cause);
  }
  console.log(explain(error));
}

try {
  await llm.generate('x'.repeat(100000));
} catch (error) {
  if (error instanceof GenerationError && error.code === 'context_full') console.log(error.message);
  // Argument errors found in JS are TypeError or RangeError with the same code field.
  if (error instanceof TypeError && (error as TypeError & { code?: ErrorCode }).code === 'invalid_argument') {
    console.log('fix the call');
  }
}

// @ts-expect-error: options are camelCase
await llm.generate('x', { max_tokens: 10 });
// @ts-expect-error: an unknown load option
await LLM.load('stories260K', { gpuLayers: 99 });
// @ts-expect-error: the stats come per call, not from the model
console.log(llm.lastStats);
// @ts-expect-error: the abort code is lowercase, like every code
if (new AbortError().code === 'ABORT_ERR') console.log('old code');

await llm.dispose();
