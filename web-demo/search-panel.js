// The semantic-search panel: the sentences (one per line) and the query are
// embedded with the loaded model (llm.embed, all sentences in one call), and
// the sentences listed by cosine similarity to the query, with the time it
// took. A reranker (llm.info.reranker) scores each sentence against the
// query instead (llm.rank). The sentences' embeddings are kept while neither
// they nor the model change, so a new query embeds only itself.
export class SearchPanel {
  constructor({ sentences, query, status, results }) {
    Object.assign(this, { sentences, query, status, results });
    this.kept = null;  // {llm, text, vectors}: the sentences' embeddings
  }

  // Runs a search with `llm`; rejects with the engine's error (AbortError on `signal`).
  async search(llm, signal) {
    const lines = this.sentences.value.split('\n').map((s) => s.trim()).filter(Boolean);
    const query = this.query.value.trim();
    if (lines.length === 0 || !query) {
      this.status.textContent = 'Type a few sentences and a query.';
      return;
    }
    this.status.textContent = llm.info.reranker ? 'Ranking…' : 'Embedding…';
    const started = performance.now();
    let scores;
    let what;
    if (llm.info.reranker) {
      scores = await llm.rank(query, lines, { signal });
      what = `Ranked ${lines.length} sentences with the reranker`;
    } else {
      const text = lines.join('\n');
      const fresh = this.kept?.llm !== llm || this.kept.text !== text;
      if (fresh) this.kept = { llm, text, vectors: await llm.embed(lines, { signal }) };
      const q = await llm.embed(query, { signal });
      scores = this.kept.vectors.map((v) => dot(v, q));  // unit vectors: the dot is the cosine
      what = fresh ? `Embedded ${lines.length} sentences and the query` : 'Embedded the query';
    }
    const ms = performance.now() - started;
    this.status.textContent = `${what} in ${ms < 1000 ? `${ms.toFixed(0)} ms` : `${(ms / 1000).toFixed(2)} s`}.`;
    this.#show(lines.map((sentence, i) => ({ sentence, score: scores[i] })).sort((a, b) => b.score - a.score));
  }

  #show(ranked) {
    this.results.replaceChildren(...ranked.map(({ sentence, score }) => {
      const item = document.createElement('li');
      const value = document.createElement('span');
      value.className = 'score';
      value.textContent = score.toFixed(3);
      item.append(value, ` ${sentence}`);
      return item;
    }));
  }
}

function dot(a, b) {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i] * b[i];
  return sum;
}
