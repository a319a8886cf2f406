import { Arg, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { InputRule } from '../contract/declared.js';
import { Needs } from '../auth/access.js';
import type { RequestContext } from '../context.js';
import * as grants from '../identity/grants.js';
import { OAuthGrant } from '../types/oauthGrant.js';
import { personPermitOf, POLICIES } from '../auth/policies.js';

/** OAuth grants (connected apps): listed and revoked by the admin token, or by a signed-in member. */
@Resolver(() => OAuthGrant)
export class OAuthGrantResolver {
  @Needs.person(null, { policies: [POLICIES.othersGrants] })
  @Query(() => [OAuthGrant], { description: "Live OAuth grants of an organization, newest first (optionally one member's)." })
  oauthGrants(
    @Ctx() ctx: RequestContext,
    @InputRule('id') @Arg('organizationId', () => ID, { nullable: true }) organizationId?: string | null,
    @InputRule('id') @Arg('memberId', () => ID, { nullable: true }) memberId?: string | null,
  ) {
    return grants.listOAuthGrants(ctx, { organizationId, memberId }, personPermitOf(POLICIES.othersGrants, ctx));
  }

  @Needs.person(null, { policies: [POLICIES.othersGrants] })
  @Mutation(() => OAuthGrant, { description: 'Revokes a grant: its tokens stop working in every process within seconds.' })
  revokeOAuthGrant(
    @Ctx() ctx: RequestContext,
    @InputRule('id') @Arg('id', () => ID) id: string,
    @InputRule('id') @Arg('organizationId', () => ID, { nullable: true }) organizationId?: string | null,
  ) {
    return grants.revokeOAuthGrant(ctx, id, organizationId, personPermitOf(POLICIES.othersGrants, ctx));
  }
}
