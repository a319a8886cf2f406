import type { KeyRow } from '../store/keyRow.js';
import type { AgentPrincipal, Principal } from '../context.js';
import type { SqlTarget } from '../db/sql.js';
import { lookupKey, touchKey } from '../store/agentKeys.js';
import { digestSecret, isWellFormedKey, KEY_PREFIX, safeEqual } from './keys.js';
import type { KeyCache } from './keyCache.js';

/** Secrets the server checks credentials against. */
export interface Credentials {
  serverSecret: string;
  adminTokenDigest: string;
}

export type { KeyRow } from '../store/keyRow.js';

const LAST_USED_RESOLUTION_MS = 60_000; // one write per key per minute, not per request

/** Runs KEY_LOOKUP_SQL (src/store/agentKeys.ts) for a digest (the default: on the request's connection). */
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
    row = lookup ? await lookup(digest) : await lookupKey(em, digest);
    if (row) cache?.set(digest, row, stamp, now);
  }
  if (!row || row.revoked_at || (row.expires_at && new Date(row.expires_at).getTime() <= now)) return { kind: 'invalid' };
  if (!row.last_used_at || now - new Date(row.last_used_at).getTime() > LAST_USED_RESOLUTION_MS) {
    row.last_used_at = new Date(now); // the cached row too: one touch per key and minute
    // Best effort and outside any transaction: a failed touch must not fail the request.
    touchKey(em, row.id, new Date(now)).catch(() => undefined);
  }
  return toPrincipal(row);
}

/** The agent principal a key row (or a row that stands in for a key, such as an OAuth grant's) authenticates as. */
export function toPrincipal(row: KeyRow): AgentPrincipal {
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
