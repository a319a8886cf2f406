import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Credentials } from '../auth/principal.js';
import { digestSecret } from '../auth/keys.js';
import { insertSettingIfAbsent, readSetting } from '../store/settings.js';

/** Reads a setting, creating it with `make()` if absent; concurrent processes agree on one value. */
async function getOrCreate(em: EntityManager, key: string, make: () => string): Promise<{ value: string; created: boolean }> {
  const inserted = await insertSettingIfAbsent(em, key, make());
  if (inserted !== undefined) return { value: inserted, created: true };
  return { value: await readSetting(em, key), created: false };
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
