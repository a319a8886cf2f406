import { describe, expect, it } from 'vitest';
import { DotMatrix } from '../../src/search/dots.js';

/** A seeded unit vector, so a failure is reproducible. */
function unitVector(seed: number, dim: number): Float32Array {
  let x = seed;
  const v = Float32Array.from({ length: dim }, () => {
    x = (x * 1_103_515_245 + 12_345) % 2 ** 31;
    return x / 2 ** 31 - 0.5;
  });
  const norm = Math.hypot(...v);
  return v.map((c) => c / norm);
}

const exact = (a: Float32Array, b: Float32Array) => a.reduce((s, c, i) => s + c * b[i], 0);

describe('DotMatrix (rows as signed bytes with a scale each)', () => {
  it('scores unit vectors near the exact dot products (closer the more dimensions), also for dimensions not a multiple of 32', () => {
    for (const [dim, within] of [
      [512, 0.002],
      [300, 0.003],
      [7, 0.02],
    ]) {
      const rows = Array.from({ length: 200 }, (_, i) => unitVector(i + 1, dim));
      const matrix = new DotMatrix(rows, dim);
      for (const seed of [1_000, 2_000, 3]) {
        const q = unitVector(seed, dim);
        const scores = matrix.score(q);
        expect(scores.length).toBe(rows.length);
        rows.forEach((row, i) => expect(Math.abs(scores[i] - exact(row, q))).toBeLessThan(within));
      }
      // A row scored against itself: ~1; the query's scale does not matter.
      expect(matrix.score(rows[3].map((c) => c * 10))[3]).toBeCloseTo(10, 1);
    }
  });

  it('gives rows back as bytes and a scale that another matrix copies as they are, and scores a zero row or query as 0', () => {
    const rows = [unitVector(5, 64), new Float32Array(64)];
    const matrix = new DotMatrix(rows, 64);
    const again = new DotMatrix([matrix.row(0), matrix.row(1)], 64);
    const q = unitVector(9, 64);
    expect([...again.score(q)]).toEqual([...matrix.score(q)]);
    const { bytes, scale } = matrix.row(0);
    expect([...bytes].every((b, i) => Math.abs(b * scale - rows[0][i]) < 0.01)).toBe(true);
    expect(matrix.score(q)[1]).toBe(0);
    expect([...matrix.score(new Float32Array(64))]).toEqual([0, 0]);
  });
});
