import type { EntityManager } from '@mikro-orm/postgresql';
import { signalAuthChanged } from '../auth/keyCache.js';
import { codeClient, lockCode, useCode } from '../store/oauthCodes.js';
import { lockToken, useToken } from '../store/oauthTokens.js';
import { resolveClient } from './clients.js';
import { OAuthError } from './errors.js';
import { createOAuthGrant, issueTokens, revokeGrantIn, type TokenAnswer } from './grants.js';
import { ourResource, type Resources } from './resources.js';
import { digestSecret } from '../auth/keys.js';
import { CODE_PREFIX, REFRESH_PREFIX, verifierMatches } from './secrets.js';
import type { OAuthSettings } from './oauthSettings.js';
import { inTransaction } from '../store/unitOfWork.js';

/** What the token endpoint needs. */
export interface TokenDeps {
  em: EntityManager;
  serverSecret: string;
  settings: OAuthSettings;
  resources: Resources;
  requestId: string;
}

/** A transaction's outcome: tokens, or a refusal to throw after the commit (a detected reuse must stay revoked). */
type Outcome = { tokens: TokenAnswer } | { refusal: OAuthError; revoked?: boolean };

const grantError = (description: string) => new OAuthError('invalid_grant', description);

/** The token endpoint (RFC 6749 §3.2, OAuth 2.1): `authorization_code` with PKCE, and `refresh_token` with rotation. */
export async function tokenRequest(deps: TokenDeps, params: URLSearchParams): Promise<TokenAnswer> {
  const grantType = params.get('grant_type');
  const clientId = params.get('client_id');
  if (!clientId) throw new OAuthError('invalid_request', 'client_id is required (public clients identify themselves with it)');
  if (grantType === 'authorization_code') return redeemCode(deps, params, clientId);
  if (grantType === 'refresh_token') return rotateRefreshToken(deps, params, clientId);
  throw new OAuthError('unsupported_grant_type', 'grant_type must be "authorization_code" or "refresh_token"');
}

function settle(outcome: Outcome): TokenAnswer {
  if ('refusal' in outcome) {
    if (outcome.revoked) signalAuthChanged();
    throw outcome.refusal;
  }
  return outcome.tokens;
}

function requiredParam(params: URLSearchParams, name: string): string {
  const value = params.get(name);
  if (!value) throw new OAuthError('invalid_request', `${name} is required`);
  return value;
}

/** A `resource` parameter, when sent, must be the one the grant is bound to (RFC 8707). */
function checkResource(deps: TokenDeps, params: URLSearchParams, bound: string): void {
  const raw = params.get('resource');
  if (raw === null) return;
  if (ourResource(deps.resources, raw) !== bound)
    throw new OAuthError('invalid_target', `resource must be ${bound}, the resource this grant is bound to`);
}

/**
 * Redeems an authorization code once: same client, same redirect_uri, the PKCE verifier of its
 * challenge, before it expires. A second redemption revokes what the first one started (the code
 * leaked); a wrong verifier burns the code. Nothing is fetched: the code's client was stored when the
 * person consented, and a client_id that no code names is refused before it is looked at.
 */
async function redeemCode(deps: TokenDeps, params: URLSearchParams, clientId: string): Promise<TokenAnswer> {
  const code = requiredParam(params, 'code');
  const redirectUri = requiredParam(params, 'redirect_uri');
  const verifier = params.get('code_verifier');
  if (!verifier) throw new OAuthError('invalid_request', 'code_verifier is required (PKCE)');
  if (!code.startsWith(CODE_PREFIX) || code.length > 100) throw grantError('The authorization code is not valid');
  const digest = digestSecret(deps.serverSecret, code);
  const issuedTo = await codeClient(deps.em, digest);
  if (!issuedTo) throw grantError('The authorization code is not valid');
  if (issuedTo !== clientId) throw grantError('The authorization code was issued to another client');
  const client = await resolveClient(deps.em, clientId, null, { stale: true });
  const outcome = await inTransaction(deps.em, async (trx): Promise<Outcome> => {
    const em = trx;
    const row = await lockCode(em, digest);
    if (!row) return { refusal: grantError('The authorization code is not valid') };
    if (row.used_at) {
      if (row.grant_id) await revokeGrantIn(em, row.grant_id, 'authorization code reused');
      return {
        refusal: grantError('The authorization code was already used; the tokens it gave are revoked'),
        revoked: Boolean(row.grant_id),
      };
    }
    if (new Date(row.expires_at).getTime() <= Date.now()) return { refusal: grantError('The authorization code has expired') };
    if (row.client_id !== client.id) return { refusal: grantError('The authorization code was issued to another client') };
    if (row.redirect_uri !== redirectUri) return { refusal: grantError('redirect_uri is not the one of the authorization request') };
    if (!verifierMatches(verifier, row.code_challenge)) {
      await useCode(em, digest, null);
      return { refusal: grantError('code_verifier does not match the code_challenge (PKCE S256)') };
    }
    checkResource(deps, params, row.resource);
    const grantId = await createOAuthGrant(
      em,
      {
        memberId: row.member_id,
        organizationId: row.organization_id,
        workspaceId: row.workspace_id,
        clientId: client.id,
        clientName: client.name,
        scopes: row.scopes,
        resource: row.resource,
        mfa: row.mfa,
      },
      deps.requestId,
    );
    await useCode(em, digest, grantId);
    return { tokens: await issueTokens(em, deps.serverSecret, deps.settings, grantId, row.scopes) };
  });
  return settle(outcome);
}

/**
 * Rotates a refresh token: the presented one is spent and a new pair issued. A spent token
 * presented again means it was copied: the whole grant (every token of the family) is revoked.
 */
async function rotateRefreshToken(deps: TokenDeps, params: URLSearchParams, clientId: string): Promise<TokenAnswer> {
  const token = requiredParam(params, 'refresh_token');
  if (!token.startsWith(REFRESH_PREFIX) || token.length > 100) throw grantError('The refresh token is not valid');
  const digest = digestSecret(deps.serverSecret, token);
  const outcome = await inTransaction(deps.em, async (trx): Promise<Outcome> => {
    const em = trx;
    const row = await lockToken(em, digest);
    if (!row || row.kind !== 'refresh' || row.revoked_at) return { refusal: grantError('The refresh token is not valid') };
    if (row.client_id !== clientId) return { refusal: grantError('The refresh token was issued to another client') };
    if (row.used_at) {
      await revokeGrantIn(em, row.grant_id, 'refresh token reused');
      return { refusal: grantError('The refresh token was already used; its grant is revoked'), revoked: true };
    }
    if (new Date(row.expires_at).getTime() <= Date.now()) return { refusal: grantError('The refresh token has expired') };
    checkResource(deps, params, row.resource);
    const scope = params.get('scope');
    if (scope && scope.split(' ').some((s) => s && !row.scopes.includes(s)))
      return { refusal: new OAuthError('invalid_scope', 'A refresh cannot add scopes the grant does not hold') };
    await useToken(em, digest);
    return { tokens: await issueTokens(em, deps.serverSecret, deps.settings, row.grant_id, row.scopes) };
  });
  return settle(outcome);
}
