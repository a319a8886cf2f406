import { ArrayType, Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { Field, Int, ObjectType } from 'type-graphql';
import { Workspace } from './Workspace.js';

export const CHANGELOG_STATUSES = ['draft', 'published'] as const;
export type ChangelogStatus = (typeof CHANGELOG_STATUSES)[number];

const CHANGELOG_SEARCH_EXPRESSION =
  "((setweight(to_tsvector('english'::regconfig, title), 'A'::\"char\") || setweight(to_tsvector('english'::regconfig, markdown), 'B'::\"char\")))";

@ObjectType({ description: 'A changelog entry of a workspace.' })
@Entity({ tableName: 'changelog_entries' })
@Index({
  name: 'changelog_entries_feed_idx',
  expression:
    'create index "changelog_entries_feed_idx" on "changelog_entries" ("workspace_id", (coalesce("published_at", "created_at")) desc, "id" desc)',
})
@Index({
  name: 'changelog_entries_search_idx',
  expression: 'create index "changelog_entries_search_idx" on "changelog_entries" using gin ("search")',
})
@Index({
  name: 'changelog_entries_title_search_idx',
  expression: `create index "changelog_entries_title_search_idx" on "changelog_entries" using gin (to_tsvector('english'::regconfig, title))`,
})
export class ChangelogEntry {
  @Field(() => Int)
  @PrimaryKey({ autoincrement: true })
  id!: number;

  @ManyToOne(() => Workspace, { fieldName: 'workspace_id', deleteRule: 'cascade' })
  workspace!: Workspace;

  @Field({ description: 'Name of the agent key that created the entry.' })
  @Property({ type: 'text' })
  author!: string;

  @Field()
  @Property({ type: 'text' })
  title!: string;

  @Field()
  @Property({ type: 'text' })
  markdown!: string;

  @Field(() => String, { description: 'draft | published' })
  @Property({ type: 'text' })
  status: ChangelogStatus = 'draft';

  @Field(() => [String])
  @Property({ type: ArrayType, columnType: 'text[]' })
  tags: string[] = [];

  @Field(() => Date)
  @Property({ columnType: 'timestamptz', type: 'datetime' })
  createdAt: Date = new Date();

  @Field(() => Date)
  @Property({ columnType: 'timestamptz', type: 'datetime', onUpdate: () => new Date() })
  updatedAt: Date = new Date();

  @Field(() => Date, { nullable: true })
  @Property({ columnType: 'timestamptz', type: 'datetime', nullable: true })
  publishedAt: Date | null = null;

  /** Full-text document maintained by the database: title (A) above markdown (B). */
  @Property({ columnType: 'tsvector', generated: `${CHANGELOG_SEARCH_EXPRESSION} stored`, lazy: true, hidden: true, nullable: true })
  search?: unknown;

  /** The transaction that last changed what search holds of the row (see the ranked_search migration). */
  @Property({ columnType: 'xid8', type: 'text', persist: false, lazy: true, hidden: true })
  searchXid?: string;
}
