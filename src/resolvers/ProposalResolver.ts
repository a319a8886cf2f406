import { Arg, Ctx, Field, InputType, Int, Mutation, ObjectType, Query, registerEnumType, Resolver } from 'type-graphql';
import { InputRule } from '../contract/declared.js';
import { Caller, Needs, type Scope } from '../auth/access.js';
import type { RequestContext } from '../context.js';
import { PageOf } from '../types/page.js';
import { Proposal, type ProposalStatus } from '../entities/Proposal.js';
import * as proposals from '../services/proposals.js';
import { guardOf, POLICIES } from '../auth/policies.js';

enum ProposalStatusValue {
  open = 'open',
  approved = 'approved',
  rejected = 'rejected',
  returned = 'returned',
}
registerEnumType(ProposalStatusValue, { name: 'ProposalStatus' });

@InputType({
  description: 'An edit (name `article`, send `title` and/or `markdown`) or a new draft (send `section`, `title`, `markdown`).',
})
class CreateProposalInput {
  @InputRule('articleRef')
  @Field(() => String, { nullable: true, description: 'Slug of the article to edit; omit for a new draft.' })
  article?: string | null;
  @InputRule('sectionKey') @Field(() => String, { nullable: true, description: 'Section key of a new draft.' }) section?: string | null;
  @InputRule('title') @Field(() => String, { nullable: true }) title?: string | null;
  @InputRule('markdown') @Field(() => String, { nullable: true }) markdown?: string | null;
  @InputRule('summary') @Field({ description: 'What the change does and why, for the reviewer.' }) summary!: string;
}

@ObjectType()
class ProposalPage extends PageOf(Proposal) {}

@ObjectType({ description: 'Lines an edit and the article changed differently since the edit was made.' })
class MergeConflictView {
  @Field(() => String, { description: 'title | markdown' }) field!: string;
  @Field(() => Int, { description: 'First line of the current text it covers (1-based).' }) line!: number;
  @Field(() => Int, { description: 'How many lines of the current text it covers.' }) currentLines!: number;
  @Field(() => [String], { description: 'The lines when the edit was made.' }) base!: string[];
  @Field(() => [String], { description: "The edit's lines." }) proposed!: string[];
  @Field(() => [String], { description: "The article's lines now." }) current!: string[];
}

@ObjectType({ description: 'How an edit proposal merges into the article now (three-way, from the version it was made on).' })
class MergePreview {
  @Field({ description: 'True when it applies without a conflict.' }) clean!: boolean;
  @Field() title!: string;
  @Field({ description: 'The merged Markdown; each conflict between <<<<<<< proposal, =======, >>>>>>> current lines.' }) markdown!: string;
  @Field(() => [MergeConflictView]) conflicts!: MergeConflictView[];
}

@InputType({ description: "The reviewer's resolution of a conflicting edit: the title and Markdown to apply instead of the merge." })
class ResolutionInput {
  @InputRule('title') @Field(() => String, { nullable: true }) title?: string | null;
  @InputRule('markdown') @Field(() => String, { nullable: true }) markdown?: string | null;
}

/** Edit proposals, endpoints 16–17, and the review operations editors use over GraphQL. */
@Resolver()
export class ProposalResolver {
  @Needs(['proposal.read'])
  @Query(() => ProposalPage, { description: "The calling key's own proposals, newest first." })
  myProposals(
    @Ctx() ctx: RequestContext,
    @Caller() scope: Scope,
    @Arg('status', () => ProposalStatusValue, { nullable: true }) status?: ProposalStatus | null,
    @InputRule('pageLimit') @Arg('limit', () => Int, { nullable: true }) limit?: number | null,
    @Arg('cursor', () => String, { nullable: true }) cursor?: string | null,
  ) {
    return proposals.listMyProposals(ctx, scope, { status, limit, cursor });
  }

  @Needs(['proposal.read', 'article.update'], { adminMayAct: true })
  @Query(() => ProposalPage, { description: 'Every proposal of the workspace, for reviewers (article.update).' })
  proposals(
    @Ctx() ctx: RequestContext,
    @Caller() scope: Scope,
    @Arg('status', () => ProposalStatusValue, { nullable: true }) status?: ProposalStatus | null,
    @InputRule('pageLimit') @Arg('limit', () => Int, { nullable: true }) limit?: number | null,
    @Arg('cursor', () => String, { nullable: true }) cursor?: string | null,
  ) {
    return proposals.listAllProposals(ctx, scope, { status, limit, cursor });
  }

  @Needs(['proposal.create'])
  @Mutation(() => Proposal)
  createProposal(@Ctx() ctx: RequestContext, @Caller() scope: Scope, @Arg('input', () => CreateProposalInput) input: CreateProposalInput) {
    return proposals.createProposal(ctx, scope, input);
  }

  @Needs(['proposal.read', 'article.update'], { adminMayAct: true })
  @Query(() => MergePreview, {
    nullable: true,
    description: 'How an open edit would merge into the article now, with its conflicts (null for a new draft).',
  })
  proposalMerge(@Ctx() ctx: RequestContext, @Caller() scope: Scope, @Arg('id', () => Int) id: number) {
    return proposals.previewMerge(ctx, scope, id);
  }

  @Needs(['proposal.read', 'article.update'], { adminMayAct: true, policies: [POLICIES.proposalApproval] })
  @Mutation(() => Proposal, {
    description:
      'Applies an open proposal (reviewing: article.update; a new draft also article.create). An edit is merged into the article as it is ' +
      'now; lines both changed differently answer 409 naming them, and the proposal stays open: send `resolution` with the text to apply.',
  })
  approveProposal(
    @Ctx() ctx: RequestContext,
    @Caller() scope: Scope,
    @Arg('id', () => Int) id: number,
    @Arg('resolution', () => ResolutionInput, { nullable: true }) resolution?: ResolutionInput | null,
  ) {
    return proposals.approveProposal(ctx, scope, id, guardOf(POLICIES.proposalApproval, scope), resolution ?? {});
  }

  @Needs(['proposal.read', 'article.update'], { adminMayAct: true })
  @Mutation(() => Proposal, {
    description: 'Returns an open proposal to its proposer with a comment, which they read with their proposals.',
  })
  returnProposal(
    @Ctx() ctx: RequestContext,
    @Caller() scope: Scope,
    @Arg('id', () => Int) id: number,
    @InputRule('reason') @Arg('comment', { description: 'What to change, for the proposer (at most 1,000 characters).' }) comment: string,
  ) {
    return proposals.returnProposal(ctx, scope, id, comment);
  }

  @Needs(['proposal.read', 'article.update'], { adminMayAct: true })
  @Mutation(() => Proposal)
  rejectProposal(
    @Ctx() ctx: RequestContext,
    @Caller() scope: Scope,
    @Arg('id', () => Int) id: number,
    @InputRule('reason') @Arg('reason', { description: 'Why, for the proposer (at most 1,000 characters).' }) reason: string,
  ) {
    return proposals.rejectProposal(ctx, scope, id, reason);
  }
}
