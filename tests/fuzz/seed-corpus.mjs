// Builds the seed corpus of one fuzz target from ../shared/models, into a
// folder (tools/fuzz.sh: build/fuzz-corpus/<target>/seeds). Model files are
// made here at run time by the sanitized CLI's `synth`; none is committed.
//   node tests/fuzz/seed-corpus.mjs TARGET OUT_DIR CLI
// A new fuzz target adds its entry to `builders`.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FALLBACK_CHAT_TEMPLATE } from '../../js/chat.js';
import { readGgufKvs, writeGgufKvs } from './gguf-kv.mjs';
import { repoRoot, sharedModels } from '../reference/reference.mjs';

const stories = join(sharedModels, 'stories260K.gguf');
const vocab = (name) => join(sharedModels, 'vocab', `ggml-vocab-${name}.gguf`);

// Small models of every weight type, on stories260K's 512-token vocabulary
// so each stays under 1 MB. Rows of 64 for the 32-element block types, 256
// for the K-quants (their block), a tiny training context.
const synthModels = [
  ['f32', '64x1:2/1:128', 'llama'],
  ['f16', '64x2:4/2:128', 'qwen2'],
  ['bf16', '64x1:2/1:128', 'llama'],
  ['q4_0', '64x1:2/1:128', 'llama'],
  ['q4_1', '64x1:2/1:128', 'qwen2'],
  ['q5_0', '64x1:2/1:128', 'llama'],
  ['q5_1', '64x1:2/1:128', 'llama'],
  ['q8_0', '64x2:2/2:128', 'llama'],
  ['q2_K', '256x1:4/2:256', 'llama'],
  ['q3_K', '256x1:4/2:256', 'llama'],
  ['q4_K', '256x1:4/4:256', 'qwen2'],
  ['q5_K', '256x1:4/2:256', 'llama'],
  ['q6_K', '256x1:4/2:256', 'llama'],
  ['q4_K_M', '256x1:4/2:256', 'llama'],
];

// The first n tokens of a byte-level BPE vocabulary (its 256 byte tokens
// come first) with the merges among them, the last one renamed to the
// vocabulary's EOS text and made the BOS/EOS/... of the cut: a real
// tokenizer whose construction costs little, so the fuzzer runs many.
function smallBpeVocab(source, n, out) {
  const kvs = readGgufKvs(source).filter((kv) => kv.key.startsWith('tokenizer.') && kv.key !== 'tokenizer.chat_template');
  const get = (key) => kvs.find((kv) => kv.key === key)?.value;
  const tokens = get('tokenizer.ggml.tokens').items;
  const eosText = tokens[get('tokenizer.ggml.eos_token_id')];
  tokens.length = n;
  tokens[n - 1] = eosText;
  const types = get('tokenizer.ggml.token_type').items;
  types.length = n;
  types[n - 1] = 3;  // control
  const kept = new Set(tokens);
  const merges = get('tokenizer.ggml.merges');
  merges.items = merges.items.filter((m) => {
    const [a, b] = m.split(' ');
    return kept.has(a) && kept.has(b) && kept.has(a + b);
  });
  for (const kv of kvs) {
    if (kv.key.endsWith('_token_id') && kv.value >= n) kv.value = n - 1;
  }
  writeGgufKvs(out, kvs);
}

function loaderSeeds(out, cli) {
  const synth = (type, shape, arch, vocabFile, file) =>
    execFileSync(cli, ['synth', '--shape', shape, '--type', type, '--arch', arch, '--ctx', '64', '--vocab', vocabFile,
      '-o', join(out, file)], { stdio: ['ignore', 'ignore', 'pipe'] });
  copyFileSync(stories, join(out, 'stories260K.gguf'));
  for (const [type, shape, arch] of synthModels) synth(type, shape, arch, stories, `synth-${type}-${arch}.gguf`);
  // Byte-level BPE: vocabulary-only files and models on them.
  for (const name of ['gpt-2', 'qwen2']) {
    const small = join(out, `vocab-${name}-1024.gguf`);
    smallBpeVocab(vocab(name), 1024, small);
    synth('q8_0', '64x1:2/1:128', name === 'qwen2' ? 'qwen2' : 'llama', small, `synth-q8_0-${name}-1024.gguf`);
  }
}

// tokenizer_fuzz reads byte 0 as the vocabulary index, byte 1 as flags.
function tokenizerSeeds(out) {
  const corpus = readFileSync(join(repoRoot, 'tests/reference/golden/corpus.inp'), 'utf8')
    .split('\n__ggml_vocab_test__\n').filter((s) => s !== '');
  const nVocabs = 1 + readdirSync(join(sharedModels, 'vocab')).length;  // an upper bound: the target wraps
  corpus.forEach((text, i) => {
    for (let v = 0; v < nVocabs; ++v) {
      const bytes = Buffer.concat([Buffer.from([v, (i + v) % 4]), Buffer.from(text, 'utf8')]);
      writeFileSync(join(out, `text-${i}-vocab-${v}`), bytes);
    }
  });
}

// chat_template_fuzz reads {template, messages, addGenerationPrompt, bosToken, eosToken}.
function chatTemplateSeeds(out) {
  const templates = { fallback: FALLBACK_CHAT_TEMPLATE };
  for (const name of ['qwen2', 'qwen35', 'command-r', 'gemma-4']) {
    const template = readGgufKvs(vocab(name)).find((kv) => kv.key === 'tokenizer.chat_template')?.value;
    if (!template) throw new Error(`${vocab(name)} has no chat template`);
    templates[name] = template;
  }
  const conversations = [
    [{ role: 'user', content: 'Hello!' }],
    [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Tell me a story.' },
      { role: 'assistant', content: 'Once upon a time.' }, { role: 'user', content: 'More.' }],
    [{ role: 'user', content: '{{ 7 * 7 }} {% if %} <|im_end|> \u00e9\u4e16\ud83d\ude00' }, { role: 'tool', content: '' }],
  ];
  for (const [name, template] of Object.entries(templates)) {
    conversations.forEach((messages, i) => {
      const seed = { template, messages, addGenerationPrompt: i !== 1, bosToken: '<s>', eosToken: '</s>' };
      writeFileSync(join(out, `${name}-${i}.json`), JSON.stringify(seed));
    });
  }
}

const builders = { loader: loaderSeeds, tokenizer: tokenizerSeeds, chat_template: chatTemplateSeeds };

const [target, out, cli] = process.argv.slice(2);
if (!builders[target] || !out) {
  console.error(`usage: node tests/fuzz/seed-corpus.mjs ${Object.keys(builders).join('|')} OUT_DIR [CLI]`);
  process.exit(2);
}
mkdirSync(out, { recursive: true });
builders[target](out, cli);
