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

/** The sentence cosine's share of a similarity. */
export const SENTENCE_SHARE = 0.5;
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

/**
 * Word similarity by unit vectors (`vector`), each pair computed once: the cosine, or 0 when either
 * vector is unknown. A clustering pass compares the same words over and over.
 */
export function memoWordSimilarity(vector: (word: string) => Float32Array | undefined): (a: string, b: string) => number {
  const memo = new Map<string, number>();
  return (a, b) => {
    const key = a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`;
    let s = memo.get(key);
    if (s === undefined) {
      const va = vector(a);
      const vb = va && vector(b);
      s = vb ? dot(va, vb) : 0;
      memo.set(key, s);
    }
    return s;
  };
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
