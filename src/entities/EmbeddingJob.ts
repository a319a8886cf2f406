import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/core';

/** An item waiting for its embedding; claimed by any process's worker with SKIP LOCKED. */
@Entity({ tableName: 'embedding_queue' })
@Index({ name: 'embedding_queue_workspace_idx', properties: ['workspaceId'] })
export class EmbeddingJob {
  @PrimaryKey({ type: 'text' })
  itemType!: string;

  @PrimaryKey({ type: 'integer' })
  itemId!: number;

  @Property({ type: 'uuid' })
  workspaceId!: string;

  @Property({ columnType: 'timestamptz', type: 'datetime' })
  enqueuedAt: Date = new Date();

  @Property({ columnType: 'timestamptz', type: 'datetime', nullable: true })
  claimedUntil: Date | null = null;

  @Property({ type: 'integer' })
  attempts: number = 0;
}
