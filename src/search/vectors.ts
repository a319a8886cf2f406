import { EventEmitter } from 'node:events';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from '../db/sql.js';
import { cosine } from './embedder.js';

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

/** Drops an item's embedding and pending work (inside the delete's transaction). */
export async function removeEmbedding(em: EntityManager, itemType: ItemType, itemId: number): Promise<void> {
  await sql(em, 'delete from embeddings where item_type = ? and item_id = ?', [itemType, itemId]);
  await sql(em, 'delete from embedding_queue where item_type = ? and item_id = ?', [itemType, itemId]);
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

interface CachedWorkspace {
  count: number;
  maxAt: string | null;
  items: Map<string, { itemType: ItemType; itemId: number; vec: Float32Array }>;
}

/** A cache entry from an embeddings row. */
function toEntry(r: Record<string, any>): [string, { itemType: ItemType; itemId: number; vec: Float32Array }] {
  return [`${r.item_type}:${r.item_id}`, { itemType: r.item_type as ItemType, itemId: r.item_id as number, vec: fromBytes(r.vec as Buffer) }];
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
 * where the database has it, else from the portable `vec real[]` column with exact cosine
 * ranking in process, over a per-workspace cache revalidated by a (count, max updated_at) stamp
 * on every query so several processes never serve stale vectors.
 */
export class VectorIndex {
  private readonly cache = new Map<string, CachedWorkspace>();

  private constructor(readonly pgvector: boolean) {}

  /** Detects whether the search migration could add the pgvector column. */
  static async open(em: EntityManager): Promise<VectorIndex> {
    const rows = await sql(em, `select 1 from information_schema.columns where table_name = 'embeddings' and column_name = 'embedding'`);
    return new VectorIndex(rows.length > 0);
  }

  async store(em: EntityManager, workspaceId: string, itemType: ItemType, itemId: number, model: string, vec: number[]): Promise<void> {
    const literal = toBytes(vec);
    if (this.pgvector && vec.length === 512) {
      await sql(
        em,
        `insert into embeddings (item_type, item_id, workspace_id, model, vec, embedding, updated_at) values (?, ?, ?, ?, ?, ?::vector, clock_timestamp())
         on conflict (item_type, item_id) do update set model = excluded.model, vec = excluded.vec, embedding = excluded.embedding, updated_at = excluded.updated_at`,
        [itemType, itemId, workspaceId, model, literal, `[${vec.join(',')}]`],
      );
    } else {
      await sql(
        em,
        `insert into embeddings (item_type, item_id, workspace_id, model, vec, updated_at) values (?, ?, ?, ?, ?, clock_timestamp())
         on conflict (item_type, item_id) do update set model = excluded.model, vec = excluded.vec, updated_at = excluded.updated_at`,
        [itemType, itemId, workspaceId, model, literal],
      );
    }
  }

  /** The `limit` nearest items of the given types in a workspace, most similar first. */
  async nearest(em: EntityManager, workspaceId: string, types: ItemType[], query: number[], model: string, limit: number): Promise<Neighbour[]> {
    const typeList = `{${types.join(',')}}`;
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
    const items = await this.load(em, workspaceId, types, model);
    const q = Float32Array.from(query);
    return [...items.values()]
      .map((item) => ({ itemType: item.itemType, itemId: item.itemId, similarity: cosine(q, item.vec) }))
      .sort((a, b) => b.similarity - a.similarity)
      .slice(0, limit);
  }

  /**
   * The workspace's vectors, kept in process: revalidated on every call by (count, max updated_at);
   * when only new or changed rows appeared, just those are read; a deletion triggers a full reload.
   */
  private async load(em: EntityManager, workspaceId: string, types: ItemType[], model: string) {
    const typeList = `{${types.join(',')}}`;
    const [stamp] = await sql(em, `select count(*)::int as n, max(updated_at)::text as at from embeddings where workspace_id = ? and item_type = any(?::text[]) and model = ?`, [workspaceId, typeList, model]);
    const key = `${workspaceId}|${typeList}|${model}`;
    const maxAt: string | null = stamp.at ?? null; // full microsecond precision, as text
    let cached = this.cache.get(key);
    if (cached && cached.count === stamp.n && cached.maxAt === maxAt) return cached.items;
    const incremental = Boolean(cached && cached.maxAt && maxAt && cached.count <= stamp.n);
    const rows = await sql(
      em,
      `select item_type, item_id, vec from embeddings where workspace_id = ? and item_type = any(?::text[]) and model = ?${incremental ? ' and updated_at > ?::timestamptz' : ''}`,
      incremental ? [workspaceId, typeList, model, cached!.maxAt] : [workspaceId, typeList, model],
    );
    const items = incremental ? cached!.items : new Map<string, { itemType: ItemType; itemId: number; vec: Float32Array }>();
    for (const r of rows) items.set(...toEntry(r));
    if (items.size !== stamp.n) return this.reload(em, key, workspaceId, typeList, model, stamp.n, maxAt);
    if (this.cache.size > 200 && !this.cache.has(key)) this.cache.delete(this.cache.keys().next().value!);
    cached = { count: stamp.n, maxAt, items };
    this.cache.set(key, cached);
    return items;
  }

  private async reload(em: EntityManager, key: string, workspaceId: string, typeList: string, model: string, count: number, maxAt: string | null) {
    const rows = await sql(em, `select item_type, item_id, vec from embeddings where workspace_id = ? and item_type = any(?::text[]) and model = ?`, [workspaceId, typeList, model]);
    const items = new Map(rows.map(toEntry));
    this.cache.set(key, { count, maxAt, items });
    return items;
  }

  /** True while items of these types in the workspace still wait for their embedding. */
  async pending(em: EntityManager, workspaceId: string, types: ItemType[]): Promise<boolean> {
    const rows = await sql(em, 'select 1 from embedding_queue where workspace_id = ? and item_type = any(?::text[]) limit 1', [workspaceId, `{${types.join(',')}}`]);
    return rows.length > 0;
  }
}
