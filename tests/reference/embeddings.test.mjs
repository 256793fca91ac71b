// Embeddings and reranking scores against llama.cpp (node-llama-cpp's
// LlamaEmbeddingContext and LlamaRankingContext), on the same token ids: each
// row of embeddings.mjs in f32, f16 and q8_0 (npm test: one type a row, the
// types taking turns; npm run test:full: all three). Required: cosine similarity
// >= 0.9999 in f32 and f16, >= 0.999 in q8_0, for every text; relevance
// scores within 1e-3 (f32, f16) or 1e-2 (q8_0). Also: our default output is
// L2-normalised, and the CLI's rank agrees with its embed --pooling rank.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cosine, embeddingModel, embeddingModels, query, rerankers, texts } from './embeddings.mjs';
import { llama, modelCache, quickSubset, runCli } from './reference.mjs';

const types = [
  { type: 'f32', minCosine: 0.9999, maxScoreError: 1e-3 },
  { type: 'f16', minCosine: 0.9999, maxScoreError: 1e-3 },
  { type: 'q8_0', minCosine: 0.999, maxScoreError: 1e-2 },
];
const figures = [];
const rankFigures = [];

afterAll(() => {
  if (figures.length > 0) console.log(['| model | type | min cosine | mean cosine |', '|---|---|---|---|', ...figures].join('\n'));
  if (rankFigures.length > 0) {
    console.log(['| reranker | type | max score difference |', '|---|---|---|', ...rankFigures].join('\n'));
  }
});

// llama.cpp's scores of `texts` against `query`. With a rerank template
// (Qwen3-Reranker), each input is the template's text with the query and the
// document in it, tokenized with its special tokens, as llama.cpp's server
// and our engine make it; node-llama-cpp's rankAll() formats it otherwise
// (it puts an end token first), so the inputs go to the evaluation it runs.
async function referenceScores(model, context, modelPath) {
  const template = model.fileInfo.metadata.tokenizer?.['chat_template.rerank'];
  if (template === undefined) {
    const documents = await Promise.all(texts.map((t) => ourTokens(modelPath, t, true)));
    return context.rankAll(await ourTokens(modelPath, query, true), documents);
  }
  const scores = [];
  for (const document of texts) {
    const text = template.replace('{query}', query).replace('{document}', document);
    scores.push(await context._evaluateRankingForInput(await ourTokens(modelPath, text, true, true)));
  }
  return scores;
}

function textsFile(label, lines) {
  const path = join(modelCache, `${label}.texts.txt`);
  writeFileSync(path, lines.join('\n'));
  return path;
}

// Our token ids of `text`, as the engine tokenizes it for embed (with the
// vocabulary's special tokens) or, `plain`, without them; `special`: control
// tokens' text parsed as the tokens.
async function ourTokens(modelPath, text, plain = false, special = false) {
  const { stdout } = await runCli(['tokenize', '-m', modelPath, ...(plain ? ['--no-bos'] : []),
    ...(special ? ['--special'] : []), text]);
  return JSON.parse(stdout);
}

async function ourEmbeddings(modelPath, label) {
  const { stdout } = await runCli(['embed', '-m', modelPath, '--threads', '2', '--file', textsFile(label, texts)]);
  return JSON.parse(stdout).embeddings;
}

async function referenceEmbeddings(modelPath) {
  const model = await (await llama()).loadModel({ modelPath });
  const context = await model.createEmbeddingContext({ contextSize: 512, batchSize: 512, threads: 1 });
  try {
    const out = [];
    for (const text of texts) out.push((await context.getEmbeddingFor(await ourTokens(modelPath, text))).vector);
    return out;
  } finally {
    await context.dispose();
    await model.dispose();
  }
}

describe('embeddings match llama.cpp', () => {
  for (const [index, row] of embeddingModels.entries()) {
    for (const { type, minCosine } of quickSubset(types, (i) => i === index % types.length)) {
      it(`${row.label} ${type}`, async () => {
        const modelPath = await embeddingModel(row, type);
        const ours = await ourEmbeddings(modelPath, `${row.label}-${type}`);
        const reference = await referenceEmbeddings(modelPath);
        expect(ours.length).toBe(texts.length);
        const cosines = ours.map((v, i) => cosine(v, reference[i]));
        figures.push(`| ${row.label} | ${type} | ${Math.min(...cosines).toFixed(7)} | ` +
          `${(cosines.reduce((a, b) => a + b, 0) / cosines.length).toFixed(7)} |`);
        for (const c of cosines) expect(c).toBeGreaterThanOrEqual(minCosine);
        // L2-normalised by default.
        for (const v of ours) expect(Math.hypot(...v)).toBeCloseTo(1, 5);
      }, 600_000);
    }
  }
});

describe('reranking scores match llama.cpp', () => {
  for (const [index, row] of rerankers.entries()) {
    for (const { type, maxScoreError } of quickSubset(types, (i) => i === (index + 1) % types.length)) {
      it(`${row.label} ${type}`, async () => {
        const modelPath = await embeddingModel(row, type);
        const { stdout } = await runCli(['embed', '-m', modelPath, '--threads', '2', '--rank', query, '--file',
          textsFile(`${row.label}-${type}-docs`, texts)]);
        const ours = JSON.parse(stdout).scores;
        const model = await (await llama()).loadModel({ modelPath });
        const context = await model.createRankingContext({ contextSize: 512, batchSize: 512, threads: 1 });
        try {
          const reference = await referenceScores(model, context, modelPath);
          expect(ours.length).toBe(texts.length);
          const differences = ours.map((score, i) => Math.abs(score - reference[i]));
          rankFigures.push(`| ${row.label} | ${type} | ${Math.max(...differences).toExponential(2)} |`);
          for (const d of differences) expect(d).toBeLessThan(maxScoreError);
          // The scores differ between documents (the test would pass on a constant otherwise).
          expect(Math.max(...ours) - Math.min(...ours)).toBeGreaterThan(0.05);
        } finally {
          await context.dispose();
          await model.dispose();
        }
      }, 600_000);
    }
  }
});
