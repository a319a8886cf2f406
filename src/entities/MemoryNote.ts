import { ArrayType, Entity, Index, ManyToOne, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Field, Float, Int, ObjectType } from 'type-graphql';
import { NOTE_BODY_BYTES } from '../contract/rules.js';
import { Workspace } from './Workspace.js';

/** Full-text document: path segments and tags weigh more than the body (A > B > C). */
const MEMORY_SEARCH_EXPRESSION =
  "(((setweight(to_tsvector('english'::regconfig, translate(path, '/._-'::text, '    '::text)), 'A'::\"char\") || setweight(to_tsvector('english'::regconfig, wks_array_text(tags)), 'B'::\"char\")) || setweight(to_tsvector('english'::regconfig, body), 'C'::\"char\")))";

@ObjectType({ description: 'A note whose body is very close to the one just written.' })
export class SimilarNote {
  @Field() path!: string;
  @Field(() => Float, { description: 'Trigram similarity of the two bodies, 0–1 (3 decimals).' }) score!: number;
}

@ObjectType({ description: 'A shared workspace memory note: Markdown addressed by a file-like path.' })
@Entity({ tableName: 'memory_notes' })
@Unique({ name: 'memory_notes_workspace_path_unique', properties: ['workspace', 'path'] })
@Index({ name: 'memory_notes_search_idx', expression: 'create index "memory_notes_search_idx" on "memory_notes" using gin ("search")' })
@Index({
  name: 'memory_notes_links_idx',
  expression: 'create index "memory_notes_links_idx" on "memory_notes" using gin ("links") where "links" <> \'{}\'',
})
export class MemoryNote {
  @Field(() => Int)
  @PrimaryKey({ autoincrement: true })
  id!: number;

  @ManyToOne(() => Workspace, { fieldName: 'workspace_id', deleteRule: 'cascade' })
  workspace!: Workspace;

  @Field({ description: 'Normalised path: "/"-separated segments, case-sensitive.' })
  @Property({ type: 'text', columnType: 'text collate "C"' })
  path!: string;

  @Field({ description: 'A short token saying what the note is (note, decision, runbook, …).' })
  @Property({ type: 'text' })
  kind!: string;

  @Field({ description: `Markdown, at most ${NOTE_BODY_BYTES / 1024} KiB in UTF-8.` })
  @Property({ type: 'text' })
  body!: string;

  @Field(() => [String], { description: 'Paths (or URLs) this note points to.' })
  @Property({ type: ArrayType, columnType: 'text[]' })
  links: string[] = [];

  @Field(() => [String])
  @Property({ type: ArrayType, columnType: 'text[]' })
  tags: string[] = [];

  @Field(() => Int, { description: 'Raised by one with every change; the ETag is "v<version>". Never reused for a path.' })
  @Property({ type: 'integer', default: 1 })
  version: number = 1;

  /** The agent key whose write made this version (null before versions existed); never exposed here. */
  @Property({ type: 'uuid', nullable: true, hidden: true })
  writtenByKeyId?: string | null;

  @Field(() => Date)
  @Property({ columnType: 'timestamptz', type: 'datetime' })
  createdAt: Date = new Date();

  @Field(() => Date)
  @Property({ columnType: 'timestamptz', type: 'datetime' })
  updatedAt: Date = new Date();

  @Field(() => Date)
  @Property({ columnType: 'timestamptz', type: 'datetime' })
  accessedAt: Date = new Date();

  /**
   * Only on the answer to a PUT that created the note, and only when notes of the workspace have
   * a very similar body (see NEAR_THRESHOLD): the agent may merge instead of keeping both.
   */
  @Field(() => [SimilarNote], {
    nullable: true,
    description:
      'On a PUT that created the note: existing notes whose body is at least 0.6 trigram-similar (pg_trgm similarity), closest first, at most 5; ' +
      'absent otherwise.',
  })
  similar?: SimilarNote[];

  /** Maintained by the database; never loaded. */
  @Property({ columnType: 'tsvector', generated: `${MEMORY_SEARCH_EXPRESSION} stored`, lazy: true, hidden: true, nullable: true })
  search?: unknown;

  /** The transaction that last changed what search holds of the row (see the ranked_search migration). */
  @Property({ columnType: 'xid8', type: 'text', persist: false, lazy: true, hidden: true })
  searchXid?: string;
}
