// What the page says when something fails: a headline for the user and the
// library's own message (which names the file, the URL or the numbers).
import { AbortError, GenerationError, LoadError } from '../js/browser.js';

// {title, detail} for an error of LLM.load (while loading `what`).
export function loadErrorText(error, what) {
  if (error instanceof AbortError) return { title: `Loading ${what} was cancelled.`, detail: '' };
  if (error instanceof LoadError) {
    if (error.status === 404) return { title: `${what} was not found (HTTP 404).`, detail: error.message };
    if (error.status) return { title: `The server refused ${what} (HTTP ${error.status}).`, detail: error.message };
    if (/not a GGUF file/.test(error.message)) return { title: `${what} is not a GGUF model file.`, detail: error.message };
    if (error.cause?.code === 'OUT_OF_MEMORY') {
      return { title: `${what} is too large for the 4 GB WebAssembly memory.`, detail: error.message };
    }
    return { title: `Could not load ${what}.`, detail: error.message };
  }
  // TypeError and RangeError: an unusable source or option, before any download.
  return { title: `Could not load ${what}.`, detail: error?.message ?? String(error) };
}

// {title, detail} for an error of a generation.
export function generateErrorText(error) {
  if (error instanceof GenerationError) return { title: 'Generation failed.', detail: error.message };
  return { title: 'Generation failed.', detail: error?.message ?? String(error) };
}
