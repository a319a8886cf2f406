import type { EntityManager } from '@mikro-orm/postgresql';
import { announceAuthChange, signalAuthChanged } from '../auth/keyCache.js';
import { insertToken, revokeGrantRow } from '../store/oauth.js';
import { digestSecret, newSecret } from '../auth/keys.js';
import { ACCESS_PREFIX, REFRESH_PREFIX } from './secrets.js';
import type { OAuthSettings } from './settings.js';

/** What the token endpoint answers (RFC 6749 §5.1). */
export interface TokenAnswer {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** Issues a new access and refresh token pair of a grant (only their digests are stored). */
export async function issueTokens(
  em: EntityManager,
  serverSecret: string,
  settings: Pick<OAuthSettings, 'accessTokenTtlS' | 'refreshTokenTtlS'>,
  grantId: string,
  scopes: readonly string[],
): Promise<TokenAnswer> {
  const access = newSecret(ACCESS_PREFIX);
  const refresh = newSecret(REFRESH_PREFIX);
  const now = Date.now();
  await insertToken(em, grantId, 'access', digestSecret(serverSecret, access), new Date(now + settings.accessTokenTtlS * 1000));
  await insertToken(em, grantId, 'refresh', digestSecret(serverSecret, refresh), new Date(now + settings.refreshTokenTtlS * 1000));
  return {
    access_token: access,
    token_type: 'Bearer',
    expires_in: settings.accessTokenTtlS,
    refresh_token: refresh,
    scope: scopes.join(' '),
  };
}

/**
 * Revokes a grant and every token of it, inside `em`'s transaction, and tells every process's key
 * cache at commit (call `signalAuthChanged` after the commit for this one's).
 */
export async function revokeGrantIn(em: EntityManager, grantId: string, reason: string): Promise<boolean> {
  const revoked = await revokeGrantRow(em, grantId, reason);
  await announceAuthChange(em);
  return revoked;
}

/** Revokes a grant in its own transaction: in force in every process within seconds. */
export async function revokeGrant(em: EntityManager, grantId: string, reason: string): Promise<boolean> {
  const revoked = await em.transactional((trx) => revokeGrantIn(trx, grantId, reason));
  signalAuthChanged();
  return revoked;
}
