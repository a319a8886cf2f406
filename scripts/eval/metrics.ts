/**
 * The measures of `npm run eval:search -- --collection`: nDCG@10 (gain = the judgment's grade),
 * Recall@100 and MRR@10, each averaged over the judged questions only (those with at least one
 * judgment); ids compared as strings.
 */

/** Judgments: question id → (document id → grade); unlisted pairs are not relevant. */
export type Judgments = Map<string, Map<string, number>>;
/** A ranking of every question: question id → document ids, best first. */
export type Run = Map<string, string[]>;

export interface Metrics {
  ndcg10: number;
  recall100: number;
  mrr10: number;
}

/** nDCG@10, Recall@100 and MRR@10 of `run`, averaged over the judged questions (a question the run lacks scores 0). */
export function metrics(run: Run, judgments: Judgments): Metrics {
  let ndcg = 0;
  let recall = 0;
  let mrr = 0;
  for (const [q, relevant] of judgments) {
    const ranked = run.get(q) ?? [];
    const dcg = ranked.slice(0, 10).reduce((sum, doc, i) => sum + (relevant.get(doc) ?? 0) / Math.log2(i + 2), 0);
    const ideal = [...relevant.values()]
      .sort((a, b) => b - a)
      .slice(0, 10)
      .reduce((sum, grade, i) => sum + grade / Math.log2(i + 2), 0);
    ndcg += ideal ? dcg / ideal : 0;
    recall += ranked.slice(0, 100).filter((doc) => relevant.has(doc)).length / relevant.size;
    const first = ranked.slice(0, 10).findIndex((doc) => relevant.has(doc));
    mrr += first < 0 ? 0 : 1 / (first + 1);
  }
  const n = judgments.size || 1;
  return { ndcg10: ndcg / n, recall100: recall / n, mrr10: mrr / n };
}
