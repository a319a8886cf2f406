/**
 * People signing in: sessions begun (by a sign-in link or the identity provider), listed, ended and
 * revoked, and the single-use sign-in links an owner or the admin token mints. Each of these is an
 * event of the audit trail under the member.
 */
import { randomUUID } from 'node:crypto';
import { acting } from '../auth/access.js';
import type { Guard, Ownership } from '../auth/policies.js';
import { personBlockedByTwoFactor } from '../auth/authorize.js';
import { announceAuthChange, signalAuthChanged } from '../auth/keyCache.js';
import { digestSecret, newSecret } from '../auth/keys.js';
import type { MemberPrincipal, Principal, RequestContext } from '../context.js';
import type { SqlTarget } from '../db/sql.js';
import {
  ConflictError,
  InvalidRequestError,
  invalidField,
  NotFoundError,
  PERSON_TWO_FACTOR_MESSAGE,
  TwoFactorRequiredError,
} from '../errors.js';
import { isUuid } from '../ids.js';
import {
  INSERT_SESSION,
  INSERT_SIGN_IN_LINK,
  listSessions,
  membersByEmail,
  memberById,
  pendingSignInLink,
  redeemSignInLink,
  REVOKE_SESSION,
  sessionById,
  type SessionListRow,
  type SigningInMember,
} from '../store/sessions.js';
import { auditedWrite, type EventCaller } from '../services/audit.js';

/** A sign-in link is valid this long, and used once. */
export const SIGN_IN_LINK_SECONDS = 15 * 60;
const LINK_PREFIX = 'wks_link_';

/** Where a sign-in link's token goes: the fragment of the sign-in page, which never reaches a server or a log. */
export const SIGN_IN_LINK_PATH = '/console/sign-in#link=';

/** A minted sign-in link (its token shown once; only its digest is stored). */
export interface MintedLink {
  token: string;
  memberId: string;
  email: string;
  organizationId: string;
  expiresAt: Date;
}

function normalEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * createSignInLink: a single-use link for the member with this e-mail, valid 15 minutes. An owner
 * mints for their own organization; the admin token for any (naming `organizationId` when the
 * e-mail is a member of several).
 */
export async function createSignInLink(ctx: RequestContext, input: { email: string; organizationId?: string | null }): Promise<MintedLink> {
  const { organizationId: own } = acting(ctx);
  if (input.organizationId != null && !isUuid(input.organizationId)) throw invalidField('organizationId', 'must be an id (UUID)');
  const email = normalEmail(input.email);
  if (!email.includes('@')) throw invalidField('email', 'must be an e-mail address');
  const organizationId = own ?? input.organizationId ?? null;
  if (own && input.organizationId && input.organizationId !== own) throw new NotFoundError('Member');
  const members = await membersByEmail(ctx.db, email, organizationId);
  if (!members.length) throw new NotFoundError('Member');
  if (members.length > 1) throw invalidField('organizationId', `${email} is a member of several organizations: name the organization`);
  const member = members[0];
  const token = newSecret(LINK_PREFIX);
  const [row] = await auditedWrite<{ expires_at: Date }>(
    ctx.db,
    ctx,
    { action: 'member.sign_in_link_created', targetType: 'member', targetId: member.id, organizationId: member.organization_id },
    INSERT_SIGN_IN_LINK,
    [randomUUID(), member.id, digestSecret(ctx.serverSecret, token), SIGN_IN_LINK_SECONDS],
  );
  return { token, memberId: member.id, email: member.email, organizationId: member.organization_id, expiresAt: new Date(row.expires_at) };
}

/** A member about to be signed in, and how. */
export interface SignInGrant {
  member: SigningInMember;
  method: 'link' | 'oidc';
  mfa: boolean;
}

/**
 * A browser already signed in as `current` that opens a link for someone else is asked first: a
 * page that sends a person to its own link would otherwise swap their session for its author's
 * (their next consent would then grant an app access to the author's organization). The link stays unused.
 */
async function refuseSilentSwitch(db: SqlTarget, digest: string, current: { memberId: string; email: string }): Promise<void> {
  const pending = await pendingSignInLink(db, digest);
  if (!pending || pending.member_id === current.memberId) return;
  const other = await memberById(db, pending.member_id);
  if (!other) return;
  throw new ConflictError(
    `You are signed in as ${current.email}; this link signs in ${other.email} instead. Confirm the switch to use it.`,
    { signedInAs: current.email, linkFor: other.email, confirm: { field: 'switch', value: true } },
  );
}

/**
 * Uses a sign-in link (once: a second use, an unknown or an expired link is refused with one message).
 * The organization's two-factor rule applies: a link is one factor, so an admin or owner of an
 * organization that requires two-factor is refused (and the link is spent). With a session of
 * another member in the browser (`current`), the switch must be confirmed (`confirmed`), else 409.
 */
export async function signInWithLink(
  db: SqlTarget,
  serverSecret: string,
  token: string,
  current: { memberId: string; email: string } | null = null,
  confirmed = false,
): Promise<SignInGrant> {
  const valid = token.startsWith(LINK_PREFIX) && token.length < 100;
  const digest = digestSecret(serverSecret, token);
  if (valid && current && !confirmed) await refuseSilentSwitch(db, digest, current);
  const used = valid ? await redeemSignInLink(db, digest) : undefined;
  if (!used)
    throw new InvalidRequestError('This sign-in link is unknown, already used or expired. Ask for a new one.', [
      { field: 'token', message: 'unknown, used or expired' },
    ]);
  const member = await memberById(db, used.member_id);
  if (!member) throw new NotFoundError('Member');
  const grant: SignInGrant = { member, method: 'link', mfa: false };
  refuseWithoutSecondFactor(grant);
  return grant;
}

/** The two-factor rule at sign-in (it is checked again on every request: see personBlockedByTwoFactor). */
export function refuseWithoutSecondFactor(grant: SignInGrant): void {
  if (personBlockedByTwoFactor({ requireTwoFactor: grant.member.require_two_factor, role: grant.member.role, mfa: grant.mfa }))
    throw new TwoFactorRequiredError(PERSON_TWO_FACTOR_MESSAGE);
}

/** The members an identity provider's verified e-mail matches (optionally in one organization). */
export function membersForEmail(db: SqlTarget, email: string, organizationId: string | null): Promise<SigningInMember[]> {
  return membersByEmail(db, normalEmail(email), organizationId);
}

function callerFor(member: SigningInMember, sessionId: string, mfa: boolean, requestId: string): EventCaller {
  const principal: MemberPrincipal = {
    kind: 'member',
    sessionId,
    memberId: member.id,
    email: member.email,
    role: member.role,
    organizationId: member.organization_id,
    plan: 'free',
    requireTwoFactor: member.require_two_factor,
    mfa,
  };
  return { principal, requestId, adminActing: new Map() };
}

/** Records a new session for a grant (and its `member.signed_in` event under the member). */
export async function beginSession(
  db: SqlTarget,
  grant: SignInGrant,
  session: { id: string; digest: string; userAgent: string | null; maxSeconds: number; requestId: string },
): Promise<void> {
  const { member } = grant;
  await auditedWrite(
    db,
    callerFor(member, session.id, grant.mfa, session.requestId),
    {
      action: 'member.signed_in',
      targetType: 'member_session',
      targetId: session.id,
      organizationId: member.organization_id,
      payload: { object: { id: session.id, memberId: member.id, method: grant.method, mfa: grant.mfa } },
    },
    INSERT_SESSION,
    [
      session.id,
      member.id,
      member.organization_id,
      session.digest,
      grant.method,
      grant.mfa,
      session.userAgent?.slice(0, 300) ?? null,
      session.maxSeconds,
    ],
  );
}

/** Ends a session (sign-out or revocation), tells every process (open sockets), and records the event under `caller`. */
async function endSession(
  db: SqlTarget,
  caller: EventCaller,
  row: SessionListRow,
  organizationId: string,
  signOut: boolean,
): Promise<void> {
  await auditedWrite(
    db,
    caller,
    {
      action: signOut ? 'member.signed_out' : 'member.session_revoked',
      targetType: 'member_session',
      targetId: row.id,
      organizationId,
      payload: { object: { id: row.id, memberId: row.member_id } },
    },
    REVOKE_SESSION,
    [row.id],
  );
  // Sessions are read from the database on every request; the notification reaches open sockets.
  await announceAuthChange(db).catch(() => undefined);
  signalAuthChanged();
}

/** Sign-out: ends the caller's own session. */
export async function signOut(db: SqlTarget, principal: MemberPrincipal, requestId: string): Promise<void> {
  const row = await sessionById(db, principal.sessionId, principal.organizationId);
  if (row && !row.revoked_at) await endSession(db, { principal, requestId, adminActing: new Map() }, row, principal.organizationId, true);
}

/** A session as GraphQL lists it. */
export type ListedSession = SessionListRow & { current: boolean };

/**
 * The live sessions a caller may see: a member their own (an owner: every member's of their
 * organization, or one member's); the admin token those of `organizationId`.
 */
export async function sessionsOf(
  ctx: RequestContext,
  args: { organizationId?: string | null; memberId?: string | null },
  guard: Guard<Ownership>,
): Promise<ListedSession[]> {
  const { idleSeconds } = ctx.sessions;
  const p = ctx.principal;
  if (args.memberId != null && !isUuid(args.memberId)) throw invalidField('memberId', 'must be an id (UUID)');
  if (args.organizationId != null && !isUuid(args.organizationId)) throw invalidField('organizationId', 'must be an id (UUID)');
  let organizationId: string;
  let memberId = args.memberId ?? null;
  if (p.kind === 'member' && !(args.memberId && args.memberId !== p.memberId) && !args.organizationId) {
    organizationId = p.organizationId;
    memberId = p.memberId; // one's own sessions: every role
  } else {
    guard({ own: false });
    const reach = acting(ctx);
    organizationId = reach.organizationId ?? args.organizationId ?? '';
    if (!organizationId) throw invalidField('organizationId', 'the admin token names the organization');
    if (reach.organizationId && args.organizationId && args.organizationId !== reach.organizationId) return [];
  }
  const rows = await listSessions(ctx.db, organizationId, memberId, idleSeconds);
  return rows.map((row) => ({ ...row, current: currentSession(p) === row.id }));
}

function currentSession(p: Principal): string | null {
  return p.kind === 'member' ? p.sessionId : null;
}

/** revokeSession: a member may end their own sessions; an owner any of their organization's; the admin token any. */
export async function revokeSession(ctx: RequestContext, id: string, guard: Guard<Ownership>): Promise<ListedSession> {
  if (!isUuid(id)) throw new NotFoundError('Session');
  const p = ctx.principal;
  // A person may end their own sessions; ending another's needs sessions.manage (checked after the
  // lookup, so another organization's session is a 404 either way).
  const organizationId = p.kind === 'member' ? p.organizationId : acting(ctx).organizationId;
  const row = await sessionById(ctx.db, id, organizationId);
  if (!row) throw new NotFoundError('Session');
  guard({ own: p.kind === 'member' && row.member_id === p.memberId });
  if (!row.revoked_at) await endSession(ctx.db, ctx, row, row.organization_id, false);
  const after = (await sessionById(ctx.db, id, row.organization_id))!;
  return { ...after, current: currentSession(p) === id };
}
