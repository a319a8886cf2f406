/** Word trigrams as pg_trgm makes them, hashed to numbers, and their Jaccard similarity (for near-duplicate notes and did-you-mean). */

const WORD_CHAR = /[\p{L}\p{N}]/u;

/** Whether a code point of lower-cased text belongs to a word: a letter or a digit; ASCII without a regular expression. */
function isWordChar(c: number): boolean {
  if (c < 128) return (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
  return WORD_CHAR.test(String.fromCodePoint(c));
}

/** The buffer trigramHashes fills, grown to the longest text seen (a trigram per code unit at most, plus one). */
let hashBuffer = new Uint32Array(4096);

/**
 * The hash of every trigram of a text, in order (a trigram that occurs twice is there twice): the
 * lower-cased words of letters and digits, each padded with two spaces before and one after, as
 * pg_trgm makes them. They are written into one buffer that the next call reuses (read them
 * first): a 32-bit hash handed to a callback one by one is a heap number each time (~20 KB of
 * garbage per 2.5 KB body, on every note PUT), in a typed array it is not. No word list or set is
 * built, so a caller that needs only an order-free summary of the set (a MinHash) pays for nothing else.
 */
export function trigramHashes(text: string): { hashes: Uint32Array; count: number } {
  const lower = text.toLowerCase();
  if (hashBuffer.length < lower.length + 1) hashBuffer = new Uint32Array(lower.length + 1);
  const out = hashBuffer;
  let count = 0;
  let a = 32;
  let b = 32;
  let inWord = false;
  for (let i = 0; i < lower.length; i++) {
    const c = lower.codePointAt(i)!;
    if (c > 0xffff) i++;
    if (isWordChar(c)) {
      out[count++] = trigramHash(a, b, c);
      a = b;
      b = c;
      inWord = true;
    } else if (inWord) {
      out[count++] = trigramHash(a, b, 32);
      a = b = 32;
      inWord = false;
    }
  }
  if (inWord) out[count++] = trigramHash(a, b, 32);
  return { hashes: out, count };
}

/** The distinct trigrams of a text, as pg_trgm makes them, each as a 32-bit hash. */
export function trigrams(text: string): Set<number> {
  const { hashes, count } = trigramHashes(text);
  const out = new Set<number>();
  for (let i = 0; i < count; i++) out.add(hashes[i]);
  return out;
}

function trigramHash(a: number, b: number, c: number): number {
  return (Math.imul(Math.imul(a, 0x9e3779b1) ^ b, 0x85ebca6b) ^ Math.imul(c, 0xc2b2ae35)) >>> 0;
}

/** The Jaccard index of two trigram sets (pg_trgm's similarity()). */
export function similarity(a: Set<number>, b: Set<number>): number {
  if (!a.size && !b.size) return 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let shared = 0;
  for (const t of small) if (large.has(t)) shared++;
  return shared / (a.size + b.size - shared);
}
