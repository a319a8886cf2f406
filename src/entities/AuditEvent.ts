import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/core';
import { GraphQLJSON } from 'graphql-scalars';
import { Field, ID, Int, ObjectType } from 'type-graphql';

@ObjectType({ description: 'One successful mutating call, written in the same transaction as the change.' })
@Entity({ tableName: 'events' })
@Index({ name: 'events_workspace_idx', properties: ['workspaceId', 'createdAt'] })
@Index({ name: 'events_xid_idx', expression: 'create index "events_xid_idx" on "events" ("xid", "id")' })
@Index({
  name: 'events_workspace_xid_idx',
  expression: 'create index "events_workspace_xid_idx" on "events" ("workspace_id", "xid", "id")',
})
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

  @Field({ description: 'agent | member | oauth (a member through an OAuth grant) | admin' })
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

  @Field(() => GraphQLJSON, {
    nullable: true,
    description: 'The resource as REST returns it after the change (a delete: its last state); null for events that carry none.',
  })
  get object(): unknown {
    return this.payload?.object ?? null;
  }

  @Field(() => GraphQLJSON, { nullable: true, description: 'For updates: the fields that changed, with their values before.' })
  get previous(): unknown {
    return this.payload?.previous ?? null;
  }

  @Field({ description: 'Whether text in `object` / `previous` was cut to keep the event within 64 KiB.' })
  get truncated(): boolean {
    return this.payload?.truncated === true;
  }

  @Field(() => Int, {
    nullable: true,
    description: 'The revision the change made (articles and memory notes: the version it wrote; see articleRevision, memoryNoteRevision).',
  })
  get revision(): number | null {
    const version = (this.payload?.object as { version?: unknown } | undefined)?.version;
    return this.action.endsWith('.deleted') || typeof version !== 'number' ? null : version;
  }

  /** The writing transaction (xid8): the dispatcher reads events in this order. */
  @Property({ columnType: 'xid8', type: 'text', persist: false, lazy: true, hidden: true })
  xid?: string;
}
