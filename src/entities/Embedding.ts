import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/core';

/**
 * One passage of an item's embedding (see src/search/passages.ts; a question has one). `vec` (float32 bytes) works on any PostgreSQL; where pgvector exists a migration
 * adds `embedding vector(512)` with an HNSW index, kept in step by the worker.
 */
@Entity({ tableName: 'embeddings' })
@Index({ name: 'embeddings_workspace_idx', properties: ['workspaceId', 'itemType'] })
@Index({ name: 'embeddings_workspace_revision_idx', properties: ['workspaceId', 'revision'] })
export class Embedding {
  @PrimaryKey({ type: 'text' })
  itemType!: string;

  @PrimaryKey({ type: 'integer' })
  itemId!: number;

  /** The passage's place in the item, from 0. */
  @PrimaryKey({ type: 'integer' })
  passage: number = 0;

  /** The Markdown the passage covers (the snippet of a hit on it); null for a question. */
  @Property({ type: 'text', nullable: true })
  passageText: string | null = null;

  @Property({ type: 'uuid' })
  workspaceId!: string;

  @Property({ type: 'text' })
  model!: string;

  /** float32 little-endian bytes: read back with a copy, not a text parse of 512 numbers. */
  @Property({ type: 'blob' })
  vec!: Buffer;

  @Property({ columnType: 'timestamptz', type: 'datetime' })
  updatedAt: Date = new Date();

  /** The workspace's embedding revision (EmbeddingStamp) at this row's last write. */
  @Property({ type: 'bigint', defaultRaw: '0' })
  revision: string = '0';
}

/**
 * Per workspace, a counter bumped (under this row's lock, so in commit order) by every write of an
 * embedding, and a count of removals: a process's in-memory vector cache revalidates with one
 * primary-key read, reads only rows newer than its revision, and reloads fully after a removal.
 */
@Entity({ tableName: 'embedding_stamps' })
export class EmbeddingStamp {
  @PrimaryKey({ type: 'uuid' })
  workspaceId!: string;

  @Property({ type: 'bigint', defaultRaw: '0' })
  revision: string = '0';

  @Property({ type: 'bigint', defaultRaw: '0' })
  removals: string = '0';

  /** The workspace's memory notes are embedded (turned on by its first semantic or hybrid memory search). */
  @Property({ type: 'boolean', defaultRaw: 'false' })
  notesEmbedded: boolean = false;
}
