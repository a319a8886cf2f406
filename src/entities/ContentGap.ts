import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/core';
import { CallerCount } from '../types/activity.js';
import { Field, ID, Int, ObjectType } from 'type-graphql';

@ObjectType({ description: 'A question the docs did not answer, as reported by an agent (scrubbed).' })
@Entity({ tableName: 'content_gap_reports' })
@Index({ name: 'content_gap_reports_workspace_idx', properties: ['workspaceId', 'createdAt'] })
export class ContentGapReport {
  @Field(() => ID)
  @PrimaryKey({ autoincrement: true })
  id!: number;

  @Property({ type: 'uuid' })
  workspaceId!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  question: string | null = null;

  @Field(() => String, { nullable: true, description: 'Slug of the closest article, as reported.' })
  @Property({ type: 'text', nullable: true })
  slug: string | null = null;

  @Field({ description: 'false when the reported slug names no article of the workspace (kept, flagged).' })
  @Property({ type: 'boolean' })
  slugKnown: boolean = false;

  @Field({ description: 'true when e-mail addresses, secrets or phone numbers were replaced by placeholders.' })
  @Property({ type: 'boolean' })
  redacted: boolean = false;

  @Property({ type: 'uuid', nullable: true })
  agentKeyId: string | null = null;

  @Field(() => Int, { nullable: true })
  @Property({ type: 'integer', nullable: true })
  groupId: number | null = null;

  @Field(() => Date)
  @Property({ columnType: 'timestamptz', type: 'datetime' })
  createdAt: Date = new Date();
}

@ObjectType({ description: 'Similar unanswered questions (reports and zero-result searches) grouped by embedding.' })
@Entity({ tableName: 'content_gap_groups' })
@Index({ name: 'content_gap_groups_workspace_idx', properties: ['workspaceId'] })
export class ContentGapGroup {
  @Field(() => Int)
  @PrimaryKey({ autoincrement: true })
  id!: number;

  @Property({ type: 'uuid' })
  workspaceId!: string;

  @Field({ description: 'The first question of the group.' })
  @Property({ type: 'text' })
  label!: string;

  @Property({ columnType: 'real[]', type: 'unknown' })
  centroid!: number[];

  @Field(() => Int)
  @Property({ type: 'integer' })
  reportCount: number = 0;

  @Field(() => Int)
  @Property({ type: 'integer' })
  searchCount: number = 0;

  @Field(() => Date)
  @Property({ columnType: 'timestamptz', type: 'datetime' })
  firstSeen: Date = new Date();

  @Field(() => Date)
  @Property({ columnType: 'timestamptz', type: 'datetime' })
  lastSeen: Date = new Date();

  @Field(() => String, { nullable: true, description: 'Slug of the most similar article, if any is close.' })
  @Property({ type: 'text', nullable: true })
  nearestArticleSlug: string | null = null;

  @Field(() => Date, { nullable: true })
  @Property({ columnType: 'timestamptz', type: 'datetime', nullable: true })
  resolvedAt: Date | null = null;

  /** Filled in by the listing service (not a column). */
  @Field({ description: 'open → proposed (a proposal made from the group waits for review) → resolved' })
  state: 'open' | 'proposed' | 'resolved' = 'open';

  /** Filled in by the listing service (not a column). */
  @Field(() => Int, { nullable: true, description: 'The latest proposal made from the group (see proposals).' })
  proposalId: number | null = null;

  /** Filled in by the listing service (not a column). */
  @Field(() => [CallerCount], { description: 'Its questions by door and kind of caller, most first: who asks, agents or people.' })
  askedBy: CallerCount[] = [];
}
