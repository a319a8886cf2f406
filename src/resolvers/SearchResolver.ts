import { Arg, Args, ArgsType, Ctx, Field, ID, InputType, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { InputRule } from '../contract/declared.js';
import { Caller, CallerOf, Needs, type Scope } from '../auth/access.js';
import type { RequestContext } from '../context.js';
import { SearchModeValue, SearchPage, type SearchMode } from '../types/search.js';
import { ContentGapGroup, ContentGapReport } from '../entities/ContentGap.js';
import { Proposal } from '../entities/Proposal.js';
import { ContentGapPage, GapDraft } from '../types/contentGaps.js';
import { gapDraft } from '../services/gapDraft.js';
import { fetchDocument, kindOfId } from '../services/documents.js';
import { FetchedDocument } from '../types/documents.js';
import { POLICIES } from '../auth/policies.js';
import { NotFoundError } from '../errors.js';
import { isUuid } from '../ids.js';
import * as gaps from '../services/contentGaps.js';
import * as analytics from '../services/searchAnalytics.js';
import { Audience } from '../types/activity.js';
import { SearchDay } from '../types/searchAnalytics.js';
import * as searchService from '../services/search.js';

@ArgsType()
class SearchArgs {
  @Field() workspace!: string;
  @InputRule('query') @Field({ description: 'Web-search syntax: words, "quoted phrases", -excluded, or.' }) q!: string;
  @Field(() => Boolean, { nullable: true, description: 'Rank by embedding similarity (falls back to full text).' }) semantic?:
    boolean | null;
  @Field(() => SearchModeValue, {
    nullable: true,
    description: 'fulltext (default: BM25F), semantic (as semantic: true), or hybrid: both rankings fused by reciprocal rank.',
  })
  mode?: SearchMode | null;
  @InputRule('searchLimit') @Field(() => Int, { nullable: true }) limit?: number | null;
  @Field(() => String, { nullable: true }) cursor?: string | null;
  @Field(() => Boolean, {
    nullable: true,
    description: 'Give each hit its `explain`: full-text score per field and term, semantic rank, fused rank.',
  })
  explain?: boolean | null;
}

@InputType()
class ContentGapInput {
  @InputRule('question')
  @Field(() => String, { nullable: true, description: 'The question as asked; only the first 256 characters are kept.' })
  question?: string | null;
  @InputRule('reportSlug') @Field(() => String, { nullable: true, description: 'Slug of the article that came closest.' }) slug?:
    string | null;
}

@InputType()
class GapProposalInput {
  @InputRule('title') @Field() title!: string;
  @InputRule('sectionKey') @Field({ description: 'Key of the section of the new draft.' }) section!: string;
  @InputRule('markdown') @Field() markdown!: string;
  @InputRule('summary') @Field({ description: 'What the draft answers, for the reviewer.' }) summary!: string;
}

@ObjectType()
class ContentGapAccepted {
  @Field() message!: string;
  @Field() reported!: boolean;
}

/** Workspace search (10), content-gap reports (21), and the content-gap views of dashboards. */
@Resolver()
export class SearchResolver {
  @Needs(['search.read'])
  @Query(() => SearchPage)
  search(@Ctx() ctx: RequestContext, @CallerOf('workspace') scope: Scope, @Args(() => SearchArgs) args: SearchArgs) {
    return searchService.search(ctx, scope, args);
  }

  @Needs([], { policies: [{ policy: POLICIES.documentRead, fromArgs: (args) => ({ kind: kindOfId(args.id) }) }] })
  @Query(() => FetchedDocument, {
    description:
      'One document by id (`article:<slug>`, `note:<path>`, `changelog:<id>`), in the shape connectors read: id, title, text, url, metadata; a ' +
      'text past the cap (FETCH_MAX_CHARS) is cut at a paragraph and `metadata.nextOffset` says where to read on.',
  })
  fetchDocument(
    @Ctx() ctx: RequestContext,
    @Caller() scope: Scope,
    @InputRule('documentId') @Arg('id', () => String) id: string,
    @InputRule('textOffset') @Arg('offset', () => Int, { nullable: true }) offset?: number | null,
  ) {
    return fetchDocument(ctx, scope, { id, offset });
  }

  @Needs(['content_gap.report'])
  @Mutation(() => ContentGapAccepted, { description: 'Reports a question the docs did not answer.' })
  reportContentGap(@Ctx() ctx: RequestContext, @Caller() scope: Scope, @Arg('input', () => ContentGapInput) input: ContentGapInput) {
    return gaps.reportContentGap(ctx, scope, input);
  }

  @Needs(['article.create'], { adminMayAct: true })
  @Query(() => ContentGapPage, { description: "The workspace's open content-gap groups, most asked first (needs article.create)." })
  contentGaps(
    @Ctx() ctx: RequestContext,
    @Caller() scope: Scope,
    @InputRule('pageLimit') @Arg('limit', () => Int, { nullable: true }) limit?: number | null,
    @Arg('cursor', () => String, { nullable: true }) cursor?: string | null,
  ) {
    return gaps.listOpenGaps(ctx, scope, { limit, cursor });
  }

  @Needs(['article.create', 'memory.read'], { adminMayAct: true })
  @Query(() => GapDraft, {
    description:
      "An open content-gap group's draft: its newest questions, the memory notes that answer them, and a new-article draft quoting those notes " +
      '(needs article.create and memory.read); propose it, edited or not, with proposeFromContentGap.',
  })
  contentGapDraft(@Ctx() ctx: RequestContext, @Caller() scope: Scope, @InputRule('entryId') @Arg('group', () => Int) group: number) {
    return gapDraft(ctx, scope, group);
  }

  @Needs(['article.create', 'proposal.create'], { adminMayAct: true })
  @Mutation(() => Proposal, {
    description: 'Turns an open content-gap group into a new-draft proposal linked to it; approving the proposal resolves the group.',
  })
  proposeFromContentGap(
    @Ctx() ctx: RequestContext,
    @Caller() scope: Scope,
    @InputRule('entryId') @Arg('group', () => Int) group: number,
    @Arg('input', () => GapProposalInput) input: GapProposalInput,
  ) {
    return gaps.proposeFromGap(ctx, scope, group, input);
  }

  @Needs.admin()
  @Query(() => [SearchDay], {
    description:
      "A workspace's searches per day (UTC), newest first: counts, zero-result rate, rankings, p50/p95 time, top queries (admin token).",
  })
  searchAnalytics(
    @Ctx() ctx: RequestContext,
    @InputRule('id') @Arg('workspaceId', () => ID) workspaceId: string,
    @InputRule('analyticsDays') @Arg('days', () => Int, { defaultValue: 7, description: 'How many days back (1–90).' }) days: number,
  ) {
    if (!isUuid(workspaceId)) throw new NotFoundError('Workspace');
    return analytics.searchAnalytics(ctx.db, workspaceId, days);
  }

  @Needs.admin()
  @Query(() => [ContentGapReport], { description: 'Content-gap reports of a workspace, newest first (admin token).' })
  contentGapReports(@Ctx() ctx: RequestContext, @InputRule('id') @Arg('workspaceId', () => ID) workspaceId: string) {
    if (!isUuid(workspaceId)) throw new NotFoundError('Workspace');
    return gaps.listReports(ctx.em, workspaceId);
  }

  @Needs.personIn('article.create', 'workspaceId')
  @Query(() => [ContentGapGroup], {
    description: 'Reports and zero-result searches grouped by similar question, most frequent first (admin token).',
  })
  async contentGapGroups(
    @Ctx() ctx: RequestContext,
    @InputRule('id') @Arg('workspaceId', () => ID) workspaceId: string,
    @Arg('includeResolved', { defaultValue: false }) includeResolved: boolean,
    @Arg('askedBy', () => Audience, { nullable: true, description: 'Only groups these callers asked, most asked by them first.' })
    askedBy?: Audience | null,
  ) {
    if (!isUuid(workspaceId)) throw new NotFoundError('Workspace');
    return gaps.listGroups(ctx.em, workspaceId, includeResolved, null, askedBy ?? null);
  }

  @Needs.admin()
  @Mutation(() => ContentGapGroup, { description: 'Marks a content-gap group resolved (admin token).' })
  resolveContentGapGroup(@Ctx() ctx: RequestContext, @Arg('id', () => Int) id: number) {
    return gaps.resolveGroup(ctx, id);
  }
}
