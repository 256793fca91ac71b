// Regenerates tests/reference/golden/ from llama.cpp (node-llama-cpp), for the
// C++ golden test (tests/cpp/tokenizer_test.cpp), in llama.cpp's own format:
//   corpus.inp             the corpus strings, separated by "\n__ggml_vocab_test__\n"
//   <vocab>.out            one line of space-separated ids per string (no BOS)
//   <vocab>.special.out    the same with parse_special
// Run from the repo root after changing the corpus:
//   node tests/reference/gen_tokenizer_golden.mjs
import fs from 'node:fs';
import path from 'node:path';
import {goldenDir, modelsDir, readCorpus, vocabFiles} from './tokenizer_reference.mjs';

const {getLlama, LlamaLogLevel} = await import('node-llama-cpp');
const llama = await getLlama({gpu: false, build: 'never', logLevel: LlamaLogLevel.error});
const corpus = readCorpus();
fs.mkdirSync(goldenDir, {recursive: true});
fs.writeFileSync(path.join(goldenDir, 'corpus.inp'), corpus.join('\n__ggml_vocab_test__\n'));
for (const file of vocabFiles) {
  const model = await llama.loadModel({modelPath: path.join(modelsDir, file), vocabOnly: true});
  const name = path.basename(file, '.gguf');
  for (const special of [false, true]) {
    const lines = corpus.map((text) => Array.from(model.tokenize(text, special)).join(' '));
    fs.writeFileSync(path.join(goldenDir, `${name}${special ? '.special' : ''}.out`), lines.join('\n') + '\n');
  }
  await model.dispose();
  console.log(`wrote ${name}`);
}
