import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/core';
import { Field, ID, ObjectType } from 'type-graphql';

@ObjectType({ description: 'One successful mutating call, written in the same transaction as the change.' })
@Entity({ tableName: 'events' })
@Index({ name: 'events_workspace_idx', properties: ['workspaceId', 'createdAt'] })
@Index({ name: 'events_xid_idx', expression: 'create index "events_xid_idx" on "events" ("xid", "id")' })
export class AuditEvent {
  @Field(() => ID)
  @PrimaryKey({ type: 'bigint', autoincrement: true })
  id!: string;

  @Field(() => ID, { nullable: true })
  @Property({ type: 'uuid', nullable: true })
  organizationId: string | null = null;

  @Field(() => ID, { nullable: true })
  @Property({ type: 'uuid', nullable: true })
  workspaceId: string | null = null;

  @Field({ description: 'agent | admin' })
  @Property({ type: 'text' })
  actor!: string;

  @Field(() => ID, { nullable: true })
  @Property({ type: 'uuid', nullable: true })
  agentKeyId: string | null = null;

  @Field(() => ID, { nullable: true })
  @Property({ type: 'uuid', nullable: true })
  memberId: string | null = null;

  @Field()
  @Property({ type: 'text' })
  action!: string;

  @Field()
  @Property({ type: 'text' })
  targetType!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  targetId: string | null = null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  requestId: string | null = null;

  @Field(() => Date)
  @Property({ columnType: 'timestamptz', type: 'datetime' })
  createdAt: Date = new Date();

  /** The webhook message id (`webhook-id`), made by the database. */
  @Property({ type: 'text', nullable: true, persist: false, lazy: true, hidden: true })
  messageId?: string | null;

  /** What a webhook's `data` carries beyond the event's own columns (null: nothing more). */
  @Property({ type: 'json', nullable: true, persist: false, lazy: true, hidden: true })
  payload?: Record<string, unknown> | null;

  /** The writing transaction (xid8): the dispatcher reads events in this order. */
  @Property({ columnType: 'xid8', type: 'text', persist: false, lazy: true, hidden: true })
  xid?: string;
}
