/**
 * The words of unanswered questions as content-gap grouping reads them (see questionSimilarity.ts):
 * each question's content words with their stems, and each word's vector from the sentence
 * encoder, kept per process. Stems come from PostgreSQL's English configuration (a word it drops
 * is a stop word); vectors are made outside any transaction (`learn`, before the embedding worker
 * opens its own), so grouping inside the transaction only reads them: a word whose vector is not
 * known yet matches only its own stem.
 */
import type { SqlTarget } from '../db/sql.js';
import { lexemesOf } from '../store/searchTerms.js';
import type { QuestionPoint, QuestionWord } from './questionSimilarity.js';
import { unit } from './questionSimilarity.js';

/** Words kept per process, each map (a vector of 512 float32 is 2 KiB: 20,000 words are 40 MiB). */
const MAX_WORDS = 20_000;
/** Words past this many in a question are not compared (a question keeps 256 characters anyway). */
const MAX_QUESTION_WORDS = 40;

/** Lower-case words of letters and digits, joined by inner hyphens or apostrophes (`e-mail`, `let's`). */
export function tokens(text: string): string[] {
  return [...new Set(text.toLowerCase().match(/[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu) ?? [])].slice(0, MAX_QUESTION_WORDS);
}

/** First lexeme of a printed tsvector (`'configur':1`), or '' for none (a stop word). */
function firstLexeme(printed: string): string {
  const m = /^'((?:[^']|'')*)'/.exec(printed);
  return m ? m[1].replace(/''/g, "'") : '';
}

/** A map that forgets its oldest entries past `max`. */
class Bounded<V> {
  private readonly entries = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(key: string): V | undefined {
    return this.entries.get(key);
  }
  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }
}

/** This process's stems and word vectors (of one model: a new model starts afresh). */
export class QuestionWords {
  private readonly stems = new Bounded<string>(MAX_WORDS);
  private vectors = new Bounded<Float32Array>(MAX_WORDS);
  private model: string | null = null;

  /** Each text's content words (one per stem, in order), stems asked of the database for words not seen before. */
  async wordsOf(db: SqlTarget, texts: string[]): Promise<QuestionWord[][]> {
    const perText = texts.map(tokens);
    const unknown = [...new Set(perText.flat().filter((t) => this.stems.get(t) === undefined))];
    if (unknown.length) {
      const printed = await lexemesOf(db, unknown);
      unknown.forEach((t, i) => this.stems.set(t, firstLexeme(printed[i])));
    }
    return perText.map((words) => {
      const seen = new Set<string>();
      const out: QuestionWord[] = [];
      for (const word of words) {
        const stem = this.stems.get(word) ?? '';
        if (!stem || seen.has(stem)) continue;
        seen.add(stem);
        out.push({ word, stem });
      }
      return out;
    });
  }

  /** Makes the vectors of the words of `model` not known yet (outside any transaction: it runs the model). */
  async learn(words: QuestionWord[][], model: string, embed: (texts: string[]) => Promise<number[][]>): Promise<void> {
    this.useModel(model);
    const missing = [...new Set(words.flat().map((w) => w.word))].filter((w) => !this.vectors.get(w));
    if (!missing.length) return;
    const vectors = await embed(missing);
    missing.forEach((w, i) => this.vectors.set(w, unit(vectors[i])));
  }

  /** Questions as points: sentence vectors with their words. */
  points(vectors: ArrayLike<number>[], words: QuestionWord[][], model: string): QuestionPoint[] {
    this.useModel(model);
    return vectors.map((v, i) => ({ vector: unit(v), words: words[i] }));
  }

  vector(word: string): Float32Array | undefined {
    return this.vectors.get(word);
  }

  private useModel(model: string): void {
    if (this.model === model) return;
    this.model = model;
    // Vectors of another model are not comparable: forget them (stems stay).
    this.vectors = new Bounded<Float32Array>(MAX_WORDS);
  }
}
