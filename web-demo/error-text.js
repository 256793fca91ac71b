// What the page says when something fails: a headline for the user, chosen
// by the error's code, and the library's own message (which names the file,
// the URL or the numbers).

// Headlines for a failed LLM.load of `what`, by code.
const LOAD_TITLES = {
  not_found: (what, e) => `${what} was not found${e.status ? ` (HTTP ${e.status})` : ''}.`,
  http_error: (what, e) => `The server refused ${what} (HTTP ${e.status}).`,
  network: (what) => `${what} could not be downloaded: the network request failed.`,
  io: (what) => `${what} could not be read.`,
  bad_file: (what) => `${what} is not a valid GGUF model file.`,
  unsupported: (what) => `${what} uses something this engine does not support.`,
  sha256_mismatch: (what) => `${what} is not the expected file (its sha256 differs).`,
  out_of_memory: (what) => `${what} is too large for the 4 GB WebAssembly memory.`,
  worker_failed: () => 'The engine could not start.',
};

// Headlines for a failed generation, by code.
const GENERATE_TITLES = {
  context_full: 'The prompt is too long for the context.',
  invalid_argument: 'A setting is out of range.',
  worker_failed: 'The engine stopped.',
};

// {title, detail} for an error of LLM.load (while loading `what`).
export function loadErrorText(error, what) {
  if (error?.code === 'aborted') return { title: `Loading ${what} was cancelled.`, detail: '' };
  const title = LOAD_TITLES[error?.code]?.(what, error) ?? `Could not load ${what}.`;
  return { title, detail: error?.message ?? String(error) };
}

// {title, detail} for an error of a generation.
export function generateErrorText(error) {
  return { title: GENERATE_TITLES[error?.code] ?? 'Generation failed.', detail: error?.message ?? String(error) };
}
