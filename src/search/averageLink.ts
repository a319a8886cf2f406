/**
 * Agglomerative clustering with average linkage: every item starts alone, and the two clusters
 * whose mean pairwise similarity is highest merge, until no two are at least `threshold` alike.
 * Similarities between merged clusters follow Lance and Williams' update (the size-weighted mean).
 * Ties go to the lowest indices (the pair (i, j), i < j, that comes first), so the same similarities
 * always give the same clusters.
 *
 * Each row keeps its best partner among the higher indices, so a merge costs one pass to update the
 * merged row and re-scans only the rows whose best partner was one of the two merged: O(n²) in
 * practice instead of a full O(n²) search per merge. It runs in the embedding worker on the thread
 * that answers requests, at every question that arrives (n up to 401): the full search per merge
 * held that thread for ~0.4 s each time.
 */
export function averageLink(n: number, similarity: (i: number, j: number) => number, threshold: number): number[] {
  const sim = new Float64Array(n * n);
  for (let i = 0; i < n; i++)
    for (let j = i + 1; j < n; j++) {
      const s = similarity(i, j);
      sim[i * n + j] = s;
      sim[j * n + i] = s;
    }
  const size = new Float64Array(n).fill(1);
  const alive = new Uint8Array(n).fill(1);
  const bestOf = new Float64Array(n);
  const partner = new Int32Array(n);
  /** Row i's best partner among the alive higher indices (the lowest on a tie), -1 for none. */
  const rescan = (i: number) => {
    let best = -Infinity;
    let at = -1;
    for (let j = i + 1; j < n; j++)
      if (alive[j] && sim[i * n + j] > best) {
        best = sim[i * n + j];
        at = j;
      }
    bestOf[i] = best;
    partner[i] = at;
  };
  for (let i = 0; i < n; i++) rescan(i);
  const cluster = Array.from({ length: n }, (_, i) => i);
  for (;;) {
    let a = -1;
    for (let i = 0; i < n; i++) if (alive[i] && partner[i] >= 0 && (a < 0 || bestOf[i] > bestOf[a])) a = i;
    if (a < 0 || bestOf[a] < threshold) break;
    const b = partner[a];
    merge(sim, n, size, alive, a, b);
    for (let k = 0; k < n; k++) if (cluster[k] === b) cluster[k] = a;
    rescan(a);
    for (let k = 0; k < a; k++) {
      if (!alive[k]) continue;
      if (partner[k] === a || partner[k] === b) rescan(k);
      else if (sim[k * n + a] > bestOf[k] || (sim[k * n + a] === bestOf[k] && a < partner[k])) {
        bestOf[k] = sim[k * n + a];
        partner[k] = a;
      }
    }
    for (let k = a + 1; k < b; k++) if (alive[k] && partner[k] === b) rescan(k);
  }
  return cluster;
}

/** b joins a: a's similarity to every other cluster becomes the size-weighted mean. */
function merge(sim: Float64Array, n: number, size: Float64Array, alive: Uint8Array, a: number, b: number): void {
  for (let k = 0; k < n; k++) {
    if (!alive[k] || k === a || k === b) continue;
    const s = (size[a] * sim[a * n + k] + size[b] * sim[b * n + k]) / (size[a] + size[b]);
    sim[a * n + k] = s;
    sim[k * n + a] = s;
  }
  size[a] += size[b];
  alive[b] = 0;
}
