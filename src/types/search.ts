import { Field, Float, Int, ObjectType, registerEnumType, type ClassType } from 'type-graphql';
import { DocumentResult } from './documents.js';
import { PageOf } from './page.js';

/** The ranking that answered a search. */
export type Ranking = 'fulltext' | 'semantic' | 'hybrid';
export type SearchMode = Ranking;
export type FallbackReason = 'embedder_unavailable' | 'embeddings_pending' | 'below_similarity_floor';

/** The `mode` argument of workspace and memory search. */
export enum SearchModeValue {
  fulltext = 'fulltext',
  semantic = 'semantic',
  hybrid = 'hybrid',
}
registerEnumType(SearchModeValue, { name: 'SearchMode', description: 'How search ranks: full text, embeddings, or both fused.' });

@ObjectType({ description: "One term's part in a hit's full-text score." })
export class TermExplain {
  @Field({ description: 'The lexeme (the stemmed word) as the index holds it.' }) term!: string;
  @Field(() => Float, { description: 'Its inverse document frequency among the items the caller may read.' }) idf!: number;
  @Field(() => Float, { description: 'Its part from the title (a note: the path).' }) title!: number;
  @Field(() => Float, { description: 'Its part from headings (a note: the tags).' }) headings!: number;
  @Field(() => Float, { description: 'Its part from the body.' }) body!: number;
}

@ObjectType({ description: "A hit's full-text (BM25F) score, per field and per term." })
export class FullTextExplain {
  @Field(() => Int, { description: 'Its rank in the full-text ranking (1 is best).' }) rank!: number;
  @Field(() => Float, { description: 'Its BM25F score: the sum of the fields below.' }) score!: number;
  @Field(() => Float) title!: number;
  @Field(() => Float) headings!: number;
  @Field(() => Float) body!: number;
  @Field(() => [TermExplain], { description: "The question's terms the item holds." }) terms!: TermExplain[];
}

@ObjectType({ description: "A hit's place in the embeddings' ranking." })
export class SemanticExplain {
  @Field(() => Int, { description: 'Its rank by similarity (1 is best).' }) rank!: number;
  @Field(() => Float, { description: 'The mean cosine similarity of its best passages to the question.' }) similarity!: number;
}

@ObjectType({ description: 'Why a hit ranks where it does (sent with explain=true).' })
export class SearchExplain {
  @Field(() => FullTextExplain, {
    nullable: true,
    description: 'Null when full text did not rank it (semantic search, or no word in common).',
  })
  fullText!: FullTextExplain | null;
  @Field(() => SemanticExplain, { nullable: true, description: 'Null when the embeddings did not rank it.' })
  semantic!: SemanticExplain | null;
  @Field(() => Int, { nullable: true, description: 'Its rank in the fused ranking (hybrid search).' }) fusedRank!: number | null;
}

@ObjectType({ description: 'A search hit: an article or a published changelog entry.' })
export class SearchHit {
  @Field(() => String, { description: 'article | changelog' }) type!: 'article' | 'changelog';
  @Field(() => String, { nullable: true, description: 'Article slug (articles).' }) slug!: string | null;
  @Field(() => Int, { nullable: true, description: 'Changelog entry id (changelog entries).' }) id!: number | null;
  @Field() title!: string;
  @Field({ description: 'The stored text escaped as HTML, matching words in <mark>…</mark> (no other markup).' }) snippet!: string;
  @Field(() => Float, {
    description:
      'Full text: BM25F (title weighs above headings above body); semantic: the mean cosine similarity of its best passages; hybrid: the fused score.',
  })
  score!: number;
  @Field({ description: 'Same-origin URL of the item in this API.' }) url!: string;
  @Field(() => SearchExplain, { nullable: true, description: 'Why it ranks here: only when the search asked for explain.' })
  explain?: SearchExplain | null;
}

/** A page of a search that can rank several ways: its hits, and which ranking answered and why. */
export function RankedPageOf<T extends object>(hit: ClassType<T>) {
  @ObjectType()
  abstract class RankedPage extends PageOf(hit) {
    @Field(() => String, {
      description: 'fulltext | semantic | hybrid: the ranking actually used.',
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
      'When nothing was found, or a word of the query is in no item the caller may read: the query with words the workspace does not use ' +
      'replaced by close ones it does (each finds something; at most 3).',
  })
  suggestions?: string[];
  @Field(() => [DocumentResult], {
    description:
      'The hits as connectors list them (ChatGPT, deep research): `{ id, title, url }`, the id one `fetchDocument` takes, the url the console page.',
  })
  results?: DocumentResult[];
}
