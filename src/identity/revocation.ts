import type { EntityManager } from '@mikro-orm/postgresql';
import { announceAuthChange, signalAuthChanged } from '../auth/keyCache.js';
import { deleteToken, lockToken } from '../store/oauthTokens.js';
import { OAuthError } from './errors.js';
import { revokeGrantIn } from './grants.js';
import { digestSecret } from '../auth/keys.js';
import { ACCESS_PREFIX, REFRESH_PREFIX } from './secrets.js';
import { inTransaction } from '../store/unitOfWork.js';

/**
 * Token revocation (RFC 7009): a refresh token revokes its whole grant (every token of it), an
 * access token only itself. The answer is the same 200 whether or not the token was known (or was
 * another client's, which is left alone), so the endpoint tells nothing about tokens.
 */
export async function revokeToken(em: EntityManager, serverSecret: string, params: URLSearchParams): Promise<void> {
  const token = params.get('token');
  if (!token) throw new OAuthError('invalid_request', 'token is required');
  const clientId = params.get('client_id');
  if (!(token.startsWith(ACCESS_PREFIX) || token.startsWith(REFRESH_PREFIX)) || token.length > 100) return;
  const digest = digestSecret(serverSecret, token);
  const changed = await inTransaction(em, async (tx) => {
    const row = await lockToken(tx, digest);
    if (!row || (clientId && row.client_id !== clientId)) return false;
    if (row.kind === 'refresh') return revokeGrantIn(tx, row.grant_id, 'refresh token revoked by the client');
    await deleteToken(tx, digest);
    await announceAuthChange(tx);
    return true;
  });
  if (changed) signalAuthChanged();
}
