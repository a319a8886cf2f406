import { Field, Float, Int, ObjectType } from 'type-graphql';

@ObjectType({ description: 'A query and how often it was sent.' })
export class QueryCount {
  @Field({ description: 'The query, lower-cased, with e-mail addresses, secrets and phone numbers replaced.' }) query!: string;
  @Field(() => Int) count!: number;
}

@ObjectType({ description: 'Searches by ranking used.' })
export class RankingCounts {
  @Field(() => Int) fulltext!: number;
  @Field(() => Int) semantic!: number;
  @Field(() => Int) hybrid!: number;
}

@ObjectType({ description: "One day (UTC) of a workspace's searches." })
export class SearchDay {
  @Field({ description: 'YYYY-MM-DD (UTC).' }) day!: string;
  @Field(() => Int) searches!: number;
  @Field(() => Int, { description: 'Searches whose first page found nothing.' }) zeroResults!: number;
  @Field(() => Float, { description: 'zeroResults / searches.' }) zeroResultRate!: number;
  @Field(() => RankingCounts) rankings!: RankingCounts;
  @Field(() => Float, { description: 'Median time to answer, in ms.' }) p50Ms!: number;
  @Field(() => Float, { description: '95th percentile time to answer, in ms.' }) p95Ms!: number;
  @Field(() => [QueryCount], { description: 'The most sent queries (at most 10).' }) topQueries!: QueryCount[];
  @Field(() => [QueryCount], { description: 'The most sent queries that found nothing (at most 10).' }) topZeroResultQueries!: QueryCount[];
}
