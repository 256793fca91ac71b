// llama.cpp reads what our `convert` and `split` write: the GGUF made of
// the llama2.c checkpoint stories260K.bin gives llama.cpp exactly the logits
// of the GGUF llama.cpp's own converter made of it, and a synthetic model
// split in 3 gives llama.cpp exactly the logits of the model in one file.
// Ours, on the checkpoint and on the split files, are exactly ours on the
// one file (whose distance to llama.cpp tests/reference/logits.test.mjs checks).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { syntheticModel } from '../js/helpers.mjs';
import { compareDistributions, logitsFile, ourLogits, referenceLogits, runCli,
  sharedModels } from './reference.mjs';

const dir = mkdtempSync(join(tmpdir(), 'wasm-llm-model-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const tokens = [1, 403, 407, 261, 378, 286, 389, 300, 311, 370, 294, 268, 263, 343, 412, 295];

describe('llama.cpp loads what convert and split write', () => {
  it('stories260K.bin converted: llama.cpp gives the logits of stories260K.gguf, and ours are its', async () => {
    const converted = join(dir, 'stories260K-converted.gguf');
    await runCli(['convert', join(sharedModels, 'llama2c', 'stories260K.bin'),
      '--tokenizer', join(sharedModels, 'llama2c', 'tok512.bin'), '-o', converted]);
    const original = join(sharedModels, 'stories260K.gguf');
    const theirs = await referenceLogits(converted, tokens);
    expect(theirs).toEqual(await referenceLogits(original, tokens));
    // Ours from the checkpoint itself: as close to llama.cpp as ours from the GGUF.
    const bin = await ourLogits(join(sharedModels, 'llama2c', 'stories260K.bin'), tokens, logitsFile('stories260K-bin'));
    const gguf = await ourLogits(original, tokens, logitsFile('stories260K-gguf'));
    expect(bin).toEqual(gguf);
    const c = compareDistributions(theirs, bin);
    expect(c.top1).toBe(1);
    expect(c.meanKl).toBeLessThan(1e-4);
  });

  it('a synthetic model split in 3: llama.cpp and we give the one file\'s logits', async () => {
    const model = await syntheticModel('q8_0');
    const files = (await runCli(['split', '--split-max-tensors', '14', model, join(dir, 'synth')]))
      .stdout.trim().split('\n');
    expect(files).toHaveLength(3);
    expect(await referenceLogits(files[0], tokens)).toEqual(await referenceLogits(model, tokens));
    // How close ours are to llama.cpp on this model is logits.test.mjs's; here: the same bits.
    expect(await ourLogits(files[0], tokens, logitsFile('split-3-q8_0'))).toEqual(
      await ourLogits(model, tokens, logitsFile('split-whole-q8_0')));
  });
});
