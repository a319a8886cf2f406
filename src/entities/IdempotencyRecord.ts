import { Entity, PrimaryKey, Property, Unique } from '@mikro-orm/core';

/** Idempotency-Key records: a mutating REST call runs at most once per key, agent key and workspace for 24 h. */
@Entity({ tableName: 'idempotency_keys' })
@Unique({ name: 'idempotency_keys_unique', properties: ['agentKeyId', 'workspace', 'idempotencyKey'] })
export class IdempotencyRecord {
  @PrimaryKey({ autoincrement: true })
  id!: number;

  @Property({ type: 'uuid' })
  agentKeyId!: string;

  @Property({ type: 'text' })
  workspace!: string;

  @Property({ type: 'text' })
  idempotencyKey!: string;

  @Property({ type: 'text' })
  requestHash!: string;

  /** in_progress | done */
  @Property({ type: 'text' })
  state!: string;

  @Property({ type: 'integer', nullable: true })
  status: number | null = null;

  @Property({ type: 'json', nullable: true })
  response: unknown = null;

  @Property({ columnType: 'timestamptz', type: 'datetime' })
  createdAt: Date = new Date();
}
