import { Field, Float, Int, ObjectType, registerEnumType, type ClassType } from 'type-graphql';
import { PageOf } from './page.js';

/** `fulltext_bounded`: full text ranked over the bounded candidate set of a query matching more documents than the cap. */
export type Ranking = 'fulltext' | 'fulltext_bounded' | 'semantic' | 'hybrid';
export type SearchMode = Exclude<Ranking, 'fulltext_bounded'>;
export type FallbackReason = 'embedder_unavailable' | 'embeddings_pending' | 'below_similarity_floor';

/** The `mode` argument of workspace and memory search. */
export enum SearchModeValue {
  fulltext = 'fulltext',
  semantic = 'semantic',
  hybrid = 'hybrid',
}
registerEnumType(SearchModeValue, { name: 'SearchMode', description: 'How search ranks: full text, embeddings, or both fused.' });

@ObjectType({ description: 'A search hit: an article or a published changelog entry.' })
export class SearchHit {
  @Field(() => String, { description: 'article | changelog' }) type!: 'article' | 'changelog';
  @Field(() => String, { nullable: true, description: 'Article slug (articles).' }) slug!: string | null;
  @Field(() => Int, { nullable: true, description: 'Changelog entry id (changelog entries).' }) id!: number | null;
  @Field() title!: string;
  @Field({ description: 'The stored text escaped as HTML, matching words in <mark>…</mark> (no other markup).' }) snippet!: string;
  @Field(() => Float, {
    description: 'Full text: ts_rank (title weighs above body); semantic: cosine similarity; hybrid: the reciprocal-rank-fusion score.',
  })
  score!: number;
  @Field({ description: 'Same-origin URL of the item in this API.' }) url!: string;
}

/** A page of a search that can rank several ways: its hits, and which ranking answered and why. */
export function RankedPageOf<T extends object>(hit: ClassType<T>) {
  @ObjectType()
  abstract class RankedPage extends PageOf(hit) {
    @Field(() => String, {
      description:
        'fulltext | semantic | hybrid: the ranking actually used; fulltext_bounded: full text over a bounded candidate set ' +
        '(titles first, then bodies, up to the cap), for a query matching more documents than the cap (workspace search).',
    })
    ranking!: Ranking;
    @Field(() => String, {
      nullable: true,
      description:
        'Why a semantic or hybrid search fell back to full text: embedder_unavailable | embeddings_pending | below_similarity_floor (semantic only).',
    })
    fallbackReason!: FallbackReason | null;
  }
  return RankedPage;
}

@ObjectType()
export class SearchPage extends RankedPageOf(SearchHit) {
  @Field(() => [String], {
    description:
      'When nothing was found: the query with words the workspace does not use replaced by close ones it does (each finds something; at most 3).',
  })
  suggestions?: string[];
}
