/**
 * Weighted reciprocal rank fusion: an item at rank r (from 1) of a ranking adds weight / (RRF_K + r).
 * Hybrid search fuses three rankings of the same items: full text as asked (every word), the
 * embeddings' (see BEST_PASSAGES), and an any-word ranking (a question in plain words rarely has
 * all of them in the page that answers it): for articles and changelog entries, those whose title
 * or headings hold any of the words (see anyWordHits), for memory notes every note with any of
 * them, ranked by full text of any of the words. The weights and k were chosen by `npm run
 * eval:search` on the tuning two thirds of its questions (PostgreSQL manual, local embedder), over
 * semantic and any-word weights 0–2 and k from 1 to 60: held out, full text alone has recall@5
 * 0.654 and MRR 0.568; the best fusion of it with the embeddings alone, 0.692 / 0.561; these
 * weights, with the any-word ranking, 0.769 / 0.635.
 */
export const RRF_K = 3;
export const FULL_TEXT_WEIGHT = 1;
export const SEMANTIC_WEIGHT = 0.25;
export const ANY_WORD_WEIGHT = 1.5;
/** How far down each ranking hybrid search looks beyond the page it answers. */
export const HYBRID_DEPTH = 50;

/** An item of a fused ranking and its score. */
export interface Fused<T> {
  item: T;
  score: number;
}

/** A ranking to fuse (best first) and its weight. */
export interface WeightedRanking<T> {
  items: T[];
  weight: number;
}

/**
 * Fuses rankings of the same kind of items (`key` identifies an item): each scores, over the
 * rankings that have it, weight / (RRF_K + its rank there). Best first; ties keep the order of the
 * first ranking that has the item, then the next.
 */
export function fuseRankings<T>(rankings: WeightedRanking<T>[], key: (item: T) => string): Fused<T>[] {
  const fused = new Map<string, Fused<T> & { first: number }>();
  let offsetOrder = 0;
  for (const { items, weight } of rankings) {
    items.forEach((item, rank) => {
      const k = key(item);
      const entry = fused.get(k) ?? { item, score: 0, first: offsetOrder + rank };
      entry.score += weight / (RRF_K + rank + 1);
      fused.set(k, entry);
    });
    offsetOrder += items.length;
  }
  return [...fused.values()].sort((a, b) => b.score - a.score || a.first - b.first).map(({ item, score }) => ({ item, score }));
}

/** The hybrid rankings with their weights: full text, embeddings, any word. */
export function hybridRankings<T>(fullText: T[], semantic: T[], anyWord: T[]): WeightedRanking<T>[] {
  return [
    { items: fullText, weight: FULL_TEXT_WEIGHT },
    { items: semantic, weight: SEMANTIC_WEIGHT },
    { items: anyWord, weight: ANY_WORD_WEIGHT },
  ];
}
