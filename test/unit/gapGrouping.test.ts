import { describe, expect, it } from 'vitest';
import { averageLink } from '../../src/search/averageLink.js';
import { idfAmong, pairSimilarity, questionSimilarity, unit, WORD_FLOOR, type QuestionPoint } from '../../src/search/questionSimilarity.js';

/** A deterministic pseudo-random unit vector per seed. */
function vectorOf(seed: number, dim = 16): Float32Array {
  let a = seed * 7919 + 1;
  return unit(Array.from({ length: dim }, () => (a = (a * 48271) % 2147483647) / 2147483647 - 0.5));
}

describe('content-gap grouping: similarity and average linkage', () => {
  it('joins the two clusters of highest mean similarity until none is at least the threshold alike', () => {
    // Two tight pairs (0,1) and (2,3), and 4 close to both pairs but not enough on average.
    const s = [
      [1, 0.9, 0.1, 0.1, 0.5],
      [0.9, 1, 0.1, 0.1, 0.2],
      [0.1, 0.1, 1, 0.8, 0.1],
      [0.1, 0.1, 0.8, 1, 0.1],
      [0.5, 0.2, 0.1, 0.1, 1],
    ];
    const c = averageLink(5, (i, j) => s[i][j], 0.4);
    expect(c[0]).toBe(c[1]);
    expect(c[2]).toBe(c[3]);
    expect(c[0]).not.toBe(c[2]);
    // 4 to {0,1} is 0.35 on average: below 0.4 it stays alone; at 0.3 it joins them.
    expect(new Set([c[4], c[0], c[2]]).size).toBe(3);
    const lower = averageLink(5, (i, j) => s[i][j], 0.3);
    expect(lower[4]).toBe(lower[0]);
    expect(lower[2]).not.toBe(lower[0]);
    // Everything apart above the largest similarity; the same input, the same clusters.
    expect(new Set(averageLink(5, (i, j) => s[i][j], 0.95)).size).toBe(5);
    expect(averageLink(5, (i, j) => s[i][j], 0.4)).toEqual(c);
  });

  it('gives exactly the clusters of the plain search for the best pair at every merge (ties included)', () => {
    /** The plain O(n³) average linkage: the best pair searched afresh at every merge, the first on a tie. */
    const reference = (n: number, f: (i: number, j: number) => number, threshold: number) => {
      const sim = Array.from({ length: n }, (_, i) =>
        Array.from({ length: n }, (_, j) => (i === j ? 0 : f(Math.min(i, j), Math.max(i, j)))),
      );
      const size = new Array<number>(n).fill(1);
      const alive = new Array<boolean>(n).fill(true);
      const cluster = Array.from({ length: n }, (_, i) => i);
      for (;;) {
        let [best, a, b] = [-Infinity, -1, -1];
        for (let i = 0; i < n; i++)
          for (let j = i + 1; j < n; j++) if (alive[i] && alive[j] && sim[i][j] > best) [best, a, b] = [sim[i][j], i, j];
        if (a < 0 || best < threshold) return cluster;
        for (let k = 0; k < n; k++)
          if (alive[k] && k !== a && k !== b) sim[a][k] = sim[k][a] = (size[a] * sim[a][k] + size[b] * sim[b][k]) / (size[a] + size[b]);
        size[a] += size[b];
        alive[b] = false;
        for (let k = 0; k < n; k++) if (cluster[k] === b) cluster[k] = a;
      }
    };
    let seed = 12345;
    const next = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (const n of [2, 3, 7, 30, 120]) {
      for (const steps of [4, 1000]) {
        // Few distinct values (4 steps) make many ties; 1000 steps, few.
        const values = Array.from({ length: n * n }, () => Math.round(next() * steps) / steps);
        const f = (i: number, j: number) => values[i * n + j];
        for (const threshold of [0.2, 0.5, 0.8])
          expect(averageLink(n, f, threshold), `n=${n} steps=${steps} t=${threshold}`).toEqual(reference(n, f, threshold));
      }
    }
  });

  it('compiles the pairwise similarity to the reference (sentences within the rounding of their bytes): half sentences, half the idf-weighted word alignment', () => {
    const vocabulary = ['mail', 'smtp', 'relay', 'server', 'refund', 'money', 'certificate', 'tls'];
    const words = new Map(vocabulary.map((w, i) => [w, vectorOf(100 + i)]));
    // smtp and mail alike by their vectors (above the floor), everything else apart.
    words.set('smtp', unit(Array.from(words.get('mail')!, (x, i) => x + 0.3 * words.get('relay')![i])));
    const point = (seed: number, ws: string[]): QuestionPoint => ({ vector: vectorOf(seed), words: ws.map((w) => ({ word: w, stem: w })) });
    const points = [
      point(1, ['smtp', 'relay']),
      point(2, ['mail', 'server']),
      point(3, ['refund', 'money']),
      point(4, []),
      point(5, ['tls', 'certificate']),
    ];
    const compiled = pairSimilarity(points, (w) => words.get(w));
    const known = {
      weight: idfAmong(points),
      wordSimilarity: (a: string, b: string) => words.get(a)!.reduce((s, x, i) => s + x * words.get(b)![i], 0),
    };
    for (let i = 0; i < points.length; i++)
      for (let j = 0; j < points.length; j++)
        // The sentences' dot products are taken from bytes (search/dots.ts): for these 16 dimensions within 0.02, and half counts.
        expect(Math.abs(compiled(i, j) - questionSimilarity(points[i], points[j], known))).toBeLessThan(0.01);
    // smtp matches mail by its vector: the first two questions share words though no stem.
    const cosine = known.wordSimilarity('smtp', 'mail');
    expect(cosine).toBeGreaterThan(WORD_FLOOR);
    const sentence = points[0].vector.reduce((s, x, i) => s + x * points[1].vector[i], 0);
    expect(compiled(0, 1)).toBeGreaterThan(0.5 * sentence);
    // A question without content words aligns with nothing: only its sentence counts.
    const alone = points[3].vector.reduce((s, x, i) => s + x * points[0].vector[i], 0);
    expect(Math.abs(compiled(3, 0) - 0.5 * alone)).toBeLessThan(0.01);
    // The same stem is a full match whatever the vectors say.
    const same = pairSimilarity([point(6, ['refund']), point(7, ['refund'])], () => undefined);
    const sentence67 = vectorOf(6).reduce((s, x, i) => s + x * vectorOf(7)[i], 0);
    expect(Math.abs(same(0, 1) - (0.5 * sentence67 + 0.5))).toBeLessThan(0.01);
  });
});
