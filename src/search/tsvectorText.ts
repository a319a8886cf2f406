/**
 * A tsvector as PostgreSQL prints it (`'lexeme':1A,4 'other':2B`), read into what BM25 needs: each
 * lexeme's count of positions in each of three fields. The search columns give each field its own
 * weight label; which label is which field depends on the table (FIELD_OF_WEIGHT).
 */

/** The fields BM25 weighs apart: 0 the title (a note's path), 1 the headings (a note's tags), 2 the body. */
export type FieldNo = 0 | 1 | 2;

/** What the weight labels (A, B, C, D) of a table's search column hold: the field of each, and whether its words count in the length. */
export interface LabelFields {
  field: readonly FieldNo[];
  counted: readonly boolean[];
}

/**
 * The labels of each searched table: articles are title A, headings B (a copy of the heading lines,
 * so not counted twice in the length), Markdown D; changelog entries title A, Markdown B; notes
 * path A, tags B, body C.
 */
export const FIELD_OF_WEIGHT = {
  article: { field: [0, 1, 2, 2], counted: [true, false, true, true] },
  changelog: { field: [0, 2, 2, 2], counted: [true, true, true, true] },
  note: { field: [0, 1, 2, 2], counted: [true, true, true, true] },
} as const satisfies Record<string, LabelFields>;

/**
 * A lexeme's term frequencies packed in 16 bits: title (4 bits, at most 15), headings (4 bits, at
 * most 15) and body (8 bits, at most 255; PostgreSQL keeps at most 256 positions of a lexeme).
 * BM25's saturation makes the caps invisible in a score.
 */
export function packTf(title: number, headings: number, body: number): number {
  return (Math.min(title, 15) << 12) | (Math.min(headings, 15) << 8) | Math.min(body, 255);
}

/** The terms of one document: lexemes, their packed frequencies, and its length in words (title and body; headings repeat body words). */
export interface DocTerms {
  lexemes: string[];
  tfs: number[];
  length: number;
}

/** Reads the printed tsvector `text` of a row whose labels mean `fields` (see FIELD_OF_WEIGHT). */
export function readTsvector(text: string, labels: LabelFields): DocTerms {
  const { field, counted } = labels;
  const lexemes: string[] = [];
  const tfs: number[] = [];
  let length = 0;
  const counts = [0, 0, 0];
  let i = 0;
  const n = text.length;
  while (i < n) {
    while (text.charCodeAt(i) === 32) i++;
    if (i >= n) break;
    const read = readLexeme(text, i);
    i = read.end;
    counts[0] = counts[1] = counts[2] = 0;
    if (text[i] === ':') {
      i++;
      for (;;) {
        while (i < n && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) i++;
        let label = text.charCodeAt(i) - 65; // A..D → 0..3; a position without a label is D
        if (label >= 0 && label <= 3) i++;
        else label = 3;
        counts[field[label]]++;
        if (counted[label]) length++;
        if (text[i] !== ',') break;
        i++;
      }
    } else {
      counts[field[3]]++;
      if (counted[3]) length++;
    }
    lexemes.push(read.lexeme);
    tfs.push(packTf(counts[0], counts[1], counts[2]));
  }
  return { lexemes, tfs, length };
}

/** The quoted lexeme starting at `start` (a `'`), with `''` and backslash escapes undone; where it ends. */
function readLexeme(text: string, start: number): { lexeme: string; end: number } {
  let i = start + 1;
  let from = i;
  let lexeme = '';
  for (;;) {
    const ch = text[i];
    if (ch === undefined) return { lexeme: lexeme + text.slice(from, i), end: i };
    if (ch === "'") {
      if (text[i + 1] === "'") {
        lexeme += text.slice(from, i + 1);
        i += 2;
        from = i;
        continue;
      }
      return { lexeme: lexeme + text.slice(from, i), end: i + 1 };
    }
    if (ch === '\\') {
      lexeme += text.slice(from, i) + (text[i + 1] ?? '');
      i += 2;
      from = i;
      continue;
    }
    i++;
  }
}

/** A tsquery constant matching any of `lexemes` (each quoted as PostgreSQL reads it), or null for none. */
export function anyLexemeQuery(lexemes: Iterable<string>): string | null {
  const parts = [...lexemes].map((l) => `'${l.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`);
  return parts.length ? parts.join(' | ') : null;
}
