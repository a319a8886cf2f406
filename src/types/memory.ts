import { Field, Float, Int, InterfaceType, ObjectType } from 'type-graphql';
import { PageOf } from './page.js';
import { RankedPageOf, SearchExplain } from './search.js';

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

@ObjectType({ description: "A search hit: the note's path and a snippet (the stored text escaped as HTML, matches in <mark>…</mark>)." })
export class MemorySearchHit {
  @Field() path!: string;
  @Field() kind!: string;
  @Field(() => [String]) tags!: string[];
  @Field(() => Float, {
    description:
      'Relevance (higher is better): full text is BM25F (path above tags above body); semantic the mean cosine similarity of its best passages; ' +
      'hybrid the fused score.',
  })
  score!: number;
  @Field() snippet!: string;
  @Field(() => Date) updatedAt!: Date;
  @Field(() => SearchExplain, { nullable: true, description: 'Why it ranks here: only when the search asked for explain.' })
  explain?: SearchExplain | null;
}

@ObjectType()
export class MemorySearchPage extends RankedPageOf(MemorySearchHit) {}

@ObjectType()
export class DeletedMemoryNote {
  @Field() path!: string;
  @Field() deleted!: boolean;
}

@InterfaceType({ description: 'The fields every view of a replaced note state has (everything but the body).' })
export abstract class MemoryNoteVersionInfo {
  @Field() path!: string;
  @Field(() => Int, { description: 'The version this state had; its ETag was "v<version>".' }) version!: number;
  @Field() kind!: string;
  @Field(() => [String]) tags!: string[];
  @Field(() => [String]) links!: string[];
  @Field(() => Int, { description: 'Body size in UTF-8 bytes.' }) size!: number;
  @Field(() => String, { nullable: true, description: 'The agent key that wrote this state (null: written before versions existed).' })
  writtenByKeyId!: string | null;
  @Field(() => Date, { description: 'When this state was written.' }) writtenAt!: Date;
  @Field(() => String, { nullable: true, description: 'The agent key whose write or delete replaced it.' }) replacedByKeyId!: string | null;
  @Field(() => Date, { description: 'When it was replaced.' }) replacedAt!: Date;
  @Field({ description: 'Whether a delete removed this state (the note had no later version until it was created again).' })
  deleted!: boolean;
}

@ObjectType({
  implements: MemoryNoteVersionInfo,
  description: 'A state of a note that a later write replaced (or a delete removed), without its body.',
})
export class MemoryNoteRevisionEntry extends MemoryNoteVersionInfo {}

@ObjectType({ implements: MemoryNoteVersionInfo, description: 'A replaced state of a note, with its body.' })
export class MemoryNoteRevision extends MemoryNoteVersionInfo {
  @Field({ description: 'Markdown.' }) body!: string;
}

@ObjectType()
export class MemoryNoteHistoryPage extends PageOf(MemoryNoteRevisionEntry) {}
