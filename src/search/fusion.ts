/**
 * Weighted reciprocal rank fusion: an item at rank r (from 1) of a ranking adds weight / (RRF_K + r).
 * Chosen by `npm run eval:search` on the tuning two thirds of its questions (PostgreSQL manual,
 * local embedder): among weightings that fuse at all, semantic 0.25 with k = 5 kept full text's
 * recall@5 and lost the least MRR; equal weights with k = 60 lost 0.07 of recall@5.
 */
export const RRF_K = 5;
export const SEMANTIC_WEIGHT = 0.25;
/** How far down each ranking hybrid search looks beyond the page it answers. */
export const HYBRID_DEPTH = 50;

/** An item of a fused ranking and its score. */
export interface Fused<T> {
  item: T;
  score: number;
}

/**
 * Fuses a full-text and a semantic ranking of the same kind of items (`key` identifies an item):
 * each scores 1 / (RRF_K + its full-text rank) + SEMANTIC_WEIGHT / (RRF_K + its semantic rank), for
 * the rankings that have it. Best first; ties keep full-text order, then semantic order.
 */
export function fuseRankings<T>(fullText: T[], semantic: T[], key: (item: T) => string): Fused<T>[] {
  const fused = new Map<string, Fused<T> & { first: number }>();
  const add = (items: T[], weight: number, offsetOrder: number) =>
    items.forEach((item, rank) => {
      const k = key(item);
      const entry = fused.get(k) ?? { item, score: 0, first: offsetOrder + rank };
      entry.score += weight / (RRF_K + rank + 1);
      fused.set(k, entry);
    });
  add(fullText, 1, 0);
  add(semantic, SEMANTIC_WEIGHT, fullText.length);
  return [...fused.values()].sort((a, b) => b.score - a.score || a.first - b.first).map(({ item, score }) => ({ item, score }));
}
