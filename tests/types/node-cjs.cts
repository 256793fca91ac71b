// The API from a CommonJS module, typed: the whole API from require() (Node
// 20.19, 22.12 and later), and api(), which older Nodes reach it by; errors
// branched on by code or class. Type-checked, never run.
import wasmLlm = require('wasm-llm');
import type { ChatCompletion, ChatReply, ChatSession, ErrorCode, GenerationStats, LLMInstance, LoadOptions } from 'wasm-llm';

async function main(): Promise<void> {
  const options: LoadOptions = { threads: 1, contextSize: 256 };
  const llm: LLMInstance = await wasmLlm.LLM.load('stories260K', options);
  let stats: GenerationStats | undefined;
  const text: string = await llm.generate('Once upon a time', { maxTokens: 20, onStats: (s) => (stats = s) });
  console.log(text, stats?.prefillSeconds, stats?.cachedTokens);
  const reply: ChatReply = await llm.chat([{ role: 'user', content: 'Hi' }], { tools: [{ name: 'now' }] });
  const plain: ChatReply = await llm.chat([{ role: 'user', content: 'Hi' }]);
  const stream = llm.stream('Once', { temperature: 0.8 });
  for await (const piece of stream) console.log(piece);
  console.log(plain.content, (await stream.stats).seed);
  const completion: ChatCompletion = await llm.chat.completions.create({ messages: [{ role: 'user', content: 'Hi' }] });
  console.log(reply.toolCalls, completion.choices[0].message.content);
  const session: ChatSession = llm.session({ messages: [{ role: 'system', content: 'Be brief.' }] });
  console.log((await session.chat('Hi')).content);
  await llm.loadState(await llm.saveState());
  await llm.dispose();

  // The classes and the cache, straight from require().
  const instance: wasmLlm.LLM = llm;
  console.log(instance.info.name, wasmLlm.MODELS[wasmLlm.DEFAULT_MODEL]?.size, await wasmLlm.LLM.cache.list());
  try {
    await wasmLlm.LLM.load('/no/such/model.gguf');
  } catch (error) {
    if (error instanceof wasmLlm.LLMError && error.code === 'not_found') console.log('missing');
    if (error instanceof wasmLlm.AbortError || error instanceof wasmLlm.GenerationError) console.log(error.code);
  }

  const { LLM, LoadError } = await wasmLlm.api();
  try {
    await LLM.load('/no/such/model.gguf');
  } catch (error) {
    const code: ErrorCode | undefined = (error as { code?: ErrorCode }).code;
    if (code === 'not_found') console.log('missing');
    if (error instanceof LoadError) console.log(error.code, error.status);
  }
  // @ts-expect-error: an unknown load option
  await wasmLlm.LLM.load('stories260K', { n_ctx: 512 });
}

void main();
