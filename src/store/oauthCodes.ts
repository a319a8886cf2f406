/** Statements on oauth_codes: authorization codes (only as digests), from consent to the token endpoint. */
import { pgArray, sql, type SqlTarget } from '../db/sql.js';

/** What an authorization code carries from consent to the token endpoint. */
export interface CodeRow {
  digest: string;
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
  resource: string;
  scopes: string[];
  member_id: string;
  workspace_id: string;
  /** The session that consented proved a second factor (the grant carries it). */
  mfa: boolean;
  expires_at: string;
  used_at: string | null;
  grant_id: string | null;
  /** The member's organization (read with the code). */
  organization_id: string;
}

/** Stores a new authorization code. */
export async function insertCode(
  db: SqlTarget,
  row: Omit<CodeRow, 'used_at' | 'grant_id' | 'expires_at' | 'organization_id'> & { expiresAt: Date },
): Promise<void> {
  await sql(
    db,
    `insert into oauth_codes (digest, client_id, redirect_uri, code_challenge, resource, scopes, member_id, workspace_id, mfa, expires_at)
     values (?, ?, ?, ?, ?, ?::text[], ?, ?, ?, ?)`,
    [
      row.digest,
      row.client_id,
      row.redirect_uri,
      row.code_challenge,
      row.resource,
      pgArray(row.scopes),
      row.member_id,
      row.workspace_id,
      row.mfa,
      row.expiresAt,
    ],
  );
}

/** A code by digest, locked for the redemption's transaction. */
export async function lockCode(db: SqlTarget, digest: string): Promise<CodeRow | undefined> {
  const rows = await sql<CodeRow>(
    db,
    `select c.*, m.organization_id from oauth_codes c join members m on m.id = c.member_id where c.digest = ? for update of c`,
    [digest],
  );
  return rows[0];
}

/** Marks a code used (with the grant it started, if any). */
export async function useCode(db: SqlTarget, digest: string, grantId: string | null): Promise<void> {
  await sql(db, 'update oauth_codes set used_at = now(), grant_id = ? where digest = ?', [grantId, digest]);
}

/** The client an unredeemed, unexpired authorization code was issued to (the token endpoint asks before anything else). */
export async function codeClient(db: SqlTarget, digest: string): Promise<string | undefined> {
  const rows = await sql<{ client_id: string }>(db, 'select client_id from oauth_codes where digest = ?', [digest]);
  return rows[0]?.client_id;
}

/** Deletes codes a day past their expiry (housekeeping). */
export async function purgeExpiredCodes(db: SqlTarget): Promise<void> {
  await sql(db, `delete from oauth_codes where expires_at < now() - interval '1 day'`);
}
