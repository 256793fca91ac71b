// The settings form: generation options for each run, and the load options
// (threads, context) for the next model.
const MAX_DEFAULT_THREADS = 4;  // as the library's own default (js/browser/platform.js)

export class Settings {
  constructor({ form, threadsHint }) {
    this.form = form;
    form.addEventListener('submit', (event) => event.preventDefault());  // Enter in a field must not reload the page
    const threads = form.elements.threads;
    // Threads need SharedArrayBuffer, which only a cross-origin isolated page has.
    if (crossOriginIsolated) {
      threads.value = Math.min(MAX_DEFAULT_THREADS, navigator.hardwareConcurrency || 1);
      threadsHint.textContent = `This page is cross-origin isolated: the threaded build runs with this many threads ` +
        `(this device has ${navigator.hardwareConcurrency || 'an unknown number of'} cores).`;
    } else {
      threads.value = 1;
      threads.disabled = true;
      threadsHint.textContent = 'Threads need a cross-origin isolated page (the COOP and COEP headers): ' +
        'this page runs the single-thread build.';
    }
  }

  // Whether every field holds an allowed value; if not, the browser points at the first bad one.
  check() {
    return this.form.reportValidity();
  }

  // Options for llm.generate/stream/chatStream.
  generateOptions() {
    const { maxTokens, temperature, topK, topP, seed } = this.form.elements;
    return {
      maxTokens: maxTokens.valueAsNumber,
      temperature: temperature.valueAsNumber,
      topK: topK.valueAsNumber,
      topP: topP.valueAsNumber,
      seed: seed.valueAsNumber,
    };
  }

  // Options for LLM.load.
  loadOptions() {
    const { threads, contextSize } = this.form.elements;
    return { threads: threads.valueAsNumber, contextSize: contextSize.valueAsNumber };
  }
}
