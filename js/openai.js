// The OpenAI-style API: chat and text completions and embeddings that take
// the requests and return the objects (or, with stream: true, the chunks) an
// app written for OpenAI's API or WebLLM reads, over chat(), generate() and
// embed(). Parameters are
// mapped to this library's options; one it does not support (n > 1,
// logprobs, ...) is an error with code 'unsupported', never ignored, and an
// unknown one is a TypeError, as for the other calls.
import { GenerationError, checkArguments } from './errors.js';
import { generateOptions } from './options.js';
import {
  CHAT_COMPLETION_PARAMETERS, COMPLETION_PARAMETERS, EMBEDDING_PARAMETERS, checkOptionNames,
} from './option-names.js';

// Sampling parameters and the options they map to (top_k, min_p and
// repetition_penalty are llama.cpp's and WebLLM's additions).
const SAMPLING = {
  temperature: 'temperature', top_p: 'topP', top_k: 'topK', min_p: 'minP', frequency_penalty: 'frequencyPenalty',
  presence_penalty: 'presencePenalty', repetition_penalty: 'repeatPenalty',
};
// Parameters whose other values this library has no equivalent for: their
// neutral values are accepted, anything else is 'unsupported'.
const NEUTRAL = {
  n: [1], logprobs: [false], top_logprobs: [0], best_of: [1], echo: [false], store: [false], suffix: [''],
};
const UNSUPPORTED = ['metadata', 'service_tier', 'modalities', 'audio', 'prediction', 'reasoning_effort',
  'web_search_options', 'functions', 'function_call'];

// llm.createChatCompletion(request, {signal}).
export async function createChatCompletion(llm, request, { signal } = {}) {
  const { messages, options, stream, includeUsage } = checkArguments(() => {
    checkRequest(request, CHAT_COMPLETION_PARAMETERS, 'chat completion');
    if (request.max_tokens != null && request.max_completion_tokens != null) {
      throw new TypeError('give max_tokens or max_completion_tokens, not both');
    }
    const tools = request.tools?.length ? request.tools : undefined;
    if (tools === undefined && request.tool_choice === 'required') throw new TypeError("tool_choice 'required' needs tools");
    if (tools !== undefined && request.response_format != null && request.response_format.type !== 'text') {
      throw unsupported('response_format together with tools');
    }
    const options = {
      ...commonOptions(llm, request, request.max_completion_tokens ?? request.max_tokens, signal),
      ...responseFormat(request.response_format),
    };
    generateOptions(options);  // bad values fail here, not at a stream's first chunk
    if (tools !== undefined) {
      options.tools = tools;
      if (request.tool_choice != null) options.toolChoice = request.tool_choice;
      if (request.parallel_tool_calls != null) options.parallelToolCalls = request.parallel_tool_calls;
    }
    return { messages: chatMessages(request.messages), options, ...streaming(request) };
  });
  const head = { id: newId('chatcmpl-'), created: Math.floor(Date.now() / 1000), model: modelName(llm) };
  if (stream) return chatChunks(llm, messages, options, head, includeUsage);
  let stats;
  const { content, toolCalls } = await llm.chat(messages, { ...options, onStats: (s) => (stats = s) });
  const message = { role: 'assistant', content: toolCalls.length > 0 && content === '' ? null : content };
  if (toolCalls.length > 0) message.tool_calls = toolCalls.map(openAiToolCall);
  return {
    ...head,
    object: 'chat.completion',
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(stats, toolCalls) }],
    usage: usage(stats),
  };
}

// llm.createCompletion(request, {signal}).
export async function createCompletion(llm, request, { signal } = {}) {
  const { prompt, options, stream, includeUsage } = checkArguments(() => {
    checkRequest(request, COMPLETION_PARAMETERS, 'completion');
    const prompt = Array.isArray(request.prompt) && request.prompt.length === 1 ? request.prompt[0] : request.prompt;
    if (typeof prompt !== 'string') {
      if (Array.isArray(request.prompt)) throw unsupported('a prompt that is not one string (a list, or token ids)');
      throw new TypeError('prompt must be a string');
    }
    return { prompt, options: commonOptions(llm, request, request.max_tokens, signal), ...streaming(request) };
  });
  const head = { id: newId('cmpl-'), created: Math.floor(Date.now() / 1000), model: modelName(llm) };
  if (stream) return completionChunks(llm, prompt, options, head, includeUsage);
  let stats;
  const text = await llm.generate(prompt, { ...options, onStats: (s) => (stats = s) });
  return {
    ...head,
    object: 'text_completion',
    choices: [{ index: 0, text, logprobs: null, finish_reason: finishReason(stats, []) }],
    usage: usage(stats),
  };
}

// The chunks of a streamed chat completion: the role first, the content as
// it comes, each tool call whole once the reply is complete, the finish
// reason, then (stream_options.include_usage) a chunk with the usage.
// llm.createEmbedding(request, {signal}): the embedding of each input, as
// OpenAI's embeddings endpoint returns them (pooled and normalized as embed()
// does by default).
export async function createEmbedding(llm, request, { signal } = {}) {
  const { texts, base64 } = checkArguments(() => {
    checkRequest(request, EMBEDDING_PARAMETERS, 'embedding');
    const texts = typeof request.input === 'string' ? [request.input] : request.input;
    if (!Array.isArray(texts) || texts.length === 0 || !texts.every((text) => typeof text === 'string')) {
      throw new TypeError('input must be a string or a non-empty array of strings (token ids are not taken)');
    }
    const format = request.encoding_format ?? 'float';
    if (format !== 'float' && format !== 'base64') throw new TypeError("encoding_format must be 'float' or 'base64'");
    if (request.dimensions != null && request.dimensions !== llm.info.embeddingSize) {
      throw unsupported(`dimensions: ${JSON.stringify(request.dimensions)} (this model's embeddings have ${llm.info.embeddingSize})`);
    }
    return { texts, base64: format === 'base64' };
  });
  const embeddings = await llm.embed(texts, { signal });
  const tokens = await Promise.all(texts.map((text) => llm.tokenize(text)));
  const promptTokens = tokens.reduce((sum, ids) => sum + ids.length, 0);
  return {
    object: 'list',
    data: embeddings.map((vector, index) => ({
      object: 'embedding', index, embedding: base64 ? base64Floats(vector) : Array.from(vector),
    })),
    model: modelName(llm),
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}

// OpenAI's base64 encoding of an embedding: its float32 bytes, little-endian
// (as typed arrays hold them on every platform this runs on).
function base64Floats(vector) {
  const bytes = new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength);
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

async function* chatChunks(llm, messages, options, head, includeUsage) {
  const chunk = chunkMaker(head, 'chat.completion.chunk', includeUsage);
  yield chunk({ delta: { role: 'assistant', content: '' } });
  const stream = llm.chatStream(messages, options);
  const stats = yield* relay(stream, (piece) => chunk({ delta: { content: piece } }));
  const { toolCalls } = await stream.reply;
  if (toolCalls.length > 0) {
    yield chunk({ delta: { tool_calls: toolCalls.map((call, index) => ({ index, ...openAiToolCall(call) })) } });
  }
  yield chunk({ delta: {} }, finishReason(stats, toolCalls));
  if (includeUsage) yield chunk.usage(stats);
}

async function* completionChunks(llm, prompt, options, head, includeUsage) {
  const chunk = chunkMaker(head, 'text_completion', includeUsage);
  const stats = yield* relay(llm.stream(prompt, options), (piece) => chunk({ text: piece }));
  yield chunk({ text: '' }, finishReason(stats, []));
  if (includeUsage) yield chunk.usage(stats);
}

// chunk(choice, finishReason): a chunk of `object` with this one choice
// (usage null with include_usage); chunk.usage(stats): the last chunk, with
// no choice and the usage.
function chunkMaker(head, object, includeUsage) {
  const chunk = (choice, finish = null) => ({
    ...head,
    object,
    choices: [{ index: 0, ...choice, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });
  chunk.usage = (stats) => ({ ...head, object, choices: [], usage: usage(stats) });
  return chunk;
}

// Yields chunkOf(piece) for each piece of `stream` and returns its return
// value (the stats). Leaving early closes `stream`, which aborts it.
async function* relay(stream, chunkOf) {
  let done = false;
  try {
    for (;;) {
      const next = await stream.next();
      if (next.done) {
        done = true;
        return next.value;
      }
      yield chunkOf(next.value);
    }
  } finally {
    if (!done) await stream.return();
  }
}

// The request checked: an object whose parameters are all known ones, and
// none set to a value this library has no equivalent for.
function checkRequest(request, known, kind) {
  if (request === null || typeof request !== 'object' || Array.isArray(request)) {
    throw new TypeError(`a ${kind} request must be an object`);
  }
  checkOptionNames(request, known, `${kind}`);
  for (const [key, neutral] of Object.entries(NEUTRAL)) {
    const value = request[key];
    if (value != null && !neutral.includes(value)) throw unsupported(`${key}: ${JSON.stringify(value)}`);
  }
  for (const key of UNSUPPORTED) {
    if (request[key] != null) throw unsupported(key);
  }
  if (request.logit_bias != null && Object.keys(request.logit_bias).length > 0) throw unsupported('logit_bias');
}

// The generate() options of the parameters both kinds of request share.
function commonOptions(llm, request, maxTokens, signal) {
  const options = {};
  for (const [key, option] of Object.entries(SAMPLING)) {
    if (request[key] != null) options[option] = request[key];
  }
  // No limit given: as many tokens as the context holds.
  options.maxTokens = maxTokens ?? llm.info.contextSize;
  if (request.stop != null) options.stop = request.stop;
  // No seed: generate() draws a new one each time, as OpenAI's API samples.
  if (request.seed != null) options.seed = request.seed;
  if (signal !== undefined) options.signal = signal;
  return options;
}

function streaming(request) {
  const { stream = false, stream_options: streamOptions } = request;
  if (typeof (stream ?? false) !== 'boolean') throw new TypeError('stream must be a boolean');
  if (streamOptions != null) {
    if (!stream) throw new TypeError('stream_options needs stream: true');
    checkOptionNames(streamOptions, ['include_usage'], 'stream_options');
  }
  return { stream: Boolean(stream), includeUsage: Boolean(streamOptions?.include_usage) };
}

// The options for a response_format: 'text' none; 'json_object' and
// 'json_schema' are the `format` option as they are (js/options.js reads
// OpenAI's shape); WebLLM's json_object with a `schema` (a JSON string) and
// its {type: 'grammar', grammar} are converted here.
function responseFormat(format) {
  if (format == null || format.type === 'text') return {};
  if (format.type === 'json_object' && format.schema !== undefined) {
    return { format: { type: 'json_schema', schema: typeof format.schema === 'string' ? parseJson(format.schema, 'response_format.schema') : format.schema } };
  }
  if (format.type === 'json_object' || format.type === 'json_schema') return { format };
  if (format.type === 'grammar') return { grammar: format.grammar };
  throw new TypeError("response_format.type must be 'text', 'json_object', 'json_schema' or 'grammar'");
}

// OpenAI's messages as chat()'s: text parts joined, tool calls' JSON
// arguments parsed, developer as system.
function chatMessages(messages) {
  if (!Array.isArray(messages)) throw new TypeError('messages must be an array of messages');
  return messages.map((m, i) => {
    if (m === null || typeof m !== 'object') throw new TypeError(`messages[${i}] must be a message object`);
    const { role, content = null, name, tool_calls: calls, tool_call_id: toolCallId, ...rest } = m;
    const other = Object.keys(rest).find((k) => !(k === 'refusal' && rest[k] == null));
    if (other !== undefined) throw new TypeError(`messages[${i}] has an unknown field '${other}'`);
    if (role === 'function') throw unsupported("messages of role 'function' (use 'tool')");
    if (name != null && role !== 'tool') throw unsupported(`messages[${i}].name (participant names)`);
    const out = { role: role === 'developer' ? 'system' : role, content: textOf(content, i) };
    if (calls?.length) out.toolCalls = calls.map((c, j) => toolCallOf(c, `messages[${i}].tool_calls[${j}]`));
    if (role === 'tool') {
      if (toolCallId != null) out.toolCallId = toolCallId;
      if (name != null) out.name = name;
    }
    return out;
  });
}

// A message's content as text: a string, null (an assistant's with only
// tool calls), or text parts.
function textOf(content, i) {
  if (content === null || typeof content === 'string') return content;
  if (!Array.isArray(content)) throw new TypeError(`messages[${i}].content must be a string or an array of parts`);
  return content.map((part, j) => {
    if (part?.type !== 'text') throw unsupported(`messages[${i}].content[${j}] of type '${part?.type}' (only text)`);
    if (typeof part.text !== 'string') throw new TypeError(`messages[${i}].content[${j}].text must be a string`);
    return part.text;
  }).join('\n');
}

function toolCallOf(call, where) {
  const fn = call?.function;
  if (call?.type !== undefined && call.type !== 'function') throw unsupported(`${where} of type '${call.type}'`);
  if (typeof fn?.name !== 'string') throw new TypeError(`${where} must be {id, type: 'function', function: {name, arguments}}`);
  const args = typeof fn.arguments === 'string' ? parseJson(fn.arguments || '{}', `${where}.function.arguments`) : fn.arguments ?? {};
  return { ...(call.id == null ? {} : { id: call.id }), name: fn.name, arguments: args };
}

function parseJson(text, what) {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new TypeError(`${what} is not JSON: ${error.message}`);
  }
}

function openAiToolCall(call) {
  return { id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.arguments) } };
}

// 'length' when the limit cut the reply (its calls may be only the first ones).
function finishReason(stats, toolCalls) {
  if (stats.stopReason === 'max_tokens' || stats.stopReason === 'context_full') return 'length';
  return toolCalls.length > 0 ? 'tool_calls' : 'stop';
}

function usage(stats) {
  return {
    prompt_tokens: stats.promptTokens,
    completion_tokens: stats.generatedTokens,
    total_tokens: stats.promptTokens + stats.generatedTokens,
  };
}

function modelName(llm) {
  return llm.info.name || llm.info.architecture;
}

function newId(prefix) {
  return prefix + Math.random().toString(36).slice(2, 14) + Date.now().toString(36);
}

function unsupported(what) {
  return new GenerationError(`${what} is not supported`, { code: 'unsupported' });
}
