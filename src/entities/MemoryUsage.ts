import { Entity, PrimaryKey, Property } from '@mikro-orm/core';

/** How many memory notes a workspace holds: the quota counter, updated in each create's transaction. */
@Entity({ tableName: 'memory_usage' })
export class MemoryUsage {
  @PrimaryKey({ type: 'uuid' })
  workspaceId!: string;

  @Property({ type: 'integer' })
  used: number = 0;
}
