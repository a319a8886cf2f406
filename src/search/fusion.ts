/**
 * Hybrid ranking: full text's BM25F ranking and the embeddings' ranking fused into one. Each
 * ranking is taken to a fixed depth (HYBRID_FULL_TEXT_DEPTH, SEMANTIC_DEPTH) whatever page is
 * asked, so the fused ranking is one ranking and a page is a slice of it: no repeats, no skips,
 * the same first ten for any page size.
 *
 * The embeddings rank by the question's vector moved towards the vectors of full text's first
 * FEEDBACK_ITEMS hits (pseudo-relevance feedback, Rocchio's step: the question plus FEEDBACK_WEIGHT
 * times the mean of their mean passage vectors): a question's few words are a weak signal for the
 * sentence encoder, the pages full text ranks first a strong one. Then each ranking's scores are scaled to 0–1 over
 * its own depth (min–max) and an item scores (1 − SEMANTIC_SHARE) × its full-text share +
 * SEMANTIC_SHARE × its semantic share, 0 for a ranking that lacks it. Chosen by the six judged
 * collections of `npm run eval:search` (docs/search-quality.md).
 */
import type { RankedHit } from './termIndex.js';
import type { Neighbour } from './vectors.js';
import type { ItemType } from '../store/embeddings.js';

export const SEMANTIC_SHARE = 0.3;
export const FEEDBACK_ITEMS = 3;
/** How far the question's vector moves towards the feedback (Rocchio's β, the question's own weight being 1). */
export const FEEDBACK_WEIGHT = 0.8;
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

/** A ranking's scores scaled to 0–1 over the ranking (every item 1 when all score alike). */
function scaled(scores: number[]): (score: number) => number {
  const max = scores[0] ?? 0;
  const min = scores[scores.length - 1] ?? 0;
  return (score) => (max > min ? (score - min) / (max - min) : 1);
}

/** Fuses full text's ranking and the embeddings' (both best first) into one, best first; ties keep full text's order, then the embeddings'. */
export function fuse(fullText: Pick<RankedHit, 'type' | 'id' | 'score'>[], semantic: Neighbour[]): Candidate[] {
  const fused = new Map<string, { c: Candidate; first: number }>();
  const entry = (itemType: ItemType, itemId: number, first: number) => {
    const key = `${itemType}:${itemId}`;
    let e = fused.get(key);
    if (!e) fused.set(key, (e = { c: { itemType, itemId, score: 0 }, first }));
    return e.c;
  };
  const fullTextShare = scaled(fullText.map((h) => h.score));
  fullText.forEach((hit, i) => {
    const c = entry(hit.type, hit.id, i);
    c.fullTextRank = i + 1;
    c.score += (1 - SEMANTIC_SHARE) * fullTextShare(hit.score);
  });
  const semanticShare = scaled(semantic.map((n) => n.score));
  semantic.forEach((n, i) => {
    const c = entry(n.itemType, n.itemId, fullText.length + i);
    c.semanticRank = i + 1;
    c.similarity = n.score;
    c.passage = n.passage;
    c.score += SEMANTIC_SHARE * semanticShare(n.score);
  });
  return [...fused.values()].sort((a, b) => b.c.score - a.c.score || a.first - b.first).map(({ c }, i) => ({ ...c, fusedRank: i + 1 }));
}

/**
 * The question's vector (as a unit vector) plus FEEDBACK_WEIGHT times the mean of `feedback` (full
 * text's first hits' mean passage vectors), as a unit vector.
 */
export function withFeedback(question: number[], feedback: Float32Array[]): number[] {
  if (!feedback.length) return question;
  const length = Math.hypot(...question) || 1;
  const moved = question.map(
    (x, i) => x / length + (FEEDBACK_WEIGHT * feedback.reduce((sum, v) => sum + (v[i] ?? 0), 0)) / feedback.length,
  );
  const norm = Math.hypot(...moved) || 1;
  return moved.map((x) => x / norm);
}
