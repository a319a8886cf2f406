import { Field, Int, ObjectType } from 'type-graphql';

@ObjectType({ description: "What a fetched document's text is, and how to read the rest of a long one." })
export class FetchMetadata {
  @Field({ description: 'article, note or changelog.' }) type!: string;
  @Field({ description: "The article's slug, the note's path, or the changelog entry's id." }) key!: string;
  @Field(() => Int, { nullable: true, description: 'Its version (articles and notes).' }) version!: number | null;
  @Field(() => String, { nullable: true, description: "An article's status (DRAFT, STABLE, …) or a changelog entry's." }) status!:
    string | null;
  @Field(() => String, { nullable: true, description: "An article's section key, a note's kind." }) section!: string | null;
  @Field(() => Date) updatedAt!: Date;
  @Field(() => Int, { description: 'Where `text` starts, in characters (code points) of the whole text.' }) offset!: number;
  @Field(() => Int, { description: 'Characters (code points) of the whole text.' }) totalChars!: number;
  @Field({ description: 'true when `text` stops before the end.' }) truncated!: boolean;
  @Field(() => Int, { nullable: true, description: 'The offset to fetch next to read on (null at the end).' }) nextOffset!: number | null;
  @Field(() => String, { nullable: true, description: 'How to read on, in words (null at the end).' }) readOn!: string | null;
}

@ObjectType({ description: 'One document by id, in the shape connectors read: id, title, text, url and metadata.' })
export class FetchedDocument {
  @Field({ description: '`article:<slug>`, `note:<path>` or `changelog:<id>`, as search results name it.' }) id!: string;
  @Field() title!: string;
  @Field({ description: 'Its Markdown, from `metadata.offset`, cut at a paragraph when longer than the cap.' }) text!: string;
  @Field({ description: "Its page in the console (absolute: PUBLIC_URL, else the request's origin)." }) url!: string;
  @Field(() => FetchMetadata) metadata!: FetchMetadata;
}

@ObjectType({ description: 'A search hit as connectors list it.' })
export class DocumentResult {
  @Field() id!: string;
  @Field() title!: string;
  @Field() url!: string;
}
