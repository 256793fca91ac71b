// The API from a Node ES module, typed: every option of every call (the
// `satisfies Required<...>` objects fail to compile if an option is added to
// index.d.ts and not here), errors branched on by code, per-call stats.
// Lines marked @ts-expect-error must not compile. Type-checked, never run.
import {
  AbortError, DEFAULT_MODEL, GenerationError, LLM, LLMError, LoadError, MODELS,
  type BenchOptions, type EmbedOptions, type ErrorCode, type FormatChatOptions, type GenerateOptions,
  type GenerationStats, type LoadOptions, type LoadProgress, type ModelInfo, type RankOptions, type TokenizeOptions,
  type ChatCompletion, type ChatCompletionChunk, type ChatCompletionMessageParam, type ChatCompletionRequest,
  type ChatMessage, type ChatReply, type ChatSession, type Completion, type CompletionRequest, type EmbeddingRequest,
  type EmbeddingResponse, type SessionOptions,
  type StateBytes, type StateOptions, type ToolCall, type ToolChatStats, type ToolOptions,
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
  tokenizer: new URL('file:///srv/models/llama2c/tok512.bin'),
  onProgress: (p: LoadProgress) => console.log(p.phase, p.loaded, p.total ?? 'unknown'),
  signal: controller.signal,
} satisfies Required<LoadOptions>;

const llm: LLM = await LLM.load('stories260K', loadOptions);
// A llama2.c checkpoint with its tokenizer file; a split model by its first file, one sha256 per file.
await LLM.load('/srv/models/llama2c/stories260K.bin', { tokenizer: '/srv/models/llama2c/tok512.bin' });
await LLM.load('https://example.com/model-00001-of-00002.gguf', { sha256: ['0'.repeat(64), 'f'.repeat(64)] });
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
// OpenAI's response_format shapes, as the format option.
await llm.generate('{', { format: { type: 'json_object' } });
await llm.generate('{', { format: { type: 'json_schema', json_schema: { name: 'p', schema: { type: 'object' }, strict: null } } });
// @ts-expect-error: the schema goes in json_schema or beside type, not as json_schema's name
await llm.generate('{', { format: { type: 'json_schema', json_schema: { name: 1 } } });

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
// A plain loop reaches the stats through stream.stats; the seed repeats a sampled text.
const sampled = llm.stream('Once upon a time', { maxTokens: 20, temperature: 0.8 });
for await (const piece of sampled) console.log(piece);
const sampledStats: GenerationStats = await sampled.stats;
await llm.generate('Once upon a time', { maxTokens: 20, temperature: 0.8, seed: sampledStats.seed });
const chatPieces = llm.chatStream([{ role: 'user', content: 'Hi' }], { maxTokens: 8 });
for await (const piece of chatPieces) console.log(piece);
const streamedReply: ChatReply = await chatPieces.reply;
console.log(streamedReply.content, (await chatPieces.stats).generatedTokens);
const reply: ChatReply = await llm.chat([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }]);
console.log(reply.content, reply.toolCalls.length);
// @ts-expect-error: chat() resolves to the reply message, not its text
const replyText: string = await llm.chat([{ role: 'user', content: 'Hi' }]);

// A conversation that remembers: each turn evaluates only its new tokens.
const system: ChatMessage = { role: 'system', content: 'Be brief.' };
const sessionOptions = { messages: [system] } satisfies Required<SessionOptions>;
const session: ChatSession = llm.session(sessionOptions);
const first: ChatReply = await session.chat('Hi', { maxTokens: 16 });
const second: ChatReply = await session.chat({ role: 'user', content: 'And then?' }, {
  onStats: (s) => console.log(s.cachedTokens),
});
const turn = session.chatStream('Go on.', { maxTokens: 8 });
for await (const piece of turn) console.log(piece);
const history: ChatMessage[] = session.messages;
console.log(first.content, second.content, history.length, (await turn.reply).content, (await turn.stats).seed);
// @ts-expect-error: the history is read-only
session.messages = [];

// A saved state: bytes to keep (a file, OPFS, IndexedDB) and restore later, in any build.
const stateOptions = { signal: controller.signal } satisfies Required<StateOptions>;
await llm.generate('A long system prompt', { maxTokens: 0 });
const state: StateBytes = await llm.saveState(stateOptions);
await llm.loadState(state, stateOptions);
await llm.loadState(state.buffer);
await llm.loadState(new Blob([state]));

const formatOptions = { addGenerationPrompt: false, tools: [], toolChoice: 'none' } satisfies Required<FormatChatOptions>;
const prompt: string = llm.formatChat([{ role: 'user', content: 'Hi' }], formatOptions);
const tokenizeOptions = { addSpecial: false, parseSpecial: true } satisfies Required<TokenizeOptions>;
const ids: number[] = await llm.tokenize(prompt, tokenizeOptions);
console.log(await llm.detokenize(ids), await llm.detokenize(new Int32Array(ids)));
const benchOptions = { promptTokens: 32, generateTokens: 16 } satisfies Required<BenchOptions>;
const bench = await llm.bench(benchOptions);
console.log(bench.prefillSeconds, bench.decodeSeconds, bench.runs);
const embedOptions = { normalize: true, pooling: 'mean', signal: controller.signal } satisfies Required<EmbedOptions>;
const vector: Float32Array = await llm.embed('a sentence', embedOptions);
const vectors: Float32Array[] = await llm.embed(['one', 'two'], { pooling: 'cls' });
// @ts-expect-error: no such pooling
await llm.embed('x', { pooling: 'max' });
const rankOptions = { signal: controller.signal } satisfies Required<RankOptions>;
const scores: number[] = await llm.rank('query', ['a document', 'another'], rankOptions);
console.log(vector.length, vectors.length, scores, info.encoder, info.pooling, info.reranker);
const embeddingRequest = {
  input: ['one', 'two'], model: 'bge', encoding_format: 'float', dimensions: 384, user: 'u',
} satisfies Required<EmbeddingRequest>;
const embedded: EmbeddingResponse = await llm.embeddings.create(embeddingRequest, { signal: controller.signal });
console.log(embedded.data[0].embedding, embedded.usage.prompt_tokens, (await llm.createEmbedding({ input: 'x' })).model);
// @ts-expect-error: token ids are not taken
await llm.createEmbedding({ input: [[1, 2]] });

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

// Tool calls: chat() with tools resolves to the reply message, which goes back into the conversation.
const weather = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
} as const;
const toolOptions = {
  tools: [weather, { name: 'now', description: 'The time' }],
  toolChoice: { type: 'function', function: { name: 'get_weather' } },
  parallelToolCalls: false,
} satisfies Required<ToolOptions>;
const conversation: ChatMessage[] = [{ role: 'user', content: 'Weather in Paris?' }];
const toolReply: ChatReply = await llm.chat(conversation, { ...toolOptions, maxTokens: 64 });
conversation.push(toolReply);
for (const call of toolReply.toolCalls) {
  const city = call.arguments['city'];
  conversation.push({ role: 'tool', toolCallId: call.id, name: call.name, content: JSON.stringify({ city, temp: 21 }) });
}
const answer2: ChatReply = await llm.chat(conversation, { tools: toolOptions.tools, toolChoice: 'auto' });
console.log(answer2.content, llm.formatChat(conversation, { tools: toolOptions.tools, toolChoice: 'none' }));
const toolStream = llm.chatStream(conversation, { tools: [weather] });
for (let r = await toolStream.next(); ; r = await toolStream.next()) {
  if (r.done) {
    const calls: ToolCall[] = (r.value satisfies ToolChatStats).toolCalls;
    console.log(calls.length);
    break;
  }
  console.log(r.value);
}
// @ts-expect-error: a tool call's arguments are an object, not JSON text
conversation.push({ role: 'assistant', content: '', toolCalls: [{ id: 'x', name: 'now', arguments: '{}' }] });

// The OpenAI-style API: every parameter, a completion, a stream of chunks, the SDK's spelling.
const messages: ChatCompletionMessageParam[] = [
  { role: 'developer', content: 'Be brief.' },
  { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
  { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
  { role: 'tool', tool_call_id: 'c1', content: '{"temp": 21}' },
];
const request = {
  model: 'stories260K', stream: false, stream_options: null, max_tokens: 64, stop: ['\n\n'], seed: 1,
  temperature: 0.7, top_p: 0.9, top_k: 40, min_p: 0.05, repetition_penalty: 1.1, frequency_penalty: 0,
  presence_penalty: 0, n: 1, logprobs: false, top_logprobs: null, logit_bias: {}, user: 'me', messages,
  max_completion_tokens: null, response_format: { type: 'text' }, tools: [weather], tool_choice: 'auto',
  parallel_tool_calls: true, store: false, metadata: null, service_tier: null, modalities: null, audio: null,
  prediction: null, reasoning_effort: null, web_search_options: null, functions: null, function_call: null,
} satisfies Required<ChatCompletionRequest>;
const completion: ChatCompletion = await llm.createChatCompletion(request, { signal: controller.signal });
const choice = completion.choices[0];
console.log(choice.message.content, choice.message.tool_calls?.[0]?.function.arguments, choice.finish_reason,
  completion.usage.total_tokens);
const chunks: AsyncIterable<ChatCompletionChunk> = await llm.chat.completions.create({
  messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true },
  response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' }, strict: true } },
});
for await (const chunk of chunks) console.log(chunk.choices[0]?.delta.content ?? '', chunk.usage?.prompt_tokens);
const textRequest = {
  model: null, stream: false, stream_options: null, max_tokens: 16, stop: null, seed: null, temperature: 0,
  top_p: null, top_k: null, min_p: null, repetition_penalty: null, frequency_penalty: null, presence_penalty: null,
  n: null, logprobs: null, top_logprobs: null, logit_bias: null, user: null, prompt: 'Once upon a time', echo: false,
  suffix: '', best_of: 1,
} satisfies Required<CompletionRequest>;
const textCompletion: Completion = await llm.completions.create(textRequest);
console.log(textCompletion.choices[0]?.text, textCompletion.usage?.completion_tokens);
for await (const chunk of await llm.createCompletion({ prompt: 'Once', stream: true })) console.log(chunk.choices[0]?.text);
// @ts-expect-error: only one choice
await llm.createChatCompletion({ messages, n: 2 });

await llm.dispose();
