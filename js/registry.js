// Models known by name: LLM.load('stories260K') finds the file in a local
// models folder, then in the download cache, then downloads it from `url` and
// checks its size and sha256.
export const MODELS = Object.freeze({
  stories260K: Object.freeze({
    file: 'stories260K.gguf',
    url: 'https://huggingface.co/ggml-org/models/resolve/main/tinyllamas/stories260K.gguf',
    size: 1185376,
    sha256: '270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d',
    description: "Karpathy's TinyStories 260K-parameter Llama (F32): tiny, for tests and demos",
  }),
});

export const DEFAULT_MODEL = 'stories260K';

// The registry entry for `name`, or undefined.
export function findModel(name) {
  return Object.hasOwn(MODELS, name) ? MODELS[name] : undefined;
}

// 'hf:owner/repo/path/file.gguf' (optionally '@revision' after the repo) →
// the file's download URL on huggingface.co; undefined if `spec` is not one.
export function huggingFaceUrl(spec) {
  const match = /^hf:([\w.-]+)\/([\w.-]+)(?:@([\w.-]+))?\/(.+)$/.exec(spec);
  if (!match) return undefined;
  const [, owner, repo, revision = 'main', file] = match;
  const path = file.split('/').map(encodeURIComponent).join('/');
  return `https://huggingface.co/${owner}/${repo}/resolve/${encodeURIComponent(revision)}/${path}`;
}

// The download URL a string names: an http(s) URL itself, or an 'hf:' spec's;
// undefined for anything else (a path, a name).
export function remoteUrl(text) {
  return /^https?:\/\//i.test(text) ? text : huggingFaceUrl(text);
}
