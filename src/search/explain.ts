/**
 * What made a hit rank where it does (`explain=true`), and whether a search answered its question
 * (the content-gap rule: docs/behaviour.md, search).
 */
import type { SearchExplain } from '../types/search.js';
import type { FullTextResult } from './fullText.js';
import { BM25F } from './fullText.js';
import type { Candidate } from './fusion.js';

/** Below this share of a question's weight (by idf) held by its best full-text hit, full text did not answer it. */
export const COVERAGE_FLOOR = 0.5;
/** How many of the full-text ranking's first hits the rule looks at. */
const COVERAGE_HITS = 10;

/** A hit's explanation: its full-text score per field and term, its place among the embeddings' nearest, its fused rank. */
export function explainHit(candidate: Candidate, fullText: FullTextResult | null): SearchExplain {
  let fullTextPart: SearchExplain['fullText'] = null;
  const rank = fullText?.ranking.hits.findIndex((h) => h.type === candidate.itemType && h.id === candidate.itemId) ?? -1;
  if (fullText && rank >= 0) {
    const parts = fullText.index.explain(
      fullText.ranking.hits[rank].type,
      candidate.itemId,
      fullText.ranking,
      BM25F,
      fullText.seesRestricted,
    );
    const sum = (f: 0 | 1 | 2) => round(parts.reduce((s, p) => s + p.fields[f], 0));
    fullTextPart = {
      rank: rank + 1,
      score: round(fullText.ranking.hits[rank].score),
      title: sum(0),
      headings: sum(1),
      body: sum(2),
      terms: parts.map((p) => ({ term: p.lexeme, idf: p.idf, title: p.fields[0], headings: p.fields[1], body: p.fields[2] })),
    };
  }
  return {
    fullText: fullTextPart,
    semantic: candidate.semanticRank ? { rank: candidate.semanticRank, similarity: round(candidate.similarity ?? 0) } : null,
    fusedRank: candidate.fusedRank ?? null,
  };
}

/**
 * Whether a first page left its question unanswered: full text ranked it and none of its first
 * COVERAGE_HITS hits holds COVERAGE_FLOOR of the question's weight (each word weighed by its idf,
 * a word the workspace lacks weighing most), or it was ranked by meaning alone and found nothing.
 * The embeddings are not asked for a second opinion: a question about something the workspace
 * lacks is still close to pages that share its common words (docs/behaviour.md, search).
 */
export function unanswered(fullText: FullTextResult | null, page: Candidate[]): boolean {
  if (!fullText) return page.length === 0;
  const best = fullText.ranking.hits.slice(0, COVERAGE_HITS).reduce((max, h) => Math.max(max, h.coverage), 0);
  return best < COVERAGE_FLOOR;
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;
