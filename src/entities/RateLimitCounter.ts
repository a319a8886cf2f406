import { Entity, PrimaryKey, Property } from '@mikro-orm/core';

/** One fixed rate-limit window of one key (used when several processes share a PostgreSQL). */
@Entity({ tableName: 'rate_limit_counters' })
export class RateLimitCounter {
  @PrimaryKey({ type: 'text' })
  key!: string;

  @PrimaryKey({ columnType: 'timestamptz', type: 'datetime' })
  windowStart!: Date;

  /** When the window ends: old rows are deleted by their own end, whatever window length other processes use. */
  @Property({ columnType: 'timestamptz', type: 'datetime' })
  windowEnd!: Date;

  /** Requests granted in this window, to all processes together (never above the limit). */
  @Property({ type: 'integer' })
  count: number = 0;

  /** What the latest grant added (a process may take several requests at once: a lease). */
  @Property({ type: 'integer' })
  granted: number = 0;
}
