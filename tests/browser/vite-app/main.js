// Loads a model through the package's browser entry and generates, as an app would.
import { LLM } from 'wasm-llm';

window.generateWith = async (url, prompt, options, loadOptions) => {
  const llm = await LLM.load(url, loadOptions);
  try {
    const text = await llm.generate(prompt, options);
    return { text, info: llm.info, stats: llm.lastStats };
  } finally {
    await llm.dispose();
  }
};
