/**
 * Search text in websearch syntax, read the way ranked retrieval uses it. Words are what a
 * document is ranked by, and a document holding any of them is found (a question's words are
 * rarely all in the page that answers it). The syntax keeps its meaning: a `"quoted phrase"` must
 * appear, and so must one of the alternatives of a phrase joined to others by `or` (`"a b" or c`:
 * the phrase, or c); a word or phrase after `-` must not. A query of exclusions alone finds every
 * item without them. Any other character is text: a query made of operators reads as no words,
 * never as an error.
 *
 * The text is read here, in the process, with bounds on what one query may ask; words become
 * lexemes in PostgreSQL (its English stemmer and stop words, as the search columns were built).
 */

/** Most tokens of a query that are read (a 2,000-character question has ~350). */
export const MAX_TOKENS = 500;
/** Most phrase groups a query may require, and most words or phrases it may exclude. */
export const MAX_REQUIRED = 8;
export const MAX_EXCLUDED = 16;

/** A query as ranked retrieval reads it. */
export interface ParsedQuery {
  /** The text whose lexemes rank documents: every word that is not excluded, phrases' words included. */
  words: string;
  /** Groups of alternatives (phrases, and words joined to one by `or`): a document must hold one alternative of every group. */
  required: string[][];
  /** Words and phrases a document must not hold. */
  excluded: string[];
}

interface Operand {
  text: string;
  phrase: boolean;
  negated: boolean;
}

/** Tokens of websearch syntax: quoted phrases, words, `-` before either, and the word `or` between. */
function operands(q: string): { operand: Operand; orBefore: boolean }[] {
  const out: { operand: Operand; orBefore: boolean }[] = [];
  let orBefore = false;
  let i = 0;
  while (i < q.length && out.length < MAX_TOKENS) {
    const ch = q[i];
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    let negated = false;
    if (ch === '-' && i + 1 < q.length && !/\s/.test(q[i + 1])) {
      negated = true;
      i++;
    }
    if (q[i] === '"') {
      const end = q.indexOf('"', i + 1);
      const text = q.slice(i + 1, end < 0 ? q.length : end);
      i = end < 0 ? q.length : end + 1;
      if (text.trim()) out.push({ operand: { text, phrase: true, negated }, orBefore });
      orBefore = false;
      continue;
    }
    let end = i;
    while (end < q.length && !/\s/.test(q[end]) && q[end] !== '"') end++;
    const text = q.slice(i, end);
    i = end;
    if (!negated && text.toLowerCase() === 'or' && out.length) {
      orBefore = true;
      continue;
    }
    out.push({ operand: { text, phrase: false, negated }, orBefore });
    orBefore = false;
  }
  return out;
}

/** Reads search text (see the module's comment). */
export function parseQuery(q: string): ParsedQuery {
  const words: string[] = [];
  const required: string[][] = [];
  const excluded: string[] = [];
  // Operands joined by `or` form one chain; a chain holding a phrase is required (one of its alternatives).
  let chain: Operand[] = [];
  const close = () => {
    const positive = chain.filter((o) => !o.negated);
    if (positive.some((o) => o.phrase) && required.length < MAX_REQUIRED) required.push(positive.map((o) => o.text));
    chain = [];
  };
  for (const { operand, orBefore } of operands(q)) {
    if (!orBefore) close();
    if (operand.negated) {
      if (excluded.length < MAX_EXCLUDED) excluded.push(operand.text);
      continue;
    }
    chain.push(operand);
    words.push(operand.text);
  }
  close();
  return { words: words.join(' '), required, excluded };
}

/** Most words of a question tried as compounds (see compoundWords). */
export const MAX_COMPOUNDS = 16;

/**
 * The question's words that may be two words written as one (`rollback`, `signup`): plain
 * letters, at least six, lower-cased, each once, at most MAX_COMPOUNDS. Ranked retrieval splits
 * one the workspace lacks into two it holds (see splitCompound).
 */
export function compoundWords(words: string): string[] {
  const found = new Set<string>();
  for (const w of words.toLowerCase().split(/[^\p{L}]+/u)) {
    if (w.length >= 6 && w.length <= 40 && /^[a-z]+$/.test(w)) found.add(w);
    if (found.size >= MAX_COMPOUNDS) break;
  }
  return [...found];
}

/** The first split of `word` into two parts of at least three letters that `holds` both, or null. */
export function splitCompound(word: string, holds: (part: string) => boolean): [string, string] | null {
  for (let at = 3; at <= word.length - 3; at++) {
    const left = word.slice(0, at);
    const right = word.slice(at);
    if (holds(left) && holds(right)) return [left, right];
  }
  return null;
}
