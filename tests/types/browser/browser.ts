// The API in a browser app, typed as a bundler project sees it: every load
// and generate option, the sources a page has (File, Blob, a fetch body, a
// URL relative to the page), errors by code, stats per call, and an
// OpenAI-style stream.
// Type-checked, never run.
import {
  AbortError, LLM, LLMError, LoadError,
  type GenerateOptions, type GenerationStats, type LoadOptions, type ModelSource,
} from 'wasm-llm';

const controller = new AbortController();

const loadOptions = {
  threads: navigator.hardwareConcurrency,
  contextSize: 0,
  memoryLimit: 0,
  sha256: '270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d',
  cache: false,
  relaxedSimd: true,
  cacheDir: 'ignored in browsers',
  modelsDir: 'ignored in browsers',
  size: 1185376,
  tokenizer: new Blob([new Uint8Array(6227)]),
  onProgress: ({ phase, loaded, total }) => console.log(phase, loaded, total),
  signal: AbortSignal.timeout(60_000),
} satisfies Required<LoadOptions>;

const generateOptions = {
  maxTokens: 200,
  temperature: 0,
  topK: 0,
  topP: 1,
  minP: 0,
  repeatPenalty: 1,
  repeatLastN: 0,
  frequencyPenalty: 0.5,
  presencePenalty: 0.5,
  seed: 42,
  stop: 'The end',
  addSpecial: true,
  parseSpecial: true,
  cachePrompt: false,
  signal: controller.signal,
  onToken: (piece) => document.body.append(piece),
  onStats: (stats) => console.log(stats.promptTokens / stats.prefillSeconds),
  // One of format and grammar (they exclude each other): format here, grammar below.
  format: {
    type: 'json_schema', schema: { type: 'object', properties: { name: { type: 'string' } } }, name: 'x', strict: true,
  },
} satisfies Required<Omit<GenerateOptions, 'grammar'>>;
const grammarOptions = { grammar: 'root ::= "yes" | "no"' } satisfies GenerateOptions;

async function run(input: HTMLInputElement): Promise<void> {
  const file: File = input.files![0]!;
  const sources: ModelSource[] = [
    file, new Blob([await file.arrayBuffer()]), (await fetch('/models/stories260K.gguf')).body!,
    '../models/stories260K.gguf', new URL('https://huggingface.co/x/y/resolve/main/m.gguf'), new Uint8Array(8),
  ];
  // A llama2.c checkpoint and its tokenizer, both picked files; a split model by its first file's URL.
  await LLM.load(file, { tokenizer: input.files![1]! });
  await LLM.load('/models/model-00001-of-00003.gguf', { cache: true });
  for (const source of sources) {
    try {
      const llm = await LLM.load(source, loadOptions);
      const text: string = await llm.generate('Once upon a time', generateOptions);
      const answer: string = await llm.generate('Is it?', grammarOptions);
      console.log(answer);
      let stats: GenerationStats | undefined;
      const stream = llm.stream(text, { maxTokens: 10 });
      for (;;) {
        const next = await stream.next();
        if (next.done) {
          stats = next.value;
          break;
        }
        document.body.append(next.value);
      }
      console.log(stats.generatedTokens, stats.stopReason);
      // A WebLLM app's streamed chat, unchanged but for the engine it calls.
      const chunks = await llm.chat.completions.create({
        messages: [{ role: 'user', content: text }], stream: true, stream_options: { include_usage: true },
      });
      for await (const chunk of chunks) document.body.append(chunk.choices[0]?.delta.content ?? '');
      // A saved state kept in OPFS, restored on the next visit.
      const dir = await navigator.storage.getDirectory();
      const handle = await dir.getFileHandle('state.bin', { create: true });
      const writable = await handle.createWritable();
      await writable.write(await llm.saveState());
      await writable.close();
      await llm.loadState(await handle.getFile());
      const chat = llm.session();
      console.log((await chat.chat('Hi')).content, chat.messages.length);
      await llm.dispose();
    } catch (error) {
      if (error instanceof AbortError) continue;
      if (error instanceof LoadError && error.code === 'not_found') console.log(`missing: HTTP ${error.status}`);
      else if (error instanceof LLMError) console.log(error.code, error.message, error.cause);
    }
  }
}

document.querySelector('input')?.addEventListener('change', (event) => run(event.target as HTMLInputElement));
