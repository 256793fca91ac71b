// The README's Node examples as a TypeScript file of a CommonJS project (a
// fresh `npm init -y`: "type": "commonjs") compiles them: `import` becomes
// require(), which gives the whole API (Node 20.19, 22.12 and later), and
// top-level await goes in a function. Type-checked, never run.
import { LLM, LLMError } from 'wasm-llm';

declare function getWeather(args: Record<string, unknown>): Promise<unknown>;
declare function showMissingModel(): void;
declare function suggestSmallerModel(): void;
declare const url: string;

async function quickStart(): Promise<void> {
  const llm = await LLM.load('stories260K');
  console.log(await llm.generate('Once upon a time', { maxTokens: 50, temperature: 0 }));
  await llm.dispose();
}

async function api(): Promise<void> {
  const llm = await LLM.load('models/qwen2.5-0.5b-instruct-q4_k_m.gguf', {
    contextSize: 2048,
    threads: 2,
  });
  console.log(llm.info.architecture, llm.info.memory.total);

  const text = await llm.generate('Once upon a time', { maxTokens: 100, temperature: 0 });
  const stream = llm.stream('The cat', { temperature: 0.8 });
  for await (const piece of stream) {
    process.stdout.write(piece);
  }
  const { seed } = await stream.stats;
  const again = await llm.generate('The cat', { temperature: 0.8, seed });
  const reply = await llm.chat([
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: 'Tell me a story.' },
  ], { maxTokens: 64, onStats: (stats) => console.log(stats.generatedTokens, stats.stopReason) });
  console.log(text, again, reply.content);

  const chat = llm.session({ messages: [{ role: 'system', content: 'You are a helpful assistant.' }] });
  console.log((await chat.chat('Tell me a story.')).content);
  console.log((await chat.chat('And then?')).content);
  const state = await llm.saveState();
  await llm.loadState(state);

  const schema = { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' } }, required: ['name', 'age'] };
  const person = JSON.parse(await llm.generate('A person as JSON: ', { format: { type: 'json_schema', schema } }));
  const answer = await llm.generate('Is the sky blue? ', { grammar: 'root ::= "yes" | "no"' });
  console.log(person, answer);

  const tools = [{ type: 'function' as const, function: {
    name: 'get_weather', description: 'The current weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  } }];
  const messages: import('wasm-llm').ChatMessage[] = [{ role: 'user', content: 'What is the weather in Paris?' }];
  const toolReply = await llm.chat(messages, { tools });
  messages.push(toolReply);
  for (const call of toolReply.toolCalls) {
    messages.push({ role: 'tool', toolCallId: call.id, content: JSON.stringify(await getWeather(call.arguments)) });
  }
  console.log((await llm.chat(messages, { tools })).content);

  const engine = await LLM.load('hf:owner/repo/model-q4_k_m.gguf');
  const completion = await engine.chat.completions.create({
    messages: [{ role: 'user', content: 'Name three colours.' }], max_tokens: 100,
  });
  console.log(completion.choices[0].message.content, completion.usage);

  const docs = ['The cat sat on the mat.', 'Stocks fell after the rate rise.'];
  const embedder = await LLM.load('./bge-small-en-v1.5-q8_0.gguf');
  const vectors = await embedder.embed(docs);
  const query = await embedder.embed('Where is the cat?');
  const reranker = await LLM.load('./bge-reranker-base-q8_0.gguf');
  const scores = await reranker.rank('Where is the cat?', docs);
  console.log(vectors.length, query.length, scores);

  const controller = new AbortController();
  setTimeout(() => controller.abort(), 1000);
  await llm.generate('Once', { maxTokens: 5000, signal: controller.signal });

  await LLM.cache.list();
  await LLM.cache.delete(url);
  await LLM.cache.clear();

  try {
    await LLM.load(url);
  } catch (e) {
    if (e instanceof LLMError && e.code === 'not_found') showMissingModel();
    else if (e instanceof LLMError && e.code === 'out_of_memory') suggestSmallerModel();
    else throw e;
  }
}

void quickStart();
void api();
