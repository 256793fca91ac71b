// Loads a model through the package's browser entry and generates, as an app would.
import { LLM } from 'wasm-llm';

window.generateWith = async (url, prompt, options, loadOptions) => {
  const llm = await LLM.load(url, loadOptions);
  try {
    let stats;
    const text = await llm.generate(prompt, { ...options, onStats: (s) => (stats = s) });
    return { text, info: llm.info, stats };
  } finally {
    await llm.dispose();
  }
};
