import { Field, Float, Int, ObjectType } from 'type-graphql';
import { PageOf } from './page.js';

export type Ranking = 'fulltext' | 'semantic';
export type FallbackReason = 'embedder_unavailable' | 'embeddings_pending' | 'below_similarity_floor';

@ObjectType({ description: 'A search hit: an article or a published changelog entry.' })
export class SearchHit {
  @Field(() => String, { description: 'article | changelog' }) type!: 'article' | 'changelog';
  @Field(() => String, { nullable: true, description: 'Article slug (articles).' }) slug!: string | null;
  @Field(() => Int, { nullable: true, description: 'Changelog entry id (changelog entries).' }) id!: number | null;
  @Field() title!: string;
  @Field({ description: 'The stored text escaped as HTML, matching words in <mark>…</mark> (no other markup).' }) snippet!: string;
  @Field(() => Float, { description: 'Full text: ts_rank (title weighs above body); semantic: cosine similarity.' }) score!: number;
  @Field({ description: 'Same-origin URL of the item in this API.' }) url!: string;
}

@ObjectType()
export class SearchPage extends PageOf(SearchHit) {
  @Field(() => String, { description: 'fulltext | semantic: the ranking actually used.' }) ranking!: Ranking;
  @Field(() => String, {
    nullable: true,
    description: 'Why semantic=true fell back to full text: embedder_unavailable | embeddings_pending | below_similarity_floor.',
  })
  fallbackReason!: FallbackReason | null;
}
