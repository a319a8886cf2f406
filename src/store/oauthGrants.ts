/** Statements on OAuth clients, authorization codes, grants and tokens (codes and tokens only as digests). */
import type { KeyRow } from '../auth/keyRow.js';
import { pgArray, sql, type SqlTarget } from '../db/sql.js';

/** A registered client (DCR) or a cached Client ID Metadata Document. */
export interface ClientRow {
  id: string;
  kind: 'registered' | 'metadata';
  name: string;
  redirect_uris: string[];
  metadata: Record<string, unknown>;
  created_at: string;
  refresh_after: string | null;
  expires_at: string | null;
  last_used_at: string | null;
}

/** A client by its id (expired unused registrations excluded). */
export async function findClient(db: SqlTarget, id: string): Promise<ClientRow | undefined> {
  const rows = await sql<ClientRow>(
    db,
    `select id, kind, name, redirect_uris, metadata, created_at, refresh_after, expires_at, last_used_at from oauth_clients
      where id = ? and (last_used_at is not null or expires_at is null or expires_at > now())`,
    [id],
  );
  return rows[0];
}

/** Stores a client registered by DCR; it expires at `expiresAt` unless a grant uses it first. */
export async function insertRegisteredClient(
  db: SqlTarget,
  row: { id: string; name: string; redirectUris: string[]; metadata: Record<string, unknown>; expiresAt: Date; from: string },
): Promise<void> {
  await sql(
    db,
    `insert into oauth_clients (id, kind, name, redirect_uris, metadata, expires_at, registered_from) values (?, 'registered', ?, ?::text[], ?::jsonb, ?, ?)`,
    [row.id, row.name, pgArray(row.redirectUris), JSON.stringify(row.metadata), row.expiresAt, row.from],
  );
}

/**
 * Stores (or refreshes) a fetched Client ID Metadata Document until `refreshAfter`. Until a grant
 * uses the client it expires at `expiresAt` (each fetch moves it), like an unused registration.
 */
export async function upsertMetadataClient(
  db: SqlTarget,
  row: { id: string; name: string; redirectUris: string[]; metadata: Record<string, unknown>; refreshAfter: Date; expiresAt: Date },
): Promise<void> {
  await sql(
    db,
    `insert into oauth_clients (id, kind, name, redirect_uris, metadata, refresh_after, expires_at)
     values (?, 'metadata', ?, ?::text[], ?::jsonb, ?, ?)
     on conflict (id) do update set name = excluded.name, redirect_uris = excluded.redirect_uris, metadata = excluded.metadata,
       refresh_after = excluded.refresh_after, expires_at = excluded.expires_at where oauth_clients.kind = 'metadata'`,
    [row.id, row.name, pgArray(row.redirectUris), JSON.stringify(row.metadata), row.refreshAfter, row.expiresAt],
  );
}

/** Deletes clients (registrations and fetched metadata documents) no grant ever used, past their expiry. */
export async function deleteUnusedClients(db: SqlTarget): Promise<number> {
  const rows = await sql(db, `delete from oauth_clients where last_used_at is null and expires_at < now() returning id`);
  return rows.length;
}

/** Why a metadata document's last fetch failed, while that is remembered (until `retry_after`). */
export async function findMetadataFailure(db: SqlTarget, url: string): Promise<{ reason: string; retry_after: string } | undefined> {
  const rows = await sql<{ reason: string; retry_after: string }>(
    db,
    'select reason, retry_after from oauth_metadata_failures where url = ? and retry_after > now()',
    [url],
  );
  return rows[0];
}

/** Remembers that fetching a metadata document failed, and why, for `seconds`. */
export async function recordMetadataFailure(db: SqlTarget, url: string, reason: string, seconds: number): Promise<void> {
  await sql(
    db,
    `insert into oauth_metadata_failures (url, reason, retry_after) values (?, ?, now() + make_interval(secs => ?))
     on conflict (url) do update set reason = excluded.reason, failed_at = now(), retry_after = excluded.retry_after`,
    [url, reason, seconds],
  );
}

/** The workspaces of an organization, oldest first (what a consent screen offers). */
export async function organizationWorkspaces(db: SqlTarget, organizationId: string): Promise<{ id: string; name: string }[]> {
  return sql(db, 'select id, name from workspaces where organization_id = ? order by created_at, id limit 500', [organizationId]);
}

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

/**
 * Creates a grant from a redeemed code (its organization is the member's, its `mfa` the code's:
 * whether the consent proved a second factor) and marks the client used.
 */
export async function insertGrant(
  db: SqlTarget,
  row: {
    id: string;
    organizationId: string;
    memberId: string;
    workspaceId: string;
    clientId: string;
    clientName: string;
    scopes: string[];
    resource: string;
    mfa: boolean;
  },
): Promise<void> {
  await sql(
    db,
    `insert into oauth_grants (id, organization_id, member_id, workspace_id, client_id, client_name, scopes, resource, mfa, last_used_at)
     values (?, ?, ?, ?, ?, ?, ?::text[], ?, ?, now())`,
    [row.id, row.organizationId, row.memberId, row.workspaceId, row.clientId, row.clientName, pgArray(row.scopes), row.resource, row.mfa],
  );
  await sql(db, 'update oauth_clients set last_used_at = now() where id = ?', [row.clientId]);
}

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

/** Deletes tokens past their expiry, codes past theirs and metadata fetch failures no longer remembered (housekeeping). */
export async function purgeExpiredOAuth(db: SqlTarget): Promise<void> {
  await sql(db, `delete from oauth_tokens where expires_at < now() - interval '1 day'`);
  await sql(db, `delete from oauth_codes where expires_at < now() - interval '1 day'`);
  await sql(db, 'delete from oauth_metadata_failures where retry_after < now()');
}

/** The client an unredeemed, unexpired authorization code was issued to (the token endpoint asks before anything else). */
export async function codeClient(db: SqlTarget, digest: string): Promise<string | undefined> {
  const rows = await sql<{ client_id: string }>(db, 'select client_id from oauth_codes where digest = ?', [digest]);
  return rows[0]?.client_id;
}

/** A member as a consent screen needs them now: role, two-factor state, organization. */
export interface ConsentMemberRow {
  id: string;
  email: string;
  role: string;
  two_factor_enabled: boolean;
  organization_id: string;
  organization_name: string;
  require_two_factor: boolean;
}

/** The member behind a session, read fresh (a role changed since sign-in counts). */
export async function consentMember(db: SqlTarget, memberId: string): Promise<ConsentMemberRow | undefined> {
  const rows = await sql<ConsentMemberRow>(
    db,
    `select m.id, m.email, m.role, m.two_factor_enabled, o.id as organization_id, o.name as organization_name, o.require_two_factor
       from members m join organizations o on o.id = m.organization_id where m.id = ?`,
    [memberId],
  );
  return rows[0];
}
