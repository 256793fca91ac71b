// Replays the inputs of tokenizer_fuzz (its corpus folders) through our CLI
// and through llama.cpp (node-llama-cpp), which must give the same ids: the
// fuzzer finds the inputs, llama.cpp is the oracle. Only inputs whose text is
// valid UTF-8 are compared, since node-llama-cpp takes JS strings.
//   node tests/fuzz/tokenizer-vs-llama.mjs CLI DIR...
// Vocabulary i is the one tokenizer_fuzz picks with byte 0 % count: its list
// (stories260K, then the vocab folder in name order, the supported ones).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sharedModels } from '../reference/reference.mjs';

const [cli, ...dirs] = process.argv.slice(2);
if (!cli || dirs.length === 0) {
  console.error('usage: node tests/fuzz/tokenizer-vs-llama.mjs CLI DIR...');
  process.exit(2);
}
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-llm-tokdiff-'));

// Our ids for every line of `jsonl`, or null if we do not support the vocabulary.
function ours(modelPath, jsonl, special) {
  const args = ['tokenize', '-m', modelPath, '--no-bos', '--jsonl', '--file', jsonl, ...(special ? ['--special'] : [])];
  try {
    const out = execFileSync(cli, args, { encoding: 'utf8', maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'pipe'] });
    return out.trimEnd().split('\n').map((line) => JSON.parse(line));
  } catch (error) {
    if (/not supported/.test(error.stderr)) return null;
    throw error;
  }
}

const vocabPaths = [path.join(sharedModels, 'stories260K.gguf'),
  ...fs.readdirSync(path.join(sharedModels, 'vocab')).sort().map((f) => path.join(sharedModels, 'vocab', f))];
const probe = path.join(tmp, 'probe.jsonl');
fs.writeFileSync(probe, '"a"\n');
const vocabs = vocabPaths.filter((p) => ours(p, probe, false) !== null);

const texts = vocabs.map(() => []);
const utf8 = new TextDecoder('utf-8', { fatal: true });
for (const dir of dirs) {
  for (const file of fs.readdirSync(dir)) {
    const bytes = fs.readFileSync(path.join(dir, file));
    if (bytes.length < 2) continue;
    try {
      texts[bytes[0] % vocabs.length].push(utf8.decode(bytes.subarray(2)));
    } catch {
      // not UTF-8: llama.cpp cannot be given these bytes from JS
    }
  }
}

const { getLlama, LlamaLogLevel } = await import('node-llama-cpp');
// Vocab-only files make llama.cpp log a missing tensor: expected, so dropped.
const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error, logger: () => {} });
let compared = 0;
let mismatches = 0;
for (const [v, modelPath] of vocabs.entries()) {
  if (texts[v].length === 0) continue;
  const jsonl = path.join(tmp, `vocab-${v}.jsonl`);
  fs.writeFileSync(jsonl, texts[v].map((s) => JSON.stringify(s)).join('\n') + '\n');
  const model = await llama.loadModel({ modelPath, vocabOnly: true });
  for (const special of [false, true]) {
    const got = ours(modelPath, jsonl, special);
    texts[v].forEach((text, i) => {
      const expected = JSON.stringify(Array.from(model.tokenize(text, special)));
      ++compared;
      if (JSON.stringify(got[i]) !== expected && ++mismatches <= 10) {
        console.error(`${path.basename(modelPath)} parse_special=${special} ${JSON.stringify(text)}\n` +
          `  llama.cpp ${expected}\n  ours      ${JSON.stringify(got[i])}`);
      }
    });
  }
  await model.dispose();
}
fs.rmSync(tmp, { recursive: true });
console.log(`tokenizer vs llama.cpp: ${compared} encodings compared, ${mismatches} differ`);
process.exit(mismatches === 0 ? 0 : 1);
