import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/core';
import { Field, ID, ObjectType } from 'type-graphql';

@ObjectType({ description: 'One successful mutating call, written in the same transaction as the change.' })
@Entity({ tableName: 'audit_events' })
@Index({ name: 'audit_events_workspace_idx', properties: ['workspaceId', 'createdAt'] })
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
}
