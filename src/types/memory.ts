import { Field, Float, Int, ObjectType } from 'type-graphql';
import { PageOf } from './page.js';

@ObjectType({ description: 'A note in the index: everything but the body.' })
export class MemoryIndexEntry {
  @Field() path!: string;
  @Field() kind!: string;
  @Field(() => [String]) tags!: string[];
  @Field(() => Int, { description: 'Body size in UTF-8 bytes.' }) size!: number;
  @Field(() => Date) updatedAt!: Date;
  @Field(() => Date) accessedAt!: Date;
}

@ObjectType()
export class MemoryIndexPage extends PageOf(MemoryIndexEntry) {}

@ObjectType({ description: "A full-text hit: the note's path and a snippet (the stored text escaped as HTML, matches in <mark>…</mark>)." })
export class MemorySearchHit {
  @Field() path!: string;
  @Field() kind!: string;
  @Field(() => [String]) tags!: string[];
  @Field(() => Float, { description: 'Relevance (higher is better); path and tag matches weigh more than body matches.' }) score!: number;
  @Field() snippet!: string;
  @Field(() => Date) updatedAt!: Date;
}

@ObjectType()
export class MemorySearchPage extends PageOf(MemorySearchHit) {}

@ObjectType()
export class DeletedMemoryNote {
  @Field() path!: string;
  @Field() deleted!: boolean;
}
