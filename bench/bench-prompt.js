// The benchmark's prompt for engines fed from JS (llama.cpp via
// node-llama-cpp in Node, wllama in Chromium): the same pseudo-random token
// ids as cpp/engine/bench.cpp's bench_prompt(), so every engine evaluates the
// same tokens. Plain JS, no Node modules: the bench pages import it too.
export function benchPrompt(n, nVocab) {
  let state = 12345;
  const prompt = [];
  for (let i = 0; i < n; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    prompt.push(state % nVocab);
  }
  return prompt;
}
