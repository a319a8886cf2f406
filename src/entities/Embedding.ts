import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/core';

/**
 * One item's embedding. `vec` (float32 bytes) works on any PostgreSQL; where pgvector exists a migration
 * adds `embedding vector(512)` with an HNSW index, kept in step by the worker.
 */
@Entity({ tableName: 'embeddings' })
@Index({ name: 'embeddings_workspace_idx', properties: ['workspaceId', 'itemType'] })
export class Embedding {
  @PrimaryKey({ type: 'text' })
  itemType!: string;

  @PrimaryKey({ type: 'integer' })
  itemId!: number;

  @Property({ type: 'uuid' })
  workspaceId!: string;

  @Property({ type: 'text' })
  model!: string;

  /** float32 little-endian bytes: read back with a copy, not a text parse of 512 numbers. */
  @Property({ type: 'blob' })
  vec!: Buffer;

  @Property({ columnType: 'timestamptz', type: 'datetime' })
  updatedAt: Date = new Date();
}
