/** Statements on oauth_grants: a grant created from a redeemed code, used, listed, and revoked with its token family. */
import { pgArray, sql, type SqlTarget } from '../db/sql.js';

/** What a grant is made of when its authorization code is redeemed. */
export interface NewGrant {
  memberId: string;
  organizationId: string;
  workspaceId: string;
  clientId: string;
  clientName: string;
  scopes: string[];
  resource: string;
  /** The consent proved a second factor (the session's `mfa`): the organization's two-factor rule counts it on every call. */
  mfa: boolean;
}

/**
 * Creates a grant from a redeemed code (its organization is the member's, its `mfa` the code's:
 * whether the consent proved a second factor) and marks the client used.
 */
export async function insertGrant(db: SqlTarget, row: NewGrant & { id: string }): Promise<void> {
  await sql(
    db,
    `insert into oauth_grants (id, organization_id, member_id, workspace_id, client_id, client_name, scopes, resource, mfa, last_used_at)
     values (?, ?, ?, ?, ?, ?, ?::text[], ?, ?, now())`,
    [row.id, row.organizationId, row.memberId, row.workspaceId, row.clientId, row.clientName, pgArray(row.scopes), row.resource, row.mfa],
  );
  await sql(db, 'update oauth_clients set last_used_at = now() where id = ?', [row.clientId]);
}

/** Revokes a grant (the token family: every access and refresh token of it stops working). */
export async function revokeGrantRow(db: SqlTarget, grantId: string, reason: string): Promise<boolean> {
  const rows = await sql(
    db,
    'update oauth_grants set revoked_at = now(), revoked_reason = ? where id = ? and revoked_at is null returning id',
    [reason, grantId],
  );
  await sql(db, 'delete from oauth_tokens where grant_id = ?', [grantId]);
  return rows.length > 0;
}

/** Records when a grant was last used. */
export async function touchGrant(db: SqlTarget, id: string, at: Date): Promise<void> {
  await sql(db, 'update oauth_grants set last_used_at = ? where id = ?', [at, id]);
}

/** A grant as listed (GraphQL, console). */
export interface GrantRow {
  id: string;
  organization_id: string;
  member_id: string;
  member_email: string;
  workspace_id: string;
  workspace_name: string;
  client_id: string;
  client_name: string;
  scopes: string[];
  resource: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

const GRANT_COLUMNS = `g.id, g.organization_id, g.member_id, m.email as member_email, g.workspace_id, w.name as workspace_name,
  g.client_id, g.client_name, g.scopes, g.resource, g.created_at, g.last_used_at, g.revoked_at`;

/** Live grants of an organization (optionally of one member), newest first. */
export async function listGrants(db: SqlTarget, organizationId: string, memberId: string | null, limit = 200): Promise<GrantRow[]> {
  return sql<GrantRow>(
    db,
    `select ${GRANT_COLUMNS} from oauth_grants g join members m on m.id = g.member_id join workspaces w on w.id = g.workspace_id
      where g.organization_id = ? and (?::uuid is null or g.member_id = ?::uuid) and g.revoked_at is null
      order by g.created_at desc, g.id limit ?`,
    [organizationId, memberId, memberId, limit],
  );
}

/** One grant by id. */
export async function findGrant(db: SqlTarget, id: string): Promise<GrantRow | undefined> {
  const rows = await sql<GrantRow>(
    db,
    `select ${GRANT_COLUMNS} from oauth_grants g join members m on m.id = g.member_id join workspaces w on w.id = g.workspace_id where g.id = ?`,
    [id],
  );
  return rows[0];
}
