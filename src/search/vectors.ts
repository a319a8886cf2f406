import { EventEmitter } from 'node:events';
import type { EntityManager } from '@mikro-orm/postgresql';
import { pgArray, type SqlTarget } from '../db/sql.js';
import {
  bumpStamp,
  hasPendingEmbeddings,
  hasVectorColumn,
  widenVectorSearch,
  nearestByVector,
  readStamp,
  replaceEmbedding,
  vectorsOfItems,
  vectorsOfModel,
  vectorsSince,
  type ItemType,
  type VectorRow,
} from '../store/embeddings.js';
import { DotMatrix, lengthOf, type ByteRow } from './dots.js';

// Written in src/store/embeddings.ts with the other embedding statements; re-exported for the callers that import them from here.
export { ENQUEUE_EMBEDDING, enqueueEmbedding, removeEmbeddings, UNEMBED_DELETED, type ItemType } from '../store/embeddings.js';

const signal = new EventEmitter();

/** Wakes this process's worker soon (after the caller's commit); other processes poll. */
export function signalEmbeddingWork(): void {
  setTimeout(() => signal.emit('work'), 10).unref?.();
}

export function onEmbeddingWork(listener: () => void): () => void {
  signal.on('work', listener);
  return () => signal.off('work', listener);
}

/**
 * An item near a query: its best passage and that passage's similarity (what the similarity floor
 * is checked against), and its `score`, by which items are ranked (see BEST_PASSAGES).
 */
export interface Neighbour {
  itemType: ItemType;
  itemId: number;
  passage: number;
  similarity: number;
  score: number;
}

/**
 * An item is ranked by its best passages, not its best one alone: its score is the mean cosine
 * similarity of its BEST_PASSAGES most similar passages (of all it has, when it has fewer). One
 * passage's similarity is a noisy signal with the local sentence encoder; a document whose few best
 * passages all speak of the question is the better answer. Chosen by `npm run eval:search` on the
 * tuning two thirds of its questions (among the best 1–10 passages, over the vectors it stored):
 * held out, semantic search had recall@5 0.423 and MRR 0.268 by the best passage alone, and has
 * 0.5 and 0.352 by the mean of the best 8.
 */
export const BEST_PASSAGES = 8;

/** A row of the cached matrix: one passage of an item. */
interface Entry {
  itemType: ItemType;
  itemId: number;
  passage: number;
}

/** A passage to store: its vector and the Markdown it covers (null for a question). */
export interface PassageVector {
  vector: number[];
  text: string | null;
}

/**
 * A workspace's passage vectors of one model in process: only one copy, as unit vectors (cosine
 * similarity is then a dot product) in the rows of one contiguous matrix; row r is entries[r], an
 * item's passages in consecutive rows, items starting at the rows of `starts` (and one past the end).
 */
interface CachedWorkspace {
  /** The workspace's EmbeddingStamp when read (bigints as text). */
  revision: string;
  removals: string;
  entries: Entry[];
  starts: Int32Array;
  matrix: DotMatrix | null;
}

const itemKey = (itemType: string, itemId: number) => `${itemType}:${itemId}`;

/**
 * Builds the cache from (entry, unit vector) pairs, or (entry, row of the old cache's matrix), copied
 * as bytes; vectors of another length than the first are left out.
 */
function cacheOf(revision: string, removals: string, pairs: [Entry, Float32Array | ByteRow][]): CachedWorkspace {
  const dim = pairs.length ? lengthOf(pairs[0][1]) : undefined;
  const kept = pairs.filter(([, v]) => lengthOf(v) === dim);
  const entries = kept.map(([e]) => e);
  const starts: number[] = [];
  entries.forEach((e, i) => {
    if (i === 0 || e.itemId !== entries[i - 1].itemId || e.itemType !== entries[i - 1].itemType) starts.push(i);
  });
  starts.push(entries.length);
  return {
    revision,
    removals,
    entries,
    starts: Int32Array.from(starts),
    matrix: dim
      ? new DotMatrix(
          kept.map(([, v]) => v),
          dim,
        )
      : null,
  };
}

function normalize(vec: ArrayLike<number>): Float32Array {
  let norm = 0;
  for (let i = 0; i < vec.length; i++) norm += vec[i] * vec[i];
  const out = new Float32Array(vec.length);
  if (norm > 0) {
    const inv = 1 / Math.sqrt(norm);
    for (let i = 0; i < vec.length; i++) out[i] = vec[i] * inv;
  }
  return out;
}

/**
 * The top-`limit` items by their score (see BEST_PASSAGES): every row scored (SIMD, rows as bytes), each item's
 * best rows found in one pass over its consecutive rows, then one pass keeping the best few items.
 */
function topK(cached: CachedWorkspace & { matrix: DotMatrix }, q: Float32Array, limit: number): Neighbour[] {
  const scores = cached.matrix.score(q);
  const { starts } = cached;
  const kept: { row: number; similarity: number; score: number }[] = [];
  const best = new Float64Array(BEST_PASSAGES);
  for (let item = 0; item + 1 < starts.length; item++) {
    const first = starts[item];
    const end = starts[item + 1];
    let row = first;
    let count = 0;
    for (let r = first; r < end; r++) {
      const dot = scores[r];
      if (dot > scores[row]) row = r;
      // The item's best BEST_PASSAGES similarities, kept sorted (descending) by insertion.
      if (count === BEST_PASSAGES && dot <= best[count - 1]) continue;
      let at = count < BEST_PASSAGES ? count++ : count - 1;
      while (at > 0 && best[at - 1] < dot) {
        best[at] = best[at - 1];
        at--;
      }
      best[at] = dot;
    }
    let sum = 0;
    for (let i = 0; i < count; i++) sum += best[i];
    const score = sum / count;
    if (kept.length === limit && score <= kept[limit - 1].score) continue;
    let at = kept.length;
    while (at > 0 && kept[at - 1].score < score) at--;
    kept.splice(at, 0, { row, similarity: scores[row], score });
    if (kept.length > limit) kept.pop();
  }
  return kept.map(({ row, similarity, score }) => {
    const e = cached.entries[row];
    return { itemType: e.itemType, itemId: e.itemId, passage: e.passage, similarity, score };
  });
}

/** Vector to float32 bytes and back (the portable storage format). */
function toBytes(vec: number[]): Buffer {
  return Buffer.from(Float32Array.from(vec).buffer);
}
export function fromBytes(bytes: Buffer): Float32Array {
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

/**
 * Stores vectors and finds nearest neighbours: with pgvector (HNSW-indexed `embedding` column)
 * where the database has it, else from the portable `vec` column (float32 bytes) with cosine
 * ranking in process (a dot product over one contiguous matrix of unit vectors kept as bytes, see search/dots.ts), over a
 * per-workspace cache revalidated against the workspace's EmbeddingStamp on every query, so
 * several processes never serve stale vectors.
 */
export class VectorIndex {
  private readonly cache = new Map<string, CachedWorkspace>();

  private constructor(readonly pgvector: boolean) {}

  /** Detects whether the search migration could add the pgvector column (`portable` ignores it). */
  static async open(em: EntityManager, options: { portable?: boolean } = {}): Promise<VectorIndex> {
    if (options.portable) return new VectorIndex(false);
    const pgvector = await hasVectorColumn(em);
    // The embedded database serves every connection from one session: the setting holds for all of them.
    if (pgvector) await widenVectorSearch(em);
    return new VectorIndex(pgvector);
  }

  /**
   * Replaces an item's passages (a question: one) by these; call inside a transaction (the stamp
   * row stays locked until commit, and the old passages go in it).
   */
  async store(
    em: EntityManager,
    workspaceId: string,
    itemType: ItemType,
    itemId: number,
    model: string,
    passages: PassageVector[],
  ): Promise<void> {
    const revision = await bumpStamp(em, workspaceId);
    const stored = passages.map((p) => ({
      bytes: toBytes(p.vector),
      vector: this.pgvector && p.vector.length === 512 ? `[${p.vector.join(',')}]` : null,
      text: p.text,
    }));
    await replaceEmbedding(em, { itemType, itemId, workspaceId, model, revision }, stored);
  }

  /** The `limit` nearest items of the given types in a workspace, by their best passages (see BEST_PASSAGES), best first. */
  async nearest(
    em: SqlTarget,
    workspaceId: string,
    types: ItemType[],
    queryVector: number[] | Promise<number[]>,
    model: string,
    limit: number,
  ): Promise<Neighbour[]> {
    // The cache revalidation runs while the query vector is still being computed.
    const loading = this.pgvector ? null : this.load(em, workspaceId, types, model);
    loading?.catch(() => undefined);
    const query = await queryVector;
    if (this.pgvector && query.length === 512) {
      const vector = `[${query.join(',')}]`;
      // Passages, not items, come out of the index: enough of them that `limit` items are among them.
      const rows = await nearestByVector(em, workspaceId, types, model, vector, {
        limit,
        candidates: Math.min(1000, Math.max(200, limit * 8)),
        best: BEST_PASSAGES,
      });
      return rows.map((r) => ({
        itemType: r.item_type,
        itemId: r.item_id,
        passage: r.passage,
        similarity: Number(r.similarity),
        score: Number(r.score),
      }));
    }
    const cached = await (loading ?? this.load(em, workspaceId, types, model));
    if (limit <= 0 || !cached.matrix || cached.matrix.dim !== query.length) return [];
    return topK(cached as CachedWorkspace & { matrix: DotMatrix }, normalize(query), limit);
  }

  /**
   * The workspace's vectors, kept in process and revalidated on every call with one primary-key
   * read of the workspace's stamp: unchanged → the cache as is; new or rewritten rows → just those
   * are read (revision above the cached one); a removal since → a full reload.
   */
  private async load(em: SqlTarget, workspaceId: string, types: ItemType[], model: string): Promise<CachedWorkspace> {
    const typeList = pgArray(types);
    const stamp = await readStamp(em, workspaceId);
    const revision: string = stamp?.revision ?? '0';
    const removals: string = stamp?.removals ?? '0';
    const key = `${workspaceId}|${typeList}|${model}`;
    const cached = this.cache.get(key);
    if (cached && cached.revision === revision && cached.removals === removals) return cached;
    const incremental = cached !== undefined && cached.removals === removals;
    // Incremental reads take every model, so a row re-embedded with another model leaves this set.
    const rows = incremental
      ? await vectorsSince(em, workspaceId, cached.revision, types)
      : await vectorsOfModel(em, workspaceId, types, model);
    if (incremental && !rows.length) {
      // Only other item types changed (e.g. notes, for an article search): the matrix stands.
      cached.revision = revision;
      return cached;
    }
    const unit = (r: VectorRow) => normalize(fromBytes(r.vec));
    let fresh: CachedWorkspace;
    if (!incremental) {
      fresh = cacheOf(
        revision,
        removals,
        rows.map((r) => [{ itemType: r.item_type, itemId: r.item_id, passage: r.passage }, unit(r)]),
      );
    } else {
      // An item that changed comes back with all its passages (they are replaced together, under one
      // revision): its old rows are dropped, the unchanged items' rows copied from the old matrix,
      // and the changed ones of this model appended (other-model ones dropped).
      const changed = new Set(rows.map((r) => itemKey(r.item_type, r.item_id)));
      const pairs: [Entry, Float32Array | ByteRow][] = [];
      cached.entries.forEach((e, i) => {
        if (!changed.has(itemKey(e.itemType, e.itemId))) pairs.push([e, cached.matrix!.row(i)]);
      });
      for (const r of rows) if (r.model === model) pairs.push([{ itemType: r.item_type, itemId: r.item_id, passage: r.passage }, unit(r)]);
      fresh = cacheOf(revision, removals, pairs);
    }
    if (this.cache.size >= 200 && !cached) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, fresh);
    return fresh;
  }

  /**
   * Each item's mean passage vector (its passages as unit vectors, averaged), of one model; items
   * without vectors of it are left out.
   */
  async meanVectors(
    em: SqlTarget,
    workspaceId: string,
    model: string,
    items: { itemType: ItemType; itemId: number }[],
  ): Promise<Float32Array[]> {
    if (!items.length) return [];
    const sums = new Map<string, { sum: Float32Array; n: number }>();
    for (const row of await vectorsOfItems(em, workspaceId, model, items)) {
      const v = normalize(fromBytes(row.vec));
      const key = itemKey(row.item_type, row.item_id);
      const entry = sums.get(key) ?? { sum: new Float32Array(v.length), n: 0 };
      if (entry.sum.length !== v.length) continue;
      for (let i = 0; i < v.length; i++) entry.sum[i] += v[i];
      entry.n++;
      sums.set(key, entry);
    }
    return [...sums.values()].map(({ sum, n }) => sum.map((x) => x / n));
  }

  /** True while items of these types in the workspace still wait for their embedding. */
  pending(em: SqlTarget, workspaceId: string, types: ItemType[]): Promise<boolean> {
    return hasPendingEmbeddings(em, workspaceId, types);
  }
}
