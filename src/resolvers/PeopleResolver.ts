import { Arg, Ctx, Field, ID, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { InputRule } from '../contract/declared.js';
import { roleColumn } from '../auth/permissions.js';
import { acting, Needs } from '../auth/access.js';
import type { RequestContext } from '../context.js';
import * as people from '../identity/people.js';
import { personGuardOf, POLICIES } from '../auth/policies.js';

@ObjectType({ description: 'A single-use sign-in link for a member, valid 15 minutes. Its token is shown only in this response.' })
class SignInLink {
  @Field({
    description:
      'The link to open in a browser: the sign-in page with the token in its fragment (never sent to a server). ' +
      'Absolute when PUBLIC_URL is set, else a path on this service.',
  })
  url!: string;
  @Field(() => ID) memberId!: string;
  @Field() email!: string;
  @Field(() => ID) organizationId!: string;
  @Field(() => Date) expiresAt!: Date;
}

@ObjectType({ description: 'A signed-in browser of a member (never its cookie or token).' })
class MemberSession {
  @Field(() => ID) id!: string;
  @Field(() => ID) memberId!: string;
  @Field() email!: string;
  @Field({ description: 'link | oidc' }) method!: string;
  @Field({ description: 'The sign-in proved a second factor.' }) mfa!: boolean;
  @Field(() => String, { nullable: true }) userAgent!: string | null;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) lastSeenAt!: Date;
  @Field(() => Date, { description: 'The absolute expiry (the idle expiry moves with use).' }) expiresAt!: Date;
  @Field(() => Date, { nullable: true }) revokedAt!: Date | null;
  @Field({ description: 'This is the session of the request.' }) current!: boolean;
}

@ObjectType({ description: 'The signed-in person of this request (a session cookie).' })
class Viewer {
  @Field(() => ID) memberId!: string;
  @Field() email!: string;
  @Field({ description: 'viewer | editor | admin | owner' }) role!: string;
  @Field(() => ID) organizationId!: string;
  @Field(() => ID) sessionId!: string;
  @Field({ description: 'The sign-in proved a second factor.' }) mfa!: boolean;
  @Field(() => [String], { description: 'What this role may do: its column of the role table (permissions and person actions).' })
  allowed!: string[];
}

const toSession = (row: people.ListedSession): MemberSession => ({
  id: row.id,
  memberId: row.member_id,
  email: row.email,
  method: row.method,
  mfa: row.mfa,
  userAgent: row.user_agent,
  createdAt: new Date(row.created_at),
  lastSeenAt: new Date(row.last_seen_at),
  expiresAt: new Date(row.expires_at),
  revokedAt: row.revoked_at ? new Date(row.revoked_at) : null,
  current: row.current,
});

@Resolver()
export class PeopleResolver {
  @Needs.member()
  @Query(() => Viewer, { description: 'The signed-in person (a session cookie); unauthorized without one.' })
  viewer(@Ctx() ctx: RequestContext): Viewer {
    const p = acting(ctx).member!;
    const allowed = roleColumn(p.role);
    return {
      memberId: p.memberId,
      email: p.email,
      role: p.role,
      organizationId: p.organizationId,
      sessionId: p.sessionId,
      mfa: p.mfa,
      allowed,
    };
  }

  @Needs.person('members.sign_in_links')
  @Mutation(() => SignInLink, {
    description: 'Mints a single-use sign-in link for a member, valid 15 minutes (an owner for their organization, or the admin token).',
  })
  async createSignInLink(
    @Ctx() ctx: RequestContext,
    @InputRule('email') @Arg('email') email: string,
    @InputRule('id')
    @Arg('organizationId', () => ID, {
      nullable: true,
      description: 'Needed by the admin token when the e-mail is a member of several organizations.',
    })
    organizationId?: string | null,
  ): Promise<SignInLink> {
    const link = await people.createSignInLink(ctx, { email, organizationId });
    const base = ctx.sessions.publicUrl?.replace(/\/$/, '') ?? '';
    return { url: `${base}${people.SIGN_IN_LINK_PATH}${link.token}`, ...link };
  }

  @Needs.person(null, { policies: [POLICIES.othersSessions] })
  @Query(() => [MemberSession], {
    description:
      'Live sessions: your own (any role); an owner may name another member or see the whole organization (organizationId); ' +
      'the admin token names an organization.',
  })
  async sessions(
    @Ctx() ctx: RequestContext,
    @InputRule('id') @Arg('memberId', () => ID, { nullable: true }) memberId?: string | null,
    @InputRule('id') @Arg('organizationId', () => ID, { nullable: true }) organizationId?: string | null,
  ): Promise<MemberSession[]> {
    return (await people.sessionsOf(ctx, { memberId, organizationId }, personGuardOf(POLICIES.othersSessions, ctx))).map(toSession);
  }

  @Needs.person(null, { policies: [POLICIES.othersSessions] })
  @Mutation(() => MemberSession, {
    description: 'Ends a session at once, in every process: your own, or (an owner, the admin token) any of the organization.',
  })
  async revokeSession(@Ctx() ctx: RequestContext, @InputRule('id') @Arg('id', () => ID) id: string): Promise<MemberSession> {
    return toSession(await people.revokeSession(ctx, id, personGuardOf(POLICIES.othersSessions, ctx)));
  }
}
