/**
 * Hybrid ranking: full text's BM25F ranking and the embeddings' ranking fused into one. Each
 * ranking is taken to a fixed depth (HYBRID_FULL_TEXT_DEPTH, SEMANTIC_DEPTH) whatever page is
 * asked, so the fused ranking is one ranking and a page is a slice of it: no repeats, no skips,
 * the same first ten for any page size.
 *
 * An item scores FULL_TEXT_WEIGHT / (RRF_K + its full-text rank) + SEMANTIC_WEIGHT / (RRF_K + its
 * semantic rank), over the rankings that hold it (weighted reciprocal rank fusion). Chosen by
 * `npm run eval:search` on the six judged collections (docs/search-quality.md).
 */
import type { RankedHit } from './termIndex.js';
import type { Neighbour } from './vectors.js';
import type { ItemType } from '../store/embeddings.js';

export const RRF_K = 60;
export const FULL_TEXT_WEIGHT = 1;
export const SEMANTIC_WEIGHT = 0.5;
/** How deep hybrid search reads the full-text ranking, and how many nearest items semantic and hybrid search rank. */
export const HYBRID_FULL_TEXT_DEPTH = 1000;
export const SEMANTIC_DEPTH = 200;

/** An item of a ranking, with what ranked it (for `explain`). */
export interface Candidate {
  itemType: ItemType;
  itemId: number;
  /** The score the hit shows: BM25F for full text, similarity for semantic, the fused score for hybrid. */
  score: number;
  fullTextRank?: number;
  semanticRank?: number;
  /** The mean similarity of the item's best passages (what semantic ranking orders by). */
  similarity?: number;
  /** The passage that matched best (its text is the hit's snippet). */
  passage?: number | null;
  fusedRank?: number;
}

/** Fuses full text's ranking and the embeddings' (both best first) into one, best first; ties keep full text's order, then the embeddings'. */
export function fuse(fullText: Pick<RankedHit, 'type' | 'id'>[], semantic: Neighbour[]): Candidate[] {
  const fused = new Map<string, Candidate & { first: number }>();
  const entry = (itemType: ItemType, itemId: number, first: number) => {
    const key = `${itemType}:${itemId}`;
    let c = fused.get(key);
    if (!c) fused.set(key, (c = { itemType, itemId, score: 0, first }));
    return c;
  };
  fullText.forEach((hit, i) => {
    const c = entry(hit.type, hit.id, i);
    c.fullTextRank = i + 1;
    c.score += FULL_TEXT_WEIGHT / (RRF_K + i + 1);
  });
  semantic.forEach((n, i) => {
    const c = entry(n.itemType, n.itemId, fullText.length + i);
    c.semanticRank = i + 1;
    c.similarity = n.score;
    c.passage = n.passage;
    c.score += SEMANTIC_WEIGHT / (RRF_K + i + 1);
  });
  return [...fused.values()]
    .sort((a, b) => b.score - a.score || a.first - b.first)
    .map(({ first: _first, ...c }, i) => ({ ...c, fusedRank: i + 1 }));
}
