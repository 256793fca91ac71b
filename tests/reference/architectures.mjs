// The architectures beyond llama, one row each, and the synthetic model of
// its structure every test layer runs: against llama.cpp
// (architectures.test.mjs), native against wasm in Node and in browsers, and
// x86 against aarch64 (tools/test-arm-kernels.sh). A new architecture is one
// row here.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { cached, runCli, sharedModels } from './reference.mjs';

// vocab: a file of ../shared/models whose tokenizer the model gets; synth:
// `synth` arguments (rows of 256, so every K-quant applies). Most take
// stories260K's 512 tokens: with a real 128k-151k vocabulary the embedding and
// output matrices would outweigh the layers, where the architectures differ,
// tenfold (and every suite that runs these models would pay for it); the real
// vocabularies are the tokenizer tests' (tokenizer.test.mjs). Gemma's and
// Phi-3's 32000 and 32064 tokens keep output matrices of a real size in the
// checks.
export const architectures = [
  // Head width 128 beside a width of 256 (attention.key_length).
  { arch: 'qwen3', vocab: 'stories260K.gguf', synth: ['--shape', '256x4:4/2:768', '--head-dim', '128'] },
  { arch: 'smollm3', vocab: 'stories260K.gguf', synth: ['--shape', '256x4:4/2:768'] },
  // A window of 32 positions: 165 tokens cross it and wrap the local layers'
  // ring. Tied, as Gemma 3 is (synth then peaks the output on the current
  // token: an untied one's distribution is flat enough here that llama.cpp's
  // f16 rounding in attention flips near-ties of the quantized models).
  { arch: 'gemma3', vocab: 'vocab/ggml-vocab-llama-spm.gguf',
    synth: ['--shape', '256x6:4/1:768', '--head-dim', '128', '--sliding-window', '32', '--tied'] },
  // Gemma 2's output is always the embedding (tied: synth peaks it on the
  // current token).
  { arch: 'gemma2', vocab: 'vocab/ggml-vocab-llama-spm.gguf',
    synth: ['--shape', '256x4:4/2:768', '--head-dim', '128', '--sliding-window', '32'] },
  // As many key-value heads as query heads, as GPT-2 has.
  { arch: 'gpt2', vocab: 'stories260K.gguf', synth: ['--shape', '256x4:4/4:768'] },
  // 6 layers: convolutions at 0, 1, 3, 4, attention at 2 and 5 (real models' pattern).
  { arch: 'lfm2', vocab: 'stories260K.gguf', synth: ['--shape', '256x6:4/2:768'] },
  // Phi-4-mini's structure (synth): fused Wqkv and W_gate_up, 48 of 64 dims
  // rotating, LongRoPE's long factors (a context of 2048 from 64 pretrained:
  // both engines' contexts are beyond it). The file's sliding window is
  // ignored by both.
  { arch: 'phi3', vocab: 'vocab/ggml-vocab-phi-3.gguf', synth: ['--shape', '256x4:4/2:768', '--sliding-window', '32'] },
  // Granite 3.3's embedding, residual, attention and logit scales (synth).
  { arch: 'granite', vocab: 'stories260K.gguf', synth: ['--shape', '256x4:4/2:768'] },
];

// The f32 model of a row (cached in build/models), or `type` quantized from
// it. The files are named by what makes them (a row's vocabulary and synth
// arguments), so an edited row never reads the model of its old version.
export async function architectureModel({ arch, vocab, synth }, type = 'f32') {
  const recipe = createHash('sha256').update(JSON.stringify([vocab, synth])).digest('hex').slice(0, 8);
  const f32 = await cached(`arch-${arch}-${recipe}-f32.gguf`, (path) =>
    runCli(['synth', '--arch', arch, ...synth, '--type', 'f32', '--seed', '7', '--vocab', join(sharedModels, vocab),
      '-o', path]));
  if (type === 'f32') return f32;
  return cached(`arch-${arch}-${recipe}-${type}.gguf`, (out) => runCli(['quantize', f32, out, type]));
}
