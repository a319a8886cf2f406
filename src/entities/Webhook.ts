import { ArrayType, Entity, Index, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Field, ID, Int, ObjectType } from 'type-graphql';

@ObjectType({ description: 'An outbound webhook subscription (Standard Webhooks signing).' })
@Entity({ tableName: 'webhooks' })
@Index({ name: 'webhooks_org_idx', properties: ['organizationId'] })
export class Webhook {
  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id!: string;

  @Field(() => ID)
  @Property({ type: 'uuid' })
  organizationId!: string;

  @Field(() => ID, { nullable: true, description: "Only this workspace's events; null for the whole organization." })
  @Property({ type: 'uuid', nullable: true })
  workspaceId: string | null = null;

  @Field()
  @Property({ type: 'text' })
  url!: string;

  @Field(() => [String], { nullable: true, description: 'Event types (or "resource.*"); null for every event.' })
  @Property({ type: ArrayType, columnType: 'text[]', nullable: true })
  events: string[] | null = null;

  /** whsec_… ; shown only by createWebhook and rotateWebhookSecret. */
  @Property({ type: 'text' })
  secret!: string;

  @Field()
  @Property({ type: 'boolean' })
  enabled: boolean = true;

  @Field(() => String, { nullable: true, description: 'Why delivery stopped (e.g. the receiver answered 410 Gone).' })
  @Property({ type: 'text', nullable: true })
  disabledReason: string | null = null;

  @Field(() => Date)
  @Property({ columnType: 'timestamptz', type: 'datetime' })
  createdAt: Date = new Date();
}

@ObjectType({ description: 'One event for one subscription, delivered at least once.' })
@Entity({ tableName: 'webhook_deliveries' })
@Unique({ name: 'webhook_deliveries_event_hook_unique', properties: ['eventId', 'webhookId'] })
@Index({ name: 'webhook_deliveries_due_idx', properties: ['status', 'nextAttemptAt'] })
@Index({ name: 'webhook_deliveries_hook_idx', properties: ['webhookId', 'id'] })
export class WebhookDelivery {
  @Field(() => Int)
  @PrimaryKey({ autoincrement: true })
  id!: number;

  @Field({ description: 'The webhook-id header value (msg_…).' })
  @Property({ type: 'text' })
  eventId!: string;

  @Field()
  @Property({ type: 'text' })
  eventType!: string;

  @Field(() => ID)
  @Property({ type: 'uuid' })
  webhookId!: string;

  @Field({ description: 'pending | delivered | failed' })
  @Property({ type: 'text' })
  status: string = 'pending';

  @Field(() => Int)
  @Property({ type: 'integer' })
  attempts: number = 0;

  @Field(() => Date, { nullable: true })
  @Property({ columnType: 'timestamptz', type: 'datetime', nullable: true })
  nextAttemptAt: Date | null = null;

  @Property({ columnType: 'timestamptz', type: 'datetime', nullable: true })
  leaseUntil: Date | null = null;

  @Field(() => Int, { nullable: true })
  @Property({ type: 'integer', nullable: true })
  lastStatusCode: number | null = null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  lastError: string | null = null;

  @Field(() => Date, { nullable: true })
  @Property({ columnType: 'timestamptz', type: 'datetime', nullable: true })
  deliveredAt: Date | null = null;

  @Field(() => Date)
  @Property({ columnType: 'timestamptz', type: 'datetime' })
  createdAt: Date = new Date();
}

@ObjectType({ description: 'One HTTP attempt of a delivery.' })
@Entity({ tableName: 'webhook_attempts' })
@Index({ name: 'webhook_attempts_delivery_idx', properties: ['deliveryId'] })
export class WebhookAttempt {
  @Field(() => Int)
  @PrimaryKey({ autoincrement: true })
  id!: number;

  @Field(() => Int)
  @Property({ type: 'integer' })
  deliveryId!: number;

  @Field(() => Date)
  @Property({ columnType: 'timestamptz', type: 'datetime' })
  attemptedAt: Date = new Date();

  @Field(() => Int, { nullable: true, description: 'HTTP status, or null when no answer came.' })
  @Property({ type: 'integer', nullable: true })
  statusCode: number | null = null;

  @Field(() => Int)
  @Property({ type: 'integer' })
  durationMs!: number;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  error: string | null = null;
}
