// What the embedding benchmark times, shared by its Node runner and its
// Chromium page: `count` texts of exactly `tokens` tokens with a BERT
// vocabulary ([CLS], tokens − 2 words of one token each, [SEP]), no two
// alike, embedded in one llm.embed() call after a warm-up call.
const WORDS = ['hello', 'world', 'cat', 'dog', 'house', 'tree', 'water', 'light'];

export function embedTexts(tokens, count) {
  return Array.from({ length: count }, (_, i) =>
    Array.from({ length: tokens - 2 }, (_, j) => WORDS[(i * 3 + j * (1 + (i % 5))) % WORDS.length]).join(' '));
}

// Seconds one llm.embed(texts) takes with the model `source` loaded by
// `LLM` (the package's Node or browser class) with `options`; `measure`
// wraps the timed call (its promise of seconds) to take more figures.
export async function timeEmbedding(LLM, source, options, texts, measure = (run) => run()) {
  const llm = await LLM.load(source, { cache: false, ...options });
  try {
    if (llm.info.threads !== options.threads) {
      throw new Error(`asked for ${options.threads} threads, the engine has ${llm.info.threads}`);
    }
    await llm.embed(texts.slice(0, 2));
    return await measure(async () => {
      const started = performance.now();
      await llm.embed(texts);
      return (performance.now() - started) / 1000;
    });
  } finally {
    await llm.dispose();
  }
}
