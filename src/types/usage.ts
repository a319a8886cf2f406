import { Field, Float, ID, Int, ObjectType } from 'type-graphql';

@ObjectType({ description: 'How many articles of a workspace have one status.' })
export class ArticleStatusCount {
  @Field({ description: 'DRAFT | STABLE | DEPRECATED | ARCHIVED' }) status!: string;
  @Field(() => Int) count!: number;
}

@ObjectType({ description: 'Searches made in a workspace on one day (UTC).' })
export class DailySearchCount {
  @Field({ description: 'The day, YYYY-MM-DD (UTC).' }) day!: string;
  @Field(() => Int) count!: number;
}

@ObjectType({ description: 'What a workspace uses: memory notes against its quota, uploads, articles and searches.' })
export class WorkspaceUsage {
  @Field(() => ID) workspaceId!: string;
  @Field({ description: "The organization's plan: free | pro | enterprise" }) plan!: string;
  @Field(() => Int, { description: 'Memory notes counted against the quota.' }) notesUsed!: number;
  @Field(() => Int, { nullable: true, description: "The plan's memory note quota; null: unlimited." }) notesQuota!: number | null;
  @Field(() => Int) uploadCount!: number;
  @Field(() => Float, { description: 'Bytes of every upload of the workspace.' }) uploadBytes!: number;
  @Field(() => [ArticleStatusCount], { description: 'Every status, zero included.' }) articlesByStatus!: ArticleStatusCount[];
  @Field(() => [DailySearchCount], { description: 'The last 7 days (UTC), oldest first, today last.' }) searchesPerDay!: DailySearchCount[];
}
