import { EventEmitter } from 'node:events';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from '../db/sql.js';
import { DotMatrix } from './dots.js';

/** What gets embedded: searchable content, and the questions that content-gap groups cluster. */
export type ItemType = 'article' | 'changelog' | 'gap' | 'search';

const signal = new EventEmitter();

/** Marks an item for (re-)embedding; call inside the write's transaction so both commit together. */
export async function enqueueEmbedding(em: EntityManager, workspaceId: string, itemType: ItemType, itemId: number): Promise<void> {
  await sql(
    em,
    `insert into embedding_queue (item_type, item_id, workspace_id, enqueued_at, claimed_until, attempts) values (?, ?, ?, clock_timestamp(), null, 0)
     on conflict (item_type, item_id) do update set enqueued_at = excluded.enqueued_at, claimed_until = null`,
    [itemType, itemId, workspaceId],
  );
}

/** Bumps a workspace's embedding stamp (see EmbeddingStamp); returns the new revision. */
const BUMP = (removals: number) =>
  `insert into embedding_stamps (workspace_id, revision, removals) values (?, 1, ${removals})
   on conflict (workspace_id) do update set revision = embedding_stamps.revision + 1, removals = embedding_stamps.removals + ${removals}
   returning revision`;

/** Drops items' embeddings and pending work (inside the delete's transaction). */
export async function removeEmbeddings(em: EntityManager, itemType: ItemType, itemIds: number[]): Promise<void> {
  if (!itemIds.length) return;
  const ids = `{${itemIds.join(',')}}`;
  const removed = await sql(em, 'delete from embeddings where item_type = ? and item_id = any(?::int[]) returning workspace_id', [itemType, ids]);
  for (const workspaceId of new Set(removed.map((r) => r.workspace_id as string))) await sql(em, BUMP(1), [workspaceId]);
  await sql(em, 'delete from embedding_queue where item_type = ? and item_id = any(?::int[])', [itemType, ids]);
}

/** Wakes this process's worker soon (after the caller's commit); other processes poll. */
export function signalEmbeddingWork(): void {
  setTimeout(() => signal.emit('work'), 10).unref?.();
}

export function onEmbeddingWork(listener: () => void): () => void {
  signal.on('work', listener);
  return () => signal.off('work', listener);
}

export interface Neighbour {
  itemType: ItemType;
  itemId: number;
  similarity: number;
}

interface Entry {
  itemType: ItemType;
  itemId: number;
  /** Unit length (cosine similarity is then a dot product); all zeros for a zero vector. */
  unit: Float32Array;
}

interface CachedWorkspace {
  /** The workspace's EmbeddingStamp when read (bigints as text). */
  revision: string;
  removals: string;
  items: Map<string, Entry>;
  /** The entries as one contiguous row-major matrix, rebuilt lazily after a change. */
  matrix: { entries: Entry[]; dots: DotMatrix } | null;
}

/** A cache entry from an embeddings row. */
function toEntry(r: Record<string, any>): [string, Entry] {
  return [`${r.item_type}:${r.item_id}`, { itemType: r.item_type as ItemType, itemId: r.item_id as number, unit: normalize(fromBytes(r.vec as Buffer)) }];
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

function buildMatrix(items: Map<string, Entry>, dim: number): NonNullable<CachedWorkspace['matrix']> {
  const entries = [...items.values()].filter((e) => e.unit.length === dim);
  return { entries, dots: new DotMatrix(entries.map((e) => e.unit), dim) };
}

/** Exact top-`limit` by dot product: every row scored (SIMD), then one pass keeping the best few. */
function topK(matrix: NonNullable<CachedWorkspace['matrix']>, q: Float32Array, limit: number): Neighbour[] {
  const scores = matrix.dots.score(q);
  const bestSim: number[] = [];
  const bestRow: number[] = [];
  for (let row = 0; row < scores.length; row++) {
    const dot = scores[row];
    if (bestSim.length === limit && dot <= bestSim[limit - 1]) continue;
    let at = bestSim.length;
    while (at > 0 && bestSim[at - 1] < dot) at--;
    bestSim.splice(at, 0, dot);
    bestRow.splice(at, 0, row);
    if (bestSim.length > limit) {
      bestSim.pop();
      bestRow.pop();
    }
  }
  return bestRow.map((row, i) => ({ itemType: matrix.entries[row].itemType, itemId: matrix.entries[row].itemId, similarity: bestSim[i] }));
}

/** Vector to float32 bytes and back (the portable storage format). */
export function toBytes(vec: number[]): Buffer {
  return Buffer.from(Float32Array.from(vec).buffer);
}
export function fromBytes(bytes: Buffer): Float32Array {
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

/**
 * Stores vectors and finds nearest neighbours: with pgvector (HNSW-indexed `embedding` column)
 * where the database has it, else from the portable `vec` column (float32 bytes) with exact cosine
 * ranking in process (a dot product over one contiguous matrix of unit vectors), over a
 * per-workspace cache revalidated against the workspace's EmbeddingStamp on every query, so
 * several processes never serve stale vectors.
 */
export class VectorIndex {
  private readonly cache = new Map<string, CachedWorkspace>();

  private constructor(readonly pgvector: boolean) {}

  /** Detects whether the search migration could add the pgvector column (`portable` ignores it). */
  static async open(em: EntityManager, options: { portable?: boolean } = {}): Promise<VectorIndex> {
    if (options.portable) return new VectorIndex(false);
    const rows = await sql(em, `select 1 from information_schema.columns where table_name = 'embeddings' and column_name = 'embedding'`);
    return new VectorIndex(rows.length > 0);
  }

  /** Stores an item's vector; call inside a transaction (the stamp row stays locked until commit). */
  async store(em: EntityManager, workspaceId: string, itemType: ItemType, itemId: number, model: string, vec: number[]): Promise<void> {
    const [{ revision }] = await sql(em, BUMP(0), [workspaceId]);
    const withVector = this.pgvector && vec.length === 512;
    await sql(
      em,
      `insert into embeddings (item_type, item_id, workspace_id, model, vec, ${withVector ? 'embedding, ' : ''}revision, updated_at)
       values (?, ?, ?, ?, ?, ${withVector ? '?::vector, ' : ''}?, clock_timestamp())
       on conflict (item_type, item_id) do update set model = excluded.model, vec = excluded.vec, ${withVector ? 'embedding = excluded.embedding, ' : ''}revision = excluded.revision, updated_at = excluded.updated_at`,
      [itemType, itemId, workspaceId, model, toBytes(vec), ...(withVector ? [`[${vec.join(',')}]`] : []), revision],
    );
  }

  /** The `limit` nearest items of the given types in a workspace, most similar first. */
  async nearest(em: EntityManager, workspaceId: string, types: ItemType[], queryVector: number[] | Promise<number[]>, model: string, limit: number): Promise<Neighbour[]> {
    const typeList = `{${types.join(',')}}`;
    // The cache revalidation runs while the query vector is still being computed.
    const loading = this.pgvector ? null : this.load(em, workspaceId, types, model);
    loading?.catch(() => undefined);
    const query = await queryVector;
    if (this.pgvector && query.length === 512) {
      const vector = `[${query.join(',')}]`;
      const rows = await sql(
        em,
        `select item_type, item_id, 1 - (embedding <=> ?::vector) as similarity from embeddings
          where workspace_id = ? and item_type = any(?::text[]) and model = ? and embedding is not null
          order by embedding <=> ?::vector limit ?`,
        [vector, workspaceId, typeList, model, vector, limit],
      );
      return rows.map((r) => ({ itemType: r.item_type, itemId: r.item_id, similarity: Number(r.similarity) }));
    }
    const cached = await (loading ?? this.load(em, workspaceId, types, model));
    if (limit <= 0 || !query.length) return [];
    cached.matrix = cached.matrix?.dots.dim === query.length ? cached.matrix : buildMatrix(cached.items, query.length);
    return topK(cached.matrix, normalize(query), limit);
  }

  /**
   * The workspace's vectors, kept in process and revalidated on every call with one primary-key
   * read of the workspace's stamp: unchanged → the cache as is; new or rewritten rows → just those
   * are read (revision above the cached one); a removal since → a full reload.
   */
  private async load(em: EntityManager, workspaceId: string, types: ItemType[], model: string): Promise<CachedWorkspace> {
    const typeList = `{${types.join(',')}}`;
    const [stamp] = await sql(em, 'select revision::text, removals::text from embedding_stamps where workspace_id = ?', [workspaceId]);
    const revision: string = stamp?.revision ?? '0';
    const removals: string = stamp?.removals ?? '0';
    const key = `${workspaceId}|${typeList}|${model}`;
    const cached = this.cache.get(key);
    if (cached && cached.revision === revision && cached.removals === removals) return cached;
    const incremental = cached !== undefined && cached.removals === removals;
    // Incremental reads take every model, so a row re-embedded with another model leaves this set.
    const rows = incremental
      ? await sql(em, 'select item_type, item_id, model, vec from embeddings where workspace_id = ? and revision > ? and item_type = any(?::text[])', [workspaceId, cached.revision, typeList])
      : await sql(em, 'select item_type, item_id, model, vec from embeddings where workspace_id = ? and item_type = any(?::text[]) and model = ?', [workspaceId, typeList, model]);
    const items = incremental ? cached.items : new Map<string, Entry>();
    for (const r of rows) {
      if (r.model === model) items.set(...toEntry(r));
      else items.delete(`${r.item_type}:${r.item_id}`);
    }
    if (this.cache.size >= 200 && !cached) this.cache.delete(this.cache.keys().next().value!);
    const fresh: CachedWorkspace = { revision, removals, items, matrix: null };
    this.cache.set(key, fresh);
    return fresh;
  }

  /** True while items of these types in the workspace still wait for their embedding. */
  async pending(em: EntityManager, workspaceId: string, types: ItemType[]): Promise<boolean> {
    const rows = await sql(em, 'select 1 from embedding_queue where workspace_id = ? and item_type = any(?::text[]) limit 1', [workspaceId, `{${types.join(',')}}`]);
    return rows.length > 0;
  }
}
