import { Entity, PrimaryKey, Property } from '@mikro-orm/core';

/** One fixed rate-limit window of one key (used when several processes share a PostgreSQL). */
@Entity({ tableName: 'rate_limit_counters' })
export class RateLimitCounter {
  @PrimaryKey({ type: 'text' })
  key!: string;

  @PrimaryKey({ columnType: 'timestamptz', type: 'datetime' })
  windowStart!: Date;

  @Property({ type: 'integer' })
  count: number = 0;
}
