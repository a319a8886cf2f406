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
  stamp: string;
  items: { itemType: ItemType; itemId: number; vec: Float32Array }[];
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
    const literal = `{${vec.join(',')}}`;
    if (this.pgvector && vec.length === 512) {
      await sql(
        em,
        `insert into embeddings (item_type, item_id, workspace_id, model, vec, embedding, updated_at) values (?, ?, ?, ?, ?::real[], ?::vector, clock_timestamp())
         on conflict (item_type, item_id) do update set model = excluded.model, vec = excluded.vec, embedding = excluded.embedding, updated_at = excluded.updated_at`,
        [itemType, itemId, workspaceId, model, literal, `[${vec.join(',')}]`],
      );
    } else {
      await sql(
        em,
        `insert into embeddings (item_type, item_id, workspace_id, model, vec, updated_at) values (?, ?, ?, ?, ?::real[], clock_timestamp())
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
    return items
      .map((item) => ({ itemType: item.itemType, itemId: item.itemId, similarity: cosine(q, item.vec) }))
      .sort((a, b) => b.similarity - a.similarity)
      .slice(0, limit);
  }

  private async load(em: EntityManager, workspaceId: string, types: ItemType[], model: string) {
    const typeList = `{${types.join(',')}}`;
    const [stampRow] = await sql(em, `select count(*)::int as n, max(updated_at) as at from embeddings where workspace_id = ? and item_type = any(?::text[])`, [workspaceId, typeList]);
    const key = `${workspaceId}|${typeList}|${model}`;
    const stamp = `${stampRow.n}|${stampRow.at ? new Date(stampRow.at).toISOString() : ''}`;
    const cached = this.cache.get(key);
    if (cached && cached.stamp === stamp) return cached.items;
    const rows = await sql(em, `select item_type, item_id, vec from embeddings where workspace_id = ? and item_type = any(?::text[]) and model = ?`, [workspaceId, typeList, model]);
    const items = rows.map((r) => ({ itemType: r.item_type as ItemType, itemId: r.item_id as number, vec: Float32Array.from(r.vec as number[]) }));
    if (this.cache.size > 200) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, { stamp, items });
    return items;
  }

  /** True while items of these types in the workspace still wait for their embedding. */
  async pending(em: EntityManager, workspaceId: string, types: ItemType[]): Promise<boolean> {
    const rows = await sql(em, 'select 1 from embedding_queue where workspace_id = ? and item_type = any(?::text[]) limit 1', [workspaceId, `{${types.join(',')}}`]);
    return rows.length > 0;
  }
}
