import { Entity, Index, ManyToOne, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Field, Int, ObjectType } from 'type-graphql';
import { Section, type Visibility } from './Section.js';
import { Workspace } from './Workspace.js';

export const ARTICLE_STATUSES = ['DRAFT', 'STABLE', 'DEPRECATED', 'ARCHIVED'] as const;
export type ArticleStatus = (typeof ARTICLE_STATUSES)[number];
/** A generated page's state: generated (sync owns it) | detached (a normal article now). */
export const API_STATES = ['generated', 'detached'] as const;

/** Title (A), the heading lines (B: a copy, their words are in the Markdown too) and the Markdown (D), in PostgreSQL's normal form. */
const ARTICLE_SEARCH_EXPRESSION =
  "((setweight(to_tsvector('english'::regconfig, title), 'A'::\"char\") || setweight(to_tsvector('english'::regconfig, " +
  "regexp_replace(markdown, '^[^#].*$'::text, ''::text, 'gn'::text)), 'B'::\"char\")) || setweight(to_tsvector('english'::regconfig, markdown), 'D'::\"char\"))";

@ObjectType({ description: 'A documentation article, addressed by its slug.' })
@Entity({ tableName: 'articles' })
@Unique({ name: 'articles_workspace_slug_unique', properties: ['workspace', 'slug'] })
@Unique({ name: 'articles_workspace_operation_unique', properties: ['workspace', 'apiOperationKey'] })
@Index({ name: 'articles_section_position_idx', properties: ['section', 'position'] })
@Index({ name: 'articles_search_idx', expression: 'create index "articles_search_idx" on "articles" using gin ("search")' })
// Titles alone: the full-text search's shortcut for one-word queries (see services/search.ts).
@Index({
  name: 'articles_title_search_idx',
  expression: `create index "articles_title_search_idx" on "articles" using gin (to_tsvector('english'::regconfig, title))`,
})
export class Article {
  @PrimaryKey({ autoincrement: true })
  id!: number;

  @ManyToOne(() => Workspace, { fieldName: 'workspace_id', deleteRule: 'cascade' })
  workspace!: Workspace;

  @ManyToOne(() => Section, { fieldName: 'section_id', deleteRule: 'restrict' })
  section!: Section;

  @Field({ description: 'Generated from the title at creation; never changes.' })
  @Property({ type: 'text' })
  slug!: string;

  @Field()
  @Property({ type: 'text' })
  title!: string;

  @Field()
  @Property({ type: 'text' })
  markdown!: string;

  @Field(() => String, { description: 'DRAFT | STABLE | DEPRECATED | ARCHIVED' })
  @Property({ type: 'text' })
  status: ArticleStatus = 'DRAFT';

  @Field(() => String, { description: 'public | restricted' })
  @Property({ type: 'text' })
  visibility: Visibility = 'public';

  @Field(() => Int, { description: 'Order within its section, 0-based.' })
  @Property({ type: 'integer' })
  position: number = 0;

  @Field(() => Int, { description: 'Increments on every change; the ETag is "v<version>".' })
  @Property({ type: 'integer' })
  version: number = 1;

  @Field(() => Date)
  @Property({ columnType: 'timestamptz', type: 'datetime' })
  createdAt: Date = new Date();

  @Field(() => Date)
  @Property({ columnType: 'timestamptz', type: 'datetime' })
  updatedAt: Date = new Date();

  /** Key of the section, filled in by the service that loads the article (not a column). */
  @Field(() => String, { name: 'section', description: 'Key of the section the article is in.' })
  sectionKey!: string;

  /** For pages generated from the attached OpenAPI spec: the operation key (operationId, else "METHOD /path"). */
  @Property({ type: 'text', nullable: true })
  apiOperationKey: string | null = null;

  /** Hash of the operation the page was last generated from (drift detection for detached pages). */
  @Property({ type: 'text', nullable: true })
  apiOperationHash: string | null = null;

  /** generated (sync owns it) | detached (a normal article now); null for ordinary articles. */
  @Property({ type: 'text', nullable: true })
  apiState: (typeof API_STATES)[number] | null = null;

  @Property({ type: 'text', nullable: true })
  apiMethod: string | null = null;

  @Property({ type: 'text', nullable: true })
  apiPath: string | null = null;

  /** Full-text document maintained by the database: title (A), headings (B), Markdown (D). */
  @Property({ columnType: 'tsvector', generated: `${ARTICLE_SEARCH_EXPRESSION} stored`, lazy: true, hidden: true, nullable: true })
  search?: unknown;

  /** The transaction that last changed what search holds of the article (see the ranked_search migration). */
  @Property({ columnType: 'xid8', type: 'text', persist: false, lazy: true, hidden: true })
  searchXid?: string;

  @Field(() => Date, { nullable: true, description: 'First time it became STABLE.' })
  @Property({ columnType: 'timestamptz', type: 'datetime', nullable: true })
  publishedAt: Date | null = null;
}
