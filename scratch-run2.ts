import { readFileSync } from 'node:fs';
import { TermIndex } from './src/search/termIndex.ts';
import { readTsvector, FIELD_OF_WEIGHT } from './src/search/tsvectorText.ts';
import { metrics } from '/tmp/exp/bm25.mjs';
const X: Record<string, number> = { adi: .4489, med: .6721, cacm: .4316, time: .6999, lisa: .4310, npl: .3789 };
const configs = JSON.parse(process.argv[2]);
for (const cfg of configs) {
  const row: string[] = []; let minr = 9;
  for (const coll of ['adi', 'med', 'cacm', 'time', 'lisa', 'npl']) {
    const { docs, queries } = JSON.parse(readFileSync(`/tmp/exp/${coll}.vec.json`, 'utf8'));
    const qrels: any = {}; for (const l of readFileSync(`/work/shared/ir/${coll}/qrels.tsv`, 'utf8').trim().split('\n')) { const [q, d, g] = l.split('\t'); (qrels[q] ??= {})[d] = Number(g); }
    const ix = new TermIndex();
    docs.forEach((d: any, i: number) => ix.put({ type: 'article', id: Number(d.id), xid: 1n, section: null, restricted: false, terms: readTsvector(d.v, FIELD_OF_WEIGHT.article) }));
    const run: any = {};
    const t0 = performance.now();
    for (const q of queries) {
      const t = readTsvector(q.v, FIELD_OF_WEIGHT.note);
      const terms = t.lexemes.map((l, i) => { const p = t.tfs[i]; const n = (p >> 12) + ((p >> 8) & 15) + (p & 255); return { lexeme: l, weight: cfg.qtf === "raw" ? n : cfg.k3 ? n * (cfg.k3 + 1) / (n + cfg.k3) : 1 }; });
      const r = ix.rank({ terms, seesRestricted: true, only: null, except: new Set(), without: [], depth: 100, maxPostings: 2e6 }, { k1: cfg.k1 ?? 1.2, b: cfg.b ?? 0.75, weights: [cfg.wA ?? 1, 1, 1] });
      run[q.id] = r.hits.map((h) => String(h.id));
    }
    const [n] = metrics(run, queries, qrels); minr = Math.min(minr, n / X[coll]);
    row.push(`${coll} ${n.toFixed(4)} (${(n / X[coll]).toFixed(3)}x)`);
  }
  console.log(JSON.stringify(cfg), 'min', minr.toFixed(3), row.join('  '));
}
