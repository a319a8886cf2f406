import { Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { Field, Int, ObjectType } from 'type-graphql';
import { Workspace } from './Workspace.js';

export const PROPOSAL_KINDS = ['edit', 'new'] as const;
export type ProposalKind = (typeof PROPOSAL_KINDS)[number];
export const PROPOSAL_STATUSES = ['open', 'approved', 'rejected', 'returned'] as const;
export type ProposalStatus = (typeof PROPOSAL_STATUSES)[number];

@ObjectType({ description: "An agent's proposed article edit or new draft, for editor review." })
@Entity({ tableName: 'proposals' })
@Index({ name: 'proposals_key_idx', properties: ['workspace', 'agentKeyId', 'id'] })
export class Proposal {
  @Field(() => Int)
  @PrimaryKey({ autoincrement: true })
  id!: number;

  @ManyToOne(() => Workspace, { fieldName: 'workspace_id', deleteRule: 'cascade' })
  workspace!: Workspace;

  @Field(() => String, { description: 'edit (of an existing article) | new (a new draft)' })
  @Property({ type: 'text' })
  kind!: ProposalKind;

  @Field(() => String, {
    description: 'open | approved | rejected | returned (sent back to its proposer with a comment, in `reason`: propose the edit again)',
  })
  @Property({ type: 'text' })
  status: ProposalStatus = 'open';

  @Field(() => String, { nullable: true, description: 'Slug of the edited article (edit), or of the draft created on approval (new).' })
  @Property({ type: 'text', nullable: true })
  articleSlug: string | null = null;

  @Field(() => Int, { nullable: true, description: 'Article version the edit was based on.' })
  @Property({ type: 'integer', nullable: true })
  baseVersion: number | null = null;

  @Field(() => String, { nullable: true, description: 'Section key of a new draft.' })
  @Property({ type: 'text', nullable: true })
  section: string | null = null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  title: string | null = null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  markdown: string | null = null;

  @Field()
  @Property({ type: 'text' })
  summary!: string;

  /** The proposing key; null when the admin token drafted it (review console). */
  @Property({ type: 'uuid', nullable: true })
  agentKeyId: string | null = null;

  @Property({ type: 'uuid', nullable: true })
  memberId: string | null = null;

  @Field(() => String, { nullable: true, description: 'Member id of the reviewer.' })
  @Property({ type: 'uuid', nullable: true })
  reviewedBy: string | null = null;

  @Field(() => Date, { nullable: true })
  @Property({ columnType: 'timestamptz', type: 'datetime', nullable: true })
  reviewedAt: Date | null = null;

  @Field(() => String, { nullable: true, description: "Why it was rejected, or the reviewer's comment when it was returned." })
  @Property({ type: 'text', nullable: true })
  reason: string | null = null;

  @Field(() => Date)
  @Property({ columnType: 'timestamptz', type: 'datetime' })
  createdAt: Date = new Date();

  @Field(() => Int, { nullable: true, description: 'The content-gap group this new draft answers; approving the proposal resolves it.' })
  @Property({ type: 'integer', nullable: true })
  gapGroupId: number | null = null;
}
