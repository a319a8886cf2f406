import { Arg, Args, ArgsType, Ctx, Field, Float, ID, InputType, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { requireAdmin } from '../auth/authorize.js';
import type { RequestContext } from '../context.js';
import { ContentGapGroup, ContentGapReport } from '../entities/ContentGap.js';
import { NotFoundError } from '../errors.js';
import { isUuid } from '../ids.js';
import * as gaps from '../services/contentGaps.js';
import * as searchService from '../services/search.js';

@ObjectType({ description: 'A search hit: an article or a published changelog entry.' })
class SearchHit {
  @Field({ description: 'article | changelog' }) type!: string;
  @Field(() => String, { nullable: true, description: 'Article slug (articles).' }) slug!: string | null;
  @Field(() => Int, { nullable: true, description: 'Changelog entry id (changelog entries).' }) id!: number | null;
  @Field() title!: string;
  @Field({ description: 'Excerpt with matching words wrapped in <mark>…</mark>.' }) snippet!: string;
  @Field(() => Float, { description: 'Full text: ts_rank (title weighs above body); semantic: cosine similarity.' }) score!: number;
  @Field({ description: 'Same-origin URL of the item in this API.' }) url!: string;
}

@ObjectType()
class SearchPage {
  @Field(() => [SearchHit]) items!: SearchHit[];
  @Field(() => String, { nullable: true }) nextCursor!: string | null;
  @Field({ description: 'fulltext | semantic: the ranking actually used.' }) ranking!: string;
  @Field(() => String, { nullable: true, description: 'Why semantic=true fell back to full text: embedder_unavailable | embeddings_pending | below_similarity_floor.' })
  fallbackReason!: string | null;
}

@ArgsType()
class SearchArgs {
  @Field() workspace!: string;
  @Field({ description: 'Web-search syntax: words, "quoted phrases", -excluded, or.' }) q!: string;
  @Field(() => Boolean, { nullable: true, description: 'Rank by embedding similarity (falls back to full text).' }) semantic?: boolean | null;
  @Field(() => Int, { nullable: true }) limit?: number | null;
  @Field(() => String, { nullable: true }) cursor?: string | null;
}

@InputType()
class ContentGapInput {
  @Field(() => String, { nullable: true, description: 'The question as asked; only the first 256 characters are kept.' }) question?: string | null;
  @Field(() => String, { nullable: true, description: 'Slug of the article that came closest.' }) slug?: string | null;
}

@ObjectType()
class ContentGapAccepted {
  @Field() message!: string;
  @Field() reported!: boolean;
}

/** Workspace search (10), content-gap reports (21), and the content-gap views of dashboards. */
@Resolver()
export class SearchResolver {
  @Query(() => SearchPage)
  search(@Ctx() ctx: RequestContext, @Args(() => SearchArgs) args: SearchArgs) {
    return searchService.search(ctx, args.workspace, args);
  }

  @Mutation(() => ContentGapAccepted, { description: 'Reports a question the docs did not answer.' })
  reportContentGap(@Ctx() ctx: RequestContext, @Arg('workspace') workspace: string, @Arg('input', () => ContentGapInput) input: ContentGapInput) {
    return gaps.reportContentGap(ctx, workspace, input);
  }

  @Query(() => [ContentGapReport], { description: 'Content-gap reports of a workspace, newest first (admin token).' })
  contentGapReports(@Ctx() ctx: RequestContext, @Arg('workspaceId', () => ID) workspaceId: string) {
    requireAdmin(ctx);
    if (!isUuid(workspaceId)) throw new NotFoundError('Workspace');
    return gaps.listReports(ctx.em, workspaceId);
  }

  @Query(() => [ContentGapGroup], { description: 'Reports and zero-result searches grouped by similar question, most frequent first (admin token).' })
  contentGapGroups(@Ctx() ctx: RequestContext, @Arg('workspaceId', () => ID) workspaceId: string, @Arg('includeResolved', { defaultValue: false }) includeResolved: boolean) {
    requireAdmin(ctx);
    if (!isUuid(workspaceId)) throw new NotFoundError('Workspace');
    return gaps.listGroups(ctx.em, workspaceId, includeResolved);
  }

  @Mutation(() => ContentGapGroup, { description: 'Marks a content-gap group resolved (admin token).' })
  resolveContentGapGroup(@Ctx() ctx: RequestContext, @Arg('id', () => Int) id: number) {
    requireAdmin(ctx);
    return gaps.resolveGroup(ctx, id);
  }
}
