import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/core';

/** Every workspace search: zero-result ones feed the content-gap view. */
@Entity({ tableName: 'search_log' })
@Index({ name: 'search_log_workspace_idx', properties: ['workspaceId', 'createdAt'] })
export class SearchLog {
  @PrimaryKey({ autoincrement: true })
  id!: number;

  @Property({ type: 'uuid' })
  workspaceId!: string;

  @Property({ type: 'uuid', nullable: true })
  agentKeyId: string | null = null;

  @Property({ type: 'text' })
  query!: string;

  @Property({ type: 'integer' })
  resultCount!: number;

  @Property({ type: 'text' })
  ranking!: string;

  @Property({ type: 'integer' })
  durationMs!: number;

  @Property({ type: 'integer', nullable: true })
  groupId: number | null = null;

  @Property({ columnType: 'timestamptz', type: 'datetime' })
  createdAt: Date = new Date();
}
