// Builds the seed corpus of one fuzz target from ../shared/models, into a
// folder (tools/fuzz.sh: build/fuzz-corpus/<target>/seeds). Model files are
// made here at run time by the sanitized CLI's `synth`; none is committed.
//   node tests/fuzz/seed-corpus.mjs TARGET OUT_DIR CLI
// A new fuzz target adds its entry to `builders`.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FALLBACK_CHAT_TEMPLATE } from '../../js/chat.js';
import { normalizeTools } from '../../js/tool-calls.js';
import { ToolGrammar } from '../../js/tool-formats/grammar.js';
import { TOOL_FORMATS, generic } from '../../js/tool-formats/index.js';
import { GRAMMARS, SCHEMAS } from '../js/constrained-cases.mjs';
import { TOOLS } from '../js/tool-cases.mjs';
import { readGguf, writeGguf } from './gguf-kv.mjs';
import { repoRoot, sharedModels } from '../reference/reference.mjs';

const stories = join(sharedModels, 'stories260K.gguf');
const vocab = (name) => join(sharedModels, 'vocab', `ggml-vocab-${name}.gguf`);

// Small models of every weight type and architecture, on stories260K's
// 512-token vocabulary so each stays under 1 MB. Rows of 64 for the
// 32-element block types, 256 for the K-quants (their block), a tiny
// training context.
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
  // The other architectures (tests/reference/architectures.mjs), small.
  ['f32', '64x1:2/1:128', 'qwen3', ['--head-dim', '64']],
  ['q8_0', '64x1:2/1:128', 'smollm3'],
  ['f16', '64x2:2/1:128', 'gemma2', ['--head-dim', '64', '--sliding-window', '4']],
  ['q8_0', '64x2:2/1:128', 'gemma3', ['--sliding-window', '4']],
  // Encoders (embeddings only), one a reranker, and a decoder that embeds.
  ['q8_0', '64x1:4/4:128', 'bert', ['--head-dim', '16']],
  ['f16', '64x1:4/2:128', 'nomic-bert', ['--head-dim', '16']],
  ['q8_0', '64x2:4/4:128', 'jina-bert-v2', ['--head-dim', '16', '--reranker']],
  ['f32', '64x1:2/1:128', 'qwen3', ['--head-dim', '64', '--pooling', 'mean']],
  ['q8_0', '64x1:2/1:128', 'phi3', ['--sliding-window', '4']],
  ['q4_0', '64x1:2/1:128', 'granite'],
];

// The first n tokens of a byte-level BPE vocabulary (its 256 byte tokens
// come first) with the merges among them, the last one renamed to the
// vocabulary's EOS text and made the BOS/EOS/... of the cut: a real
// tokenizer whose construction costs little, so the fuzzer runs many.
function smallBpeVocab(source, n, out) {
  const kvs = readGguf(source).kvs.filter((kv) => kv.key.startsWith('tokenizer.') && kv.key !== 'tokenizer.chat_template');
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
  writeGguf(out, kvs);
}

// The optional metadata the loader reads, each set to a valid value on a
// model that has none, so the fuzzer mutates values it could not insert
// (a key needs its length prefix and the key count to change with it).
const optionalKeys = [
  { 'llama.attention.key_length': [4, 32], 'llama.attention.value_length': [4, 32] },
  { 'llama.rope.scaling.type': [8, 'linear'], 'llama.rope.scaling.factor': [6, 2.0] },
  { 'llama.rope.scale_linear': [6, 4.0], 'llama.attention.layer_norm_rms_epsilon': [6, 1e-6] },
  { 'llama.rope.scaling.type': [8, 'longrope'], 'llama.rope.scaling.attn_factor': [6, 1.19],
    'llama.rope.scaling.original_context_length': [4, 16] },
  { 'tokenizer.ggml.add_space_prefix': [7, false], 'tokenizer.ggml.add_bos_token': [7, false],
    'tokenizer.ggml.add_eos_token': [7, true], 'tokenizer.ggml.eot_token_id': [4, 2],
    'tokenizer.ggml.eom_token_id': [4, 2], 'tokenizer.ggml.padding_token_id': [4, 0] },
];

function withKeys(source, keys, out) {
  const { kvs, tensors } = readGguf(source);
  for (const [key, [type, value]] of Object.entries(keys)) {
    const kv = kvs.find((k) => k.key === key);
    if (kv) Object.assign(kv, { type, value });
    else kvs.push({ key, type, value });
  }
  writeGguf(out, kvs, tensors);
}

function loaderSeeds(out, cli) {
  const synth = (type, shape, arch, vocabFile, file, extra = []) =>
    execFileSync(cli, ['synth', '--shape', shape, '--type', type, '--arch', arch, '--ctx', '64', ...extra,
      '--vocab', vocabFile, '-o', join(out, file)], { stdio: ['ignore', 'ignore', 'pipe'] });
  copyFileSync(stories, join(out, 'stories260K.gguf'));
  synthModels.forEach(([type, shape, arch, extra], i) => {
    synth(type, shape, arch, stories, `synth-${i}-${type}-${arch}.gguf`, extra);
  });
  optionalKeys.forEach((keys, i) => withKeys(join(out, 'synth-0-f32-llama.gguf'), keys, join(out, `keys-${i}-f32-llama.gguf`)));
  llama2cSeeds(out);
  splitSeeds(out, cli);
  // Byte-level BPE: vocabulary-only files and models on them.
  for (const name of ['gpt-2', 'qwen2']) {
    const small = join(out, `vocab-${name}-1024.gguf`);
    smallBpeVocab(vocab(name), 1024, small);
    synth('q8_0', '64x1:2/1:128', name === 'qwen2' ? 'qwen2' : 'llama', small, `synth-q8_0-${name}-1024.gguf`);
  }
}

// A loader_fuzz input of several files: "WLLMFILE", then each file's u32
// length and bytes.
function bundle(files) {
  const parts = [Buffer.from('WLLMFILE')];
  for (const file of files) {
    const length = Buffer.alloc(4);
    length.writeUInt32LE(file.length);
    parts.push(length, file);
  }
  return Buffer.concat(parts);
}

// stories260K as a llama2.c checkpoint with its tokenizer; with a classifier
// of its own; and broken: a checkpoint one float short, a tokenizer one byte
// short, a header whose heads do not divide its width.
function llama2cSeeds(out) {
  const bin = readFileSync(join(sharedModels, 'llama2c', 'stories260K.bin'));
  const tok = readFileSync(join(sharedModels, 'llama2c', 'tok512.bin'));
  const ownClassifier = Buffer.concat([bin, bin.subarray(28, 28 + 512 * 64 * 4)]);
  ownClassifier.writeInt32LE(-512, 20);
  const lyingHeads = Buffer.from(bin);
  lyingHeads.writeInt32LE(7, 12);
  const seeds = {
    'llama2c-stories260K': [bin, tok],
    'llama2c-own-classifier': [ownClassifier, tok],
    'llama2c-truncated': [bin.subarray(0, bin.length - 4), tok],
    'llama2c-short-tokenizer': [bin, tok.subarray(0, tok.length - 1)],
    'llama2c-lying-heads': [lyingHeads, tok],
  };
  for (const [name, files] of Object.entries(seeds)) writeFileSync(join(out, `${name}.bundle`), bundle(files));
}

// A small model split in 3 by the CLI (`split`), and its files lying: one
// claiming 4 files, one claiming another tensor count.
function splitSeeds(out, cli) {
  const dir = mkdtempSync(join(tmpdir(), 'split-seeds-'));
  try {
    const names = execFileSync(cli, ['split', '--split-max-tensors', '5', join(out, 'synth-0-f32-llama.gguf'),
      join(dir, 'synth')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim().split('\n');
    if (names.length !== 3) throw new Error(`split wrote ${names.length} files, not 3`);
    const files = names.map((name) => readFileSync(name));
    writeFileSync(join(out, 'split-3.bundle'), bundle(files));
    const lying = (i, keys) => {
      withKeys(names[i], keys, join(dir, 'lying.gguf'));
      return files.map((file, j) => (j === i ? readFileSync(join(dir, 'lying.gguf')) : file));
    };
    writeFileSync(join(out, 'split-lying-count.bundle'), bundle(lying(1, { 'split.count': [2, 4] })));
    writeFileSync(join(out, 'split-lying-tensors.bundle'), bundle(lying(2, { 'split.tensors.count': [5, 99] })));
  } finally {
    rmSync(dir, { recursive: true, force: true });
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

// state_fuzz restores states into the models in ../models (beside the seeds,
// so they are no inputs; byte 0 picks one in name order), read from
// $WLLM_STATE_FUZZ_MODELS: stories260K, and small models with a sliding-
// window ring and a convolution state. Its seeds are their states (the
// sanitized CLI's --prompt-cache files) after prompts of several lengths,
// behind byte 0, byte 1 (piece size) and byte 2 (bit 0: fix the checksum).
function stateSeeds(out, cli) {
  const models = join(out, '..', 'models');
  mkdirSync(models, { recursive: true });
  copyFileSync(stories, join(models, '0-stories260K.gguf'));
  ['gemma3', 'lfm2'].forEach((arch, i) => {
    execFileSync(cli, ['synth', '--arch', arch, '--shape', '64x3:4/2:128', '--head-dim', '32', '--sliding-window', '4',
      '--type', 'q8_0', '--ctx', '128', '--vocab', stories, '-o', join(models, `${i + 1}-${arch}.gguf`)],
    { stdio: ['ignore', 'ignore', 'pipe'] });
  });
  const story = 'Once upon a time, there was a little girl named Lily. She loved to play in the park with her dog. ';
  readdirSync(models).sort().forEach((file, index) => {
    for (const [length, pieces, fix] of [[20, 0, 0], [150, 7, 1], [300, 200, 0]]) {
      const state = join(out, `state-${index}-${length}.bin`);
      execFileSync(cli, ['generate', '-m', join(models, file), '-p', story.repeat(4).slice(0, length), '-n', '0',
        '-c', '96', '--prompt-cache', state], { stdio: ['ignore', 'ignore', 'pipe'] });
      writeFileSync(state, Buffer.concat([Buffer.from([index, pieces, fix]), readFileSync(state)]));
    }
  });
}

// chat_template_fuzz reads {template, messages, addGenerationPrompt, bosToken, eosToken}.
function chatTemplateSeeds(out) {
  const templates = { fallback: FALLBACK_CHAT_TEMPLATE };
  for (const name of ['qwen2', 'qwen35', 'command-r', 'gemma-4']) {
    const template = readGguf(vocab(name)).kvs.find((kv) => kv.key === 'tokenizer.chat_template')?.value;
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

// grammar_fuzz reads byte 0 as the constraint's kind, byte 1 as flags (bit 0
// the vocabulary, bit 1 repair the output), then NUL-separated parts: the
// constraint's text, the output, and 'N' name=schema, 'T' trigger, 'S' start
// trigger, 'P' preserved token parts. Each seed is written with every flag.
const GRAMMAR_KINDS = { grammar: 0, json: 1, json_object: 2, json_schema: 3 };

function grammarInput(kind, flags, text, output, { schemas = [], triggers = [], startTriggers = [], preservedTokens = [] } = {}) {
  const parts = [text, output, ...schemas.map((s) => `N${s.name}=${s.schema}`), ...triggers.map((t) => `T${t}`),
    ...startTriggers.map((t) => `S${t}`), ...preservedTokens.map((t) => `P${t}`)];
  return Buffer.concat([Buffer.from([GRAMMAR_KINDS[kind], flags]), Buffer.from(parts.join('\0'), 'utf8')]);
}

// Grammars of tests/cpp/grammar_test.cpp and texts they accept.
const cppGrammars = [
  ['root ::= "ab" [c-eX]+ [^0-9]? "."{2} x{1,3} y{2,}\nx ::= "x"\ny ::= "y"\n', 'abeeZ..xxxyyyyy'],
  ['root ::= x* "a" "b"\nx ::= "a" | "ab"\n', 'ababab'],
  ['root ::= [ぁ-ゟ]+ "é" .\n', 'あいé😀'],
  ['root ::= .*\n', 'a\u00e9\ud83d\ude00'],
  ['root ::= "[" (x ("," x)*)? "]"\nx ::= [0-9]+ | root\n', '[[1,[22],3]]'],
  ['# a comment\r\nroot ::= item (\n    "," item  # inside a group\n  )* |\n  "none"\r\nitem ::= [a-z]+\n', 'abc,de'],
  ['root ::= (word " ")* word "。"\nword ::= [a-zA-Zß-ÿぁ-ゟ]+\n', 'Grüße から bonjour。'],
  ['root ::= "<|im_start|>" [a-z]+\n', '<|im_start|>hello'],
  ['root ::= "a" root | "b"\n', 'aaab'],
  // Refused: left recursion, (x?)*, an undefined rule, a reversed range.
  ['root ::= root "a" | "b"\n', 'ba'],
  ['root ::= ("a"?)*\n', 'aa'],
  ['root ::= item\n', 'x'],
  ['root ::= [z-a]\n', 'b'],
];

// A value valid against each schema of tests/js (constrained-cases.mjs, tool-cases.mjs).
const schemaExamples = {
  person: { name: 'Ann', age: 30, email: 'ann@mail.com' },
  colors: ['red', 'blue'],
  bounds: { x: 0.5, y: 0.25, n: 42 },
  shape: { kind: 'circle', r: 2.5 },
  tree: { value: 1, children: [{ value: 2 }, { value: 3, children: [] }] },
  strings: { code: 'ABC-123', tag: 'hi', note: null },
  extras: { id: 7, flag: true },
  flags: { ok: true, nothing: null, version: 2, level: 'low' },
  mixed: [1, 'ab', -3],
  get_weather: { city: 'Paris', unit: 'celsius', days: 3 },
  add: { a: -1.5, b: 2 },
  tag: { tags: ['red', 'green'], urgent: true },
  now: {},
};

function grammarSeeds(out) {
  const seeds = [];
  const add = (name, kind, text, output, extra) => {
    for (let flags = 0; flags < 4; flags += 1) seeds.push([`${name}-${flags}`, grammarInput(kind, flags, text, output, extra)]);
  };
  const examples = { arithmetic: '12+(3*45)/6.', list: '- apples\n- tea\n', record: 'Name: Zoë\nAge: 42\nMood: ça va.' };
  for (const [name, grammar] of Object.entries(GRAMMARS)) add(`gbnf-${name}`, 'grammar', grammar.gbnf, examples[name] ?? '');
  cppGrammars.forEach(([gbnf, text], i) => add(`gbnf-cpp-${i}`, 'grammar', gbnf, text));
  const json = '{"a": [1, "two", {"3": null}, false, -0.5e+2], "b": "\\u00e9\\n"}';
  add('json', 'json', '', json);
  add('json-object', 'json_object', '', json);
  add('json-lazy', 'json_object', '', `Sure: ${json}`, { triggers: ['{'] });
  add('json-start', 'json', '', ` \n${json}`, { startTriggers: ['{"a"'] });
  const toolSchemas = Object.fromEntries(normalizeTools(TOOLS).map((t) => [t.name, t.parameters]));
  for (const [name, schema] of Object.entries({ ...SCHEMAS, ...toolSchemas })) {
    add(`schema-${name}`, 'json_schema', JSON.stringify(schema), JSON.stringify(schemaExamples[name] ?? {}));
  }
  add('schema-refused', 'json_schema', '{"type": "number", "multipleOf": 2}', '4');
  // Control tokens preserved as their text (stories260K's and DeepSeek-Coder's), a lazy grammar's trigger.
  for (const [i, control] of ['<s>', '<\uff5cbegin\u2581of\u2581sentence\uff5c>'].entries()) {
    const gbnf = `root ::= ${JSON.stringify(control)} " " [a-z]+ "."\n`;
    add(`preserved-${i}`, 'grammar', gbnf, `Well, ${control} done.`, { triggers: [control], preservedTokens: [control] });
  }
  // Tool calls as chat() constrains them: each format, lazy (tool choice
  // 'auto') and not ('required'), with calls as the format writes them.
  const tools = normalizeTools(TOOLS);
  const calls = [{ name: 'get_weather', arguments: { city: 'Paris', days: 3 }, id: 'a1B2c3D4e' },
    { name: 'add', arguments: { a: 1, b: 2 }, id: 'f5G6h7I8j' }];
  const formats = [...TOOL_FORMATS, generic].map((f) => [f, '']);
  formats.push([TOOL_FORMATS.find((f) => f.name === 'mistral'), '[TOOL_CALLS][ARGS][CALL_ID]']);
  formats.forEach(([format, source], i) => {
    for (const lazy of [true, false]) {
      const g = new ToolGrammar();
      const root = format.grammar(g, tools, { parallel: format.parallel }, source);
      const c = g.constraint(root, { ...format, lazy });
      const written = format.write(format.parallel ? calls : calls.slice(0, 1), source);
      add(`tools-${format.name}-${i}-${lazy ? 'auto' : 'required'}`, 'grammar', c.text,
        lazy ? `Let me check. ${written}` : written, c);
    }
  });
  for (const [name, bytes] of seeds) writeFileSync(join(out, name), bytes);
}

const builders = {
  loader: loaderSeeds, tokenizer: tokenizerSeeds, chat_template: chatTemplateSeeds, state: stateSeeds, grammar: grammarSeeds,
};

const [target, out, cli] = process.argv.slice(2);
if (!builders[target] || !out) {
  console.error(`usage: node tests/fuzz/seed-corpus.mjs ${Object.keys(builders).join('|')} OUT_DIR [CLI]`);
  process.exit(2);
}
mkdirSync(out, { recursive: true });
builders[target](out, cli);
