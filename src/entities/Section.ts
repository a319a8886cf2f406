import { Entity, ManyToOne, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Field, Int, ObjectType } from 'type-graphql';
import { Workspace } from './Workspace.js';

export const VISIBILITIES = ['public', 'restricted'] as const;
export type Visibility = (typeof VISIBILITIES)[number];

@ObjectType({ description: 'A sidebar navigation section.' })
@Entity({ tableName: 'sections' })
@Unique({ name: 'sections_workspace_key_unique', properties: ['workspace', 'key'] })
export class Section {
  @PrimaryKey({ autoincrement: true })
  id!: number;

  @ManyToOne(() => Workspace, { fieldName: 'workspace_id', deleteRule: 'cascade' })
  workspace!: Workspace;

  @Field({ description: 'Slug, unique in the workspace.' })
  @Property({ type: 'text' })
  key!: string;

  @Field()
  @Property({ type: 'text' })
  label!: string;

  @Field(() => String, { description: 'public | restricted' })
  @Property({ type: 'text' })
  visibility: Visibility = 'public';

  @Field(() => Int, { description: 'Sidebar order, 0-based.' })
  @Property({ type: 'integer' })
  position: number = 0;

  /** For sections that collect generated API-reference pages: the OpenAPI tag they collect. */
  @Property({ type: 'text', nullable: true })
  apiTag: string | null = null;

  @Property({ columnType: 'timestamptz', type: 'datetime' })
  createdAt: Date = new Date();

  /** The transaction that last changed the section's visibility (search re-reads it: see the ranked_search migration). */
  @Property({ columnType: 'xid8', type: 'text', persist: false, lazy: true, hidden: true })
  searchXid?: string;

  /** Articles in the section the caller may see, filled in by the service (not a column). */
  @Field(() => Int)
  articleCount!: number;
}
