// The embedding models every test layer runs, one row each: the encoders
// and a decoder that embeds (Qwen3-Embedding's pooling), and rerankers. Each
// is a synthetic model of the architecture's structure (`synth`), checked
// against llama.cpp (embeddings.test.mjs), native against wasm in Node
// (tests/js/embed.test.mjs) and in Chromium (tests/browser/embed.test.mjs).
import { join } from 'node:path';
import { cached, runCli, sharedModels } from './reference.mjs';

const bge = 'vocab/ggml-vocab-bert-bge.gguf';
// Four layers of width 256, as many key-value heads as query heads (the
// encoders have no grouped-query attention).
const encoderShape = ['--shape', '256x4:4/4:768'];

// label: names the cached file; synth: `synth` arguments after --arch.
export const embeddingModels = [
  { label: 'bert', arch: 'bert', vocab: bge, synth: encoderShape },
  { label: 'nomic-bert', arch: 'nomic-bert', vocab: bge, synth: encoderShape },
  { label: 'jina-bert-v2', arch: 'jina-bert-v2', vocab: bge, synth: encoderShape },
  // A decoder pooled by its last token, as Qwen3-Embedding.
  { label: 'qwen3-last', arch: 'qwen3', vocab: 'vocab/ggml-vocab-qwen2.gguf',
    synth: ['--shape', '256x4:4/2:768', '--head-dim', '128', '--tied', '--pooling', 'last'] },
];

export const rerankers = [
  { label: 'bert-reranker', arch: 'bert', vocab: bge, synth: [...encoderShape, '--reranker'] },
  { label: 'jina-bert-v2-reranker', arch: 'jina-bert-v2', vocab: bge, synth: [...encoderShape, '--reranker'] },
  // A decoder reranker, as Qwen3-Reranker: its rerank template, the "yes"/"no" softmax of the last token.
  { label: 'qwen3-reranker', arch: 'qwen3', vocab: 'vocab/ggml-vocab-qwen2.gguf',
    synth: ['--shape', '256x4:4/2:768', '--head-dim', '128', '--tied', '--reranker'] },
];

// Sentences from 3 to about 120 tokens: several share an encoder's pass, the
// longest spans two of a decoder's batches.
export const texts = [
  'The cat sat on the mat.',
  'A kitten is resting on a rug.',
  'Stock markets fell sharply on Monday after the central bank raised interest rates.',
  'Embeddings map text to vectors, so that similar meanings end up close together.',
  'Hi',
  'Once upon a time, in a small village by the sea, there lived an old fisherman who told stories about ' +
    'the stars. Every night the children gathered around him, and he would point at the sky and say: ' +
    '"Each light up there is a lantern someone left burning for us." The children laughed, but they ' +
    'listened. One winter the storms came early, and the boats stayed on the shore for many weeks.',
];

export const query = 'Where did the cat sit?';

// The f32 model of a row (cached in build/models), or `type` quantized from it.
export async function embeddingModel({ label, arch, vocab, synth }, type = 'f32') {
  const f32 = await cached(`embed-${label}-f32.gguf`, (path) =>
    runCli(['synth', '--arch', arch, ...synth, '--type', 'f32', '--seed', '7', '--vocab', join(sharedModels, vocab),
      '-o', path]));
  if (type === 'f32') return f32;
  return cached(`embed-${label}-${type}.gguf`, (out) => runCli(['quantize', f32, out, type]));
}

export function cosine(a, b) {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / Math.sqrt(na * nb);
}
