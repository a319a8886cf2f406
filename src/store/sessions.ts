/** Statements on member_sessions and sign_in_links: how a person's sign-in is stored, found, used and ended. */
import type { Role } from '../roles.js';
import type { Plan } from '../plans.js';
import { sql, type SqlTarget } from '../db/sql.js';
import type { EventedWrite } from './events.js';

/** A session as authentication reads it: the session, its member and the member's organization. */
export interface SessionRow {
  id: string;
  member_id: string;
  email: string;
  role: Role;
  two_factor_enabled: boolean;
  organization_id: string;
  plan: Plan;
  require_two_factor: boolean;
  method: string;
  mfa: boolean;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
}

/**
 * The live session whose token has this digest: not revoked, before its absolute expiry and seen
 * within the idle limit (`idleSeconds`); undefined for any other.
 */
export async function liveSession(db: SqlTarget, digest: string, idleSeconds: number): Promise<SessionRow | undefined> {
  const rows = await sql<SessionRow>(
    db,
    `select s.id, s.member_id, m.email, m.role, m.two_factor_enabled, o.id as organization_id, o.plan, o.require_two_factor,
            s.method, s.mfa, s.created_at, s.last_seen_at, s.expires_at
       from member_sessions s
       join members m on m.id = s.member_id
       join organizations o on o.id = s.organization_id
      where s.token_digest = ? and s.revoked_at is null and s.expires_at > now()
        and s.last_seen_at > now() - make_interval(secs => ?)`,
    [digest, idleSeconds],
  );
  return rows[0];
}

/** Pushes a session's idle expiry forward (best effort, at most once a minute per session). */
export async function touchSession(db: SqlTarget, id: string): Promise<void> {
  await sql(db, `update member_sessions set last_seen_at = now() where id = ? and last_seen_at < now() - interval '1 minute'`, [id]);
}

/**
 * Records a new session (params: id, member, organization, token digest, method, mfa, user agent,
 * lifetime in seconds); written with its `member.signed_in` event (auditedWrite).
 */
export const INSERT_SESSION: EventedWrite = {
  write: `insert into member_sessions (id, member_id, organization_id, token_digest, method, mfa, user_agent, expires_at)
          values (?::uuid, ?::uuid, ?::uuid, ?, ?, ?, ?, now() + make_interval(secs => ?)) returning id, expires_at`,
};

/** A session as the lists show it (never its token or digest). */
export interface SessionListRow {
  id: string;
  member_id: string;
  organization_id: string;
  email: string;
  method: string;
  mfa: boolean;
  user_agent: string | null;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
}

const LIST_COLUMNS =
  's.id, s.member_id, s.organization_id, m.email, s.method, s.mfa, s.user_agent, s.created_at, s.last_seen_at, s.expires_at, s.revoked_at';

/**
 * The sessions of an organization (optionally of one member) that are still live or ended within the
 * last day, newest first.
 */
export function listSessions(
  db: SqlTarget,
  organizationId: string,
  memberId: string | null,
  idleSeconds: number,
): Promise<SessionListRow[]> {
  return sql<SessionListRow>(
    db,
    `select ${LIST_COLUMNS}
       from member_sessions s join members m on m.id = s.member_id
      where s.organization_id = ?::uuid and (?::uuid is null or s.member_id = ?::uuid)
        and s.revoked_at is null and s.expires_at > now() and s.last_seen_at > now() - make_interval(secs => ?)
      order by s.created_at desc, s.id desc
      limit 200`,
    [organizationId, memberId, memberId, idleSeconds],
  );
}

/** One session by id (any state), within one organization unless `organizationId` is null; or undefined. */
export async function sessionById(db: SqlTarget, id: string, organizationId: string | null): Promise<SessionListRow | undefined> {
  const rows = await sql<SessionListRow>(
    db,
    `select ${LIST_COLUMNS} from member_sessions s join members m on m.id = s.member_id
      where s.id = ?::uuid and (?::uuid is null or s.organization_id = ?::uuid)`,
    [id, organizationId, organizationId],
  );
  return rows[0];
}

/** Ends a live session now (params: id); written with its event (auditedWrite). Returns nothing for one already ended. */
export const REVOKE_SESSION: EventedWrite = {
  write: `update member_sessions set revoked_at = now() where id = ?::uuid and revoked_at is null returning id`,
};

/** Records a sign-in link, its token's digest only (params: id, member, digest, lifetime in seconds), with its event. */
export const INSERT_SIGN_IN_LINK: EventedWrite = {
  write: `insert into sign_in_links (id, member_id, token_digest, expires_at) values (?::uuid, ?::uuid, ?, now() + make_interval(secs => ?))
          returning id, expires_at`,
};

/**
 * Uses a sign-in link: marks it used, in one statement, only if it is unused and unexpired (two
 * redemptions racing: one wins). Returns its member, or undefined when the link is unknown, used or expired.
 */
export async function redeemSignInLink(db: SqlTarget, digest: string): Promise<{ member_id: string } | undefined> {
  const rows = await sql<{ member_id: string }>(
    db,
    `update sign_in_links set used_at = now() where token_digest = ? and used_at is null and expires_at > now() returning member_id`,
    [digest],
  );
  return rows[0];
}

/** The member an unused, unexpired sign-in link is for, without using it. */
export async function pendingSignInLink(db: SqlTarget, digest: string): Promise<{ member_id: string } | undefined> {
  const rows = await sql<{ member_id: string }>(
    db,
    'select member_id from sign_in_links where token_digest = ? and used_at is null and expires_at > now()',
    [digest],
  );
  return rows[0];
}

/** A member as sign-in needs them: role, organization and its two-factor rule. */
export interface SigningInMember {
  id: string;
  email: string;
  role: Role;
  organization_id: string;
  require_two_factor: boolean;
}

const MEMBER_COLUMNS = 'm.id, m.email, m.role, m.organization_id, o.require_two_factor';

/** A member by id. */
export async function memberById(db: SqlTarget, id: string): Promise<SigningInMember | undefined> {
  const rows = await sql<SigningInMember>(
    db,
    `select ${MEMBER_COLUMNS} from members m join organizations o on o.id = m.organization_id where m.id = ?::uuid`,
    [id],
  );
  return rows[0];
}

/** The members with this e-mail (one per organization at most), optionally only in one organization. */
export function membersByEmail(db: SqlTarget, email: string, organizationId: string | null): Promise<SigningInMember[]> {
  return sql<SigningInMember>(
    db,
    `select ${MEMBER_COLUMNS} from members m join organizations o on o.id = m.organization_id
      where m.email = ? and (?::uuid is null or m.organization_id = ?::uuid) order by m.created_at limit 20`,
    [email, organizationId, organizationId],
  );
}

/** Forgets sign-in links a day past their expiry and sessions a day past their end (revoked, or past their absolute expiry). */
export async function forgetEndedSignIns(db: SqlTarget): Promise<void> {
  await sql(db, `delete from sign_in_links where expires_at < now() - interval '1 day'`);
  await sql(db, `delete from member_sessions where coalesce(revoked_at, expires_at) < now() - interval '1 day'`);
}
