/** Statements on oauth_tokens: a grant's access and refresh tokens (only as digests), looked up, rotated and deleted. */
import type { KeyRow } from './keyRow.js';
import { sql, type SqlTarget } from '../db/sql.js';

/** Stores a token digest of a grant. */
export async function insertToken(
  db: SqlTarget,
  grantId: string,
  kind: 'access' | 'refresh',
  digest: string,
  expiresAt: Date,
): Promise<void> {
  await sql(db, 'insert into oauth_tokens (digest, grant_id, kind, expires_at) values (?, ?, ?, ?)', [digest, grantId, kind, expiresAt]);
}

/** A token with its grant, locked (refresh rotation and revocation). */
export interface TokenGrantRow {
  digest: string;
  kind: 'access' | 'refresh';
  expires_at: string;
  used_at: string | null;
  grant_id: string;
  client_id: string;
  scopes: string[];
  resource: string;
  revoked_at: string | null;
}

/** A token by digest with its grant, the token row locked. */
export async function lockToken(db: SqlTarget, digest: string): Promise<TokenGrantRow | undefined> {
  const rows = await sql<TokenGrantRow>(
    db,
    `select t.digest, t.kind, t.expires_at, t.used_at, g.id as grant_id, g.client_id, g.scopes, g.resource, g.revoked_at
       from oauth_tokens t join oauth_grants g on g.id = t.grant_id where t.digest = ? for update of t`,
    [digest],
  );
  return rows[0];
}

/** Marks a refresh token rotated. */
export async function useToken(db: SqlTarget, digest: string): Promise<void> {
  await sql(db, 'update oauth_tokens set used_at = now() where digest = ?', [digest]);
}

/** Deletes one token. */
export async function deleteToken(db: SqlTarget, digest: string): Promise<void> {
  await sql(db, 'delete from oauth_tokens where digest = ?', [digest]);
}

/** An access token's lookup row: shaped like a key's (KeyRow) with its grant's resource and client. */
export interface AccessRow extends KeyRow {
  resource: string;
  client_id: string;
}

/**
 * The access-token lookup: the grant (as the "key": its scopes, workspace, revocation), the
 * token's expiry, and the grant's member and organization as they are now (a demoted member's
 * grant is capped by the new role). For the organization's two-factor rule the member counts as
 * two-factor (`two_factor_enabled`) when they have turned it on or when the consent that made the
 * grant proved a second factor (the grant's `mfa`, the session's at consent).
 */
export async function lookupAccessToken(db: SqlTarget, digest: string): Promise<AccessRow | undefined> {
  const rows = await sql<AccessRow>(
    db,
    `select g.id, g.client_name as name, g.scopes as permissions, g.workspace_id, t.expires_at, g.revoked_at, g.last_used_at,
            m.id as member_id, m.role, (m.two_factor_enabled or g.mfa) as two_factor_enabled, o.id as organization_id, o.plan,
            o.require_two_factor, g.resource, g.client_id
       from oauth_tokens t
       join oauth_grants g on g.id = t.grant_id
       join members m on m.id = g.member_id
       join organizations o on o.id = g.organization_id
      where t.digest = ? and t.kind = 'access'`,
    [digest],
    'oauth_access_lookup',
  );
  return rows[0];
}

/** Deletes tokens a day past their expiry (housekeeping). */
export async function purgeExpiredTokens(db: SqlTarget): Promise<void> {
  await sql(db, `delete from oauth_tokens where expires_at < now() - interval '1 day'`);
}
