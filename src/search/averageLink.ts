/**
 * Agglomerative clustering with average linkage: every item starts alone, and the two clusters
 * whose mean pairwise similarity is highest merge, until no two are at least `threshold` alike.
 * Similarities between merged clusters follow Lance and Williams' update (the size-weighted mean),
 * so each merge costs one pass over the clusters: O(n³) at worst, 64 million steps at n = 400.
 * Ties go to the lowest indices, so the same similarities always give the same clusters.
 */
export function averageLink(n: number, similarity: (i: number, j: number) => number, threshold: number): number[] {
  const sim = new Float64Array(n * n);
  for (let i = 0; i < n; i++)
    for (let j = i + 1; j < n; j++) {
      const s = similarity(i, j);
      sim[i * n + j] = s;
      sim[j * n + i] = s;
    }
  const size = new Array<number>(n).fill(1);
  const alive = new Array<boolean>(n).fill(true);
  const cluster = Array.from({ length: n }, (_, i) => i);
  for (;;) {
    let best = -Infinity;
    let a = -1;
    let b = -1;
    for (let i = 0; i < n; i++) {
      if (!alive[i]) continue;
      for (let j = i + 1; j < n; j++) {
        if (alive[j] && sim[i * n + j] > best) {
          best = sim[i * n + j];
          a = i;
          b = j;
        }
      }
    }
    if (a < 0 || best < threshold) break;
    // b joins a: a's similarity to every other cluster becomes the size-weighted mean.
    for (let k = 0; k < n; k++) {
      if (!alive[k] || k === a || k === b) continue;
      const s = (size[a] * sim[a * n + k] + size[b] * sim[b * n + k]) / (size[a] + size[b]);
      sim[a * n + k] = s;
      sim[k * n + a] = s;
    }
    size[a] += size[b];
    alive[b] = false;
    for (let k = 0; k < n; k++) if (cluster[k] === b) cluster[k] = a;
  }
  return cluster;
}
