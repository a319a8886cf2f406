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

  @Needs(['proposal.read', 'article.update'], { adminMayAct: true, policies: [POLICIES.proposalApproval] })
  @Mutation(() => Proposal, {
    description: 'Applies an open proposal (reviewing: article.update; a new draft also article.create); 409 if the article changed since.',
  })
  approveProposal(@Ctx() ctx: RequestContext, @Caller() scope: Scope, @Arg('id', () => Int) id: number) {
    return proposals.approveProposal(ctx, scope, id, guardOf(POLICIES.proposalApproval, scope));
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
