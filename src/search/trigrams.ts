/** Word trigrams as pg_trgm makes them, hashed to numbers, and their Jaccard similarity (for near-duplicate notes and did-you-mean). */

/** The distinct trigrams of a text, as pg_trgm makes them, each as a 32-bit hash. */
export function trigrams(text: string): Set<number> {
  const out = new Set<number>();
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    let a = 32;
    let b = 32;
    for (const char of word) {
      const c = char.codePointAt(0)!;
      out.add(trigramHash(a, b, c));
      a = b;
      b = c;
    }
    out.add(trigramHash(a, b, 32));
  }
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
