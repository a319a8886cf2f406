import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Credentials } from '../auth/principal.js';
import { digestSecret } from '../auth/keys.js';
import { sql } from '../db/sql.js';

/** Reads a setting, creating it with `make()` if absent; concurrent processes agree on one value. */
async function getOrCreate(em: EntityManager, key: string, make: () => string): Promise<{ value: string; created: boolean }> {
  const inserted = await sql<{ value: string }>(
    em,
    'insert into settings (key, value) values (?, ?) on conflict (key) do nothing returning value',
    [key, make()],
  );
  if (inserted.length) return { value: inserted[0].value, created: true };
  const rows = await sql<{ value: string }>(em, 'select value from settings where key = ?', [key]);
  return { value: rows[0].value, created: false };
}

export interface CredentialOptions {
  adminToken?: string;
  keyHashSecret?: string;
  /** Called once, by the one process that generated the admin token. */
  announceAdminToken(token: string): void;
}

/**
 * The server secret (HMAC key for agent-key digests) and the admin token digest. Either comes
 * from the environment; otherwise it is generated once and shared through the database.
 */
export async function loadCredentials(em: EntityManager, options: CredentialOptions): Promise<Credentials> {
  const serverSecret =
    options.keyHashSecret || (await getOrCreate(em, 'key_hash_secret', () => randomBytes(32).toString('base64url'))).value;
  if (options.adminToken) return { serverSecret, adminTokenDigest: digestSecret(serverSecret, options.adminToken) };
  let token = '';
  const stored = await getOrCreate(em, 'admin_token_digest', () => {
    token = `adm_${randomBytes(32).toString('base64url')}`;
    return digestSecret(serverSecret, token);
  });
  if (stored.created) options.announceAdminToken(token);
  return { serverSecret, adminTokenDigest: stored.value };
}
