// The figures panel: the prompt's tokens and how many of them the engine's
// KV cache held already (a chat's earlier turns: not evaluated again),
// prefill and decode speed, tokens generated, memory, threads in use and
// build (threaded or not, and its kernels). While a
// generation streams, decode speed and the token count are estimated from the
// pieces seen so far (one piece per token, except while a UTF-8 character is
// incomplete); when it ends, the engine's own counts and times (its stats)
// replace the estimates.
import { formatBytes, formatRate } from './format.js';

const KERNELS = { relaxed: 'relaxed SIMD', simd128: 'SIMD128' };  // llm.info.kernels

export class Stats {
  constructor(list) {
    this.cells = Object.fromEntries([...list.querySelectorAll('[data-stat]')].map((dd) => [dd.dataset.stat, dd]));
    this.info = null;
  }

  #set(name, text) {
    this.cells[name].textContent = text;
  }

  // A model was loaded (info) or unloaded (null).
  showModel(info) {
    this.info = info;
    for (const name of ['prompt', 'prefill', 'decode', 'tokens', 'threads']) this.#set(name, '–');
    this.#set('memory', info ? formatBytes(info.memory.total) : '–');
    this.#set('build', info ? `${info.threaded ? 'threaded' : 'single-thread'}, ${KERNELS[info.kernels]}` : '–');
    if (info) this.#set('threads', `${info.threads} available`);
  }

  // A generation starts: returns onPiece(), to call for every piece of text.
  // Prefill is known only at the end (the prompt's token count comes with it).
  startGeneration() {
    let firstAt = 0;
    let pieces = 0;
    for (const name of ['prompt', 'prefill', 'decode']) this.#set(name, '…');
    this.#set('tokens', '0');
    return () => {
      pieces += 1;
      const now = performance.now();
      if (pieces === 1) firstAt = now;
      else this.#set('decode', `≈ ${formatRate(pieces - 1, (now - firstAt) / 1000)} tok/s`);
      this.#set('tokens', `≈ ${pieces}`);
    };
  }

  // The generation finished: the engine's figures (its stats, from onStats).
  finish(stats) {
    const { promptTokens, cachedTokens, prefillSeconds } = stats;
    const evaluated = promptTokens - cachedTokens;
    this.#set('prompt', cachedTokens > 0 ? `${promptTokens} (reused ${cachedTokens})` : String(promptTokens));
    this.cells.prompt.title = `${cachedTokens} of the prompt's ${promptTokens} tokens were in the KV cache already`;
    this.#set('prefill', `${formatRate(evaluated, prefillSeconds)} tok/s`);
    this.cells.prefill.title = `${evaluated} prompt tokens in ${prefillSeconds.toFixed(3)} s`;
    this.#set('decode', `${formatRate(stats.generatedTokens, stats.decodeSeconds)} tok/s`);
    this.#set('tokens', String(stats.generatedTokens));
    this.#set('threads', `${stats.threadsUsed} of ${this.info.threads}`);
  }

  // The generation was stopped or failed: the estimates stay, marked as such.
  interrupted() {
    for (const name of ['prompt', 'prefill', 'decode']) {
      if (this.cells[name].textContent === '…') this.#set(name, '–');
    }
  }
}
