import type { KeyRow } from './keyRow.js';
import type { AgentPrincipal, Principal } from '../context.js';
import { sql, type SqlTarget } from '../db/sql.js';
import { digestSecret, isWellFormedKey, KEY_PREFIX, safeEqual } from './keys.js';
import type { KeyCache } from './keyCache.js';

/** Secrets the server checks credentials against. */
export interface Credentials {
  serverSecret: string;
  adminTokenDigest: string;
}

export type { KeyRow } from './keyRow.js';

const LAST_USED_RESOLUTION_MS = 60_000; // one write per key per minute, not per request

/**
 * The key lookup by digest (`$1`): the key, its member and organization, and whether the key is
 * usable now (so a rate-limit count can ride along in the same statement, see PostgresRateLimiter).
 */
export const KEY_LOOKUP_SQL = `select k.id, k.name, k.permissions, k.workspace_id, k.expires_at, k.revoked_at, k.last_used_at,
       m.id as member_id, m.role, m.two_factor_enabled,
       o.id as organization_id, o.plan, o.require_two_factor,
       (k.revoked_at is null and (k.expires_at is null or k.expires_at > now())) as usable
  from agent_keys k
  join members m on m.id = k.member_id
  join organizations o on o.id = k.organization_id
 where k.digest = $1`;

/** Runs KEY_LOOKUP_SQL for a digest (the default: on the request's connection). */
export type KeyLookup = (digest: string) => Promise<KeyRow | undefined>;

/**
 * Resolves an `Authorization` header to a principal: from the key cache when it holds the key,
 * else with one indexed lookup (which then fills the cache).
 */
export async function resolvePrincipal(
  em: SqlTarget,
  credentials: Credentials,
  header: string | undefined,
  lookup?: KeyLookup,
  cache?: KeyCache,
): Promise<Principal> {
  if (!header) return { kind: 'anonymous' };
  const match = /^Bearer +(\S+) *$/i.exec(header);
  if (!match) return { kind: 'invalid' };
  const token = match[1];
  const digest = digestSecret(credentials.serverSecret, token);
  if (!token.startsWith(KEY_PREFIX)) {
    return safeEqual(digest, credentials.adminTokenDigest) ? { kind: 'admin' } : { kind: 'invalid' };
  }
  const now = Date.now();
  let row = cache?.get(digest, now);
  if (!row) {
    if (!isWellFormedKey(token)) return { kind: 'invalid' }; // a typo or a truncated key: no lookup
    const stamp = cache?.stamp ?? 0;
    row = lookup ? await lookup(digest) : (await sql<KeyRow>(em, KEY_LOOKUP_SQL.replace('$1', '?'), [digest]))[0];
    if (row) cache?.set(digest, row, stamp, now);
  }
  if (!row || row.revoked_at || (row.expires_at && new Date(row.expires_at).getTime() <= now)) return { kind: 'invalid' };
  if (!row.last_used_at || now - new Date(row.last_used_at).getTime() > LAST_USED_RESOLUTION_MS) {
    row.last_used_at = new Date(now); // the cached row too: one touch per key and minute
    // Best effort and outside any transaction: a failed touch must not fail the request.
    sql(em, 'update agent_keys set last_used_at = ? where id = ?', [new Date(now), row.id]).catch(() => undefined);
  }
  return toPrincipal(row);
}

function toPrincipal(row: KeyRow): AgentPrincipal {
  return {
    kind: 'agent',
    keyId: row.id,
    keyName: row.name,
    permissions: row.permissions,
    boundWorkspaceId: row.workspace_id,
    memberId: row.member_id,
    role: row.role,
    twoFactorEnabled: row.two_factor_enabled,
    organizationId: row.organization_id,
    plan: row.plan,
    requireTwoFactor: row.require_two_factor,
  };
}
