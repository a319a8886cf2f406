/**
 * How alike two unanswered questions are, for content-gap grouping: by meaning and by words
 * together. The sentence encoder alone reads "How do I configure an SMTP relay?" and "Can
 * notifications go through our own mail server?" as far apart (its sentence vectors are dominated by
 * the questions' shapes: "How do I …?" questions on different topics are closer than two wordings
 * of one topic); its vectors of single words are better judges of words ("mail" and "smtp", "refund"
 * and "reimburse"). So a question is its sentence vector and its content words, and two questions
 * are alike by
 *
 *   SENTENCE_SHARE · cosine(sentences) + (1 − SENTENCE_SHARE) · alignment(words)
 *
 * where the alignment takes each word's best match in the other question (1 for the same stem,
 * else the cosine of the two words' vectors, 0 below WORD_FLOOR), weighs it by the word's idf among
 * the questions compared, and averages both directions. On the labelled questions of
 * test/fixtures/gaps (docs/search-quality.md) grouping by sentences alone gave a pairwise F1 of
 * 0.24, by this similarity 0.59 at best.
 */
import { DotMatrix } from './dots.js';

/** The sentence cosine's share of a similarity. */
export const SENTENCE_SHARE = 0.5;
/** Words of a question compared, at most (questionWords keeps 40). */
const MAX_WORDS_COMPARED = 64;
/** Up to this many distinct words, pairSimilarity takes words' cosines from SIMD rows (see dotRows). */
const DENSE_WORDS = 2048;
/** Two different words whose vectors are less similar than this do not match at all. */
export const WORD_FLOOR = 0.6;

/** A content word of a question (not a stop word) and its stem (PostgreSQL's English lexeme). */
export interface QuestionWord {
  word: string;
  stem: string;
}

/** A question as grouping compares it: its sentence vector (unit length) and its content words (one per stem). */
export interface QuestionPoint {
  vector: Float32Array;
  words: QuestionWord[];
}

/** What a comparison needs besides the two questions: each stem's weight (its idf), and how alike two words are (0 when unknown). */
export interface WordKnowledge {
  weight(stem: string): number;
  wordSimilarity(a: string, b: string): number;
}

/** The similarity of two questions, from about −0.5 to 1 (1 for the same question). */
export function questionSimilarity(a: QuestionPoint, b: QuestionPoint, known: WordKnowledge): number {
  return SENTENCE_SHARE * dot(a.vector, b.vector) + (1 - SENTENCE_SHARE) * alignment(a.words, b.words, known);
}

/** The words' alignment, 0–1: both directions' idf-weighted mean of each word's best match. */
export function alignment(a: QuestionWord[], b: QuestionWord[], known: WordKnowledge): number {
  if (!a.length || !b.length) return 0;
  return (oneWay(a, b, known) + oneWay(b, a, known)) / 2;
}

function oneWay(from: QuestionWord[], to: QuestionWord[], known: WordKnowledge): number {
  let matched = 0;
  let total = 0;
  for (const w of from) {
    const weight = known.weight(w.stem);
    let best = 0;
    for (const u of to) {
      if (u.stem === w.stem) {
        best = 1;
        break;
      }
      best = Math.max(best, known.wordSimilarity(w.word, u.word));
    }
    matched += weight * (best >= WORD_FLOOR ? best : 0);
    total += weight;
  }
  return total ? matched / total : 0;
}

/**
 * The similarity of each pair of `points` (questionSimilarity, each stem weighed by its idf among
 * them, words' unit vectors from `vector`), compiled for clustering, which compares every pair:
 * words and stems as numbers, each pair of words' cosine computed once.
 */
export function pairSimilarity(
  points: readonly QuestionPoint[],
  vector: (word: string) => Float32Array | undefined,
): (i: number, j: number) => number {
  const weight = idfAmong(points);
  const wordIds = new Map<string, number>();
  const stemIds = new Map<string, number>();
  const idOf = (ids: Map<string, number>, key: string) => {
    let id = ids.get(key);
    if (id === undefined) ids.set(key, (id = ids.size));
    return id;
  };
  const words = points.map((p) => Int32Array.from(p.words.slice(0, MAX_WORDS_COMPARED), (w) => idOf(wordIds, w.word)));
  const stems = points.map((p) => Int32Array.from(p.words.slice(0, MAX_WORDS_COMPARED), (w) => idOf(stemIds, w.stem)));
  const weights = points.map((p) => Float64Array.from(p.words.slice(0, MAX_WORDS_COMPARED), (w) => weight(w.stem)));
  const totals = weights.map((ws) => ws.reduce((s, w) => s + w, 0));
  const vectors = [...wordIds.keys()].map(vector);
  const n = wordIds.size;
  // Each pair of words' cosine: a word against all others in one SIMD pass while they are few
  // (2,048 words: 16 MiB of rows), else each pair once in a map.
  const dense = n <= DENSE_WORDS ? dotRows(vectors) : null;
  const memo = new Map<number, number>();
  const wordSimilarity = (a: number, b: number) => {
    if (dense) return dense(a, b);
    const key = a < b ? a * n + b : b * n + a;
    let s = memo.get(key);
    if (s === undefined) {
      const [va, vb] = [vectors[a], vectors[b]];
      memo.set(key, (s = va && vb ? dot(va, vb) : 0));
    }
    return s;
  };
  // Both directions at once: each word's best match in the other question, by rows and by columns of one pass.
  const rowBest = new Float64Array(MAX_WORDS_COMPARED);
  const columnBest = new Float64Array(MAX_WORDS_COMPARED);
  const alignmentOf = (i: number, j: number) => {
    const a = words[i];
    const b = words[j];
    if (!a.length || !b.length) return 0;
    rowBest.fill(0, 0, a.length);
    columnBest.fill(0, 0, b.length);
    for (let k = 0; k < a.length; k++) {
      for (let l = 0; l < b.length; l++) {
        const s = stems[i][k] === stems[j][l] ? 1 : wordSimilarity(a[k], b[l]);
        if (s > rowBest[k]) rowBest[k] = s;
        if (s > columnBest[l]) columnBest[l] = s;
      }
    }
    return (weighted(rowBest, weights[i], totals[i]) + weighted(columnBest, weights[j], totals[j])) / 2;
  };
  const sentences = dotRows(points.map((p) => p.vector));
  return (i, j) => SENTENCE_SHARE * sentences(i, j) + (1 - SENTENCE_SHARE) * alignmentOf(i, j);
}

/**
 * Dot products of `vectors` (unknown ones count as zero), a vector against all others in one SIMD
 * pass (search/dots.ts, within ~0.002 of the float32 ones) the first time one of its pairs is asked:
 * clustering asks for every pair, 80,000 at 400 questions, which one by one in JavaScript took
 * most of its time. Vectors of different lengths are compared one by one.
 */
function dotRows(vectors: readonly (Float32Array | undefined)[]): (i: number, j: number) => number {
  const dim = vectors.find((v) => v)?.length ?? 0;
  if (vectors.some((v) => v && v.length !== dim)) {
    return (i, j) => {
      const [a, b] = [vectors[i], vectors[j]];
      return a && b && a.length === b.length ? dot(a, b) : 0;
    };
  }
  const zero = new Float32Array(dim);
  const matrix = new DotMatrix(
    vectors.map((v) => v ?? zero),
    dim,
  );
  const rows = new Array<Float32Array | undefined>(vectors.length);
  return (i, j) => (rows[i] ??= Float32Array.from(matrix.score(vectors[i] ?? zero)))[j];
}

/** The weighted mean of the best matches (those below WORD_FLOOR count as 0). */
function weighted(best: Float64Array, weights: Float64Array, total: number): number {
  let matched = 0;
  for (let k = 0; k < weights.length; k++) if (best[k] >= WORD_FLOOR) matched += weights[k] * best[k];
  return total ? matched / total : 0;
}

/** idf of each stem among `points`: log(1 + n / df); a stem none of them holds weighs as one held once. */
export function idfAmong(points: readonly QuestionPoint[]): (stem: string) => number {
  const df = new Map<string, number>();
  for (const p of points) for (const w of p.words) df.set(w.stem, (df.get(w.stem) ?? 0) + 1);
  const n = Math.max(points.length, 1);
  return (stem) => Math.log(1 + n / (df.get(stem) ?? 1));
}

/** A vector scaled to unit length (zero stays zero). */
export function unit(vector: ArrayLike<number>): Float32Array {
  let norm = 0;
  for (let i = 0; i < vector.length; i++) norm += vector[i] * vector[i];
  const out = new Float32Array(vector.length);
  const inv = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  for (let i = 0; i < vector.length; i++) out[i] = vector[i] * inv;
  return out;
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}
