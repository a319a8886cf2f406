import { isPermission, PERMISSIONS } from '../auth/permissions.js';
import type { SqlTarget } from '../db/sql.js';
import { redirectUriProblem, resolveClient, type MetadataFetcher, type OAuthClient } from './clients.js';
import { ClientNotFetched, OAuthError, RedirectedError, UnsafeRedirectError } from './errors.js';
import { ourResource, type Resources } from './resources.js';
import { CHALLENGE } from './secrets.js';

/** A checked authorization request (RFC 6749 §4.1.1 with PKCE and RFC 8707's `resource`). */
export interface AuthorizationRequest {
  client: OAuthClient;
  redirectUri: string;
  state: string | null;
  codeChallenge: string;
  resource: string;
  scopes: string[];
}

/** The parameters an authorization request carries (and the consent form carries back). */
export const REQUEST_PARAMS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'code_challenge',
  'code_challenge_method',
  'state',
  'scope',
  'resource',
];

const MAX_PARAM = 2000;

/**
 * Checks an authorization request. The client and its exact redirect URI come first: until both
 * hold, a refusal is an error page (UnsafeRedirectError); after, it is a redirect to the client
 * with `error`, `state` and `iss` (RedirectedError). PKCE with S256 only, a resource of this
 * service (default `/mcp`), scopes among the permissions (default all, capped later by the role).
 * Without a fetcher (nobody signed in) a metadata document is not fetched: ClientNotFetched unless cached.
 */
export async function checkAuthorizationRequest(
  db: SqlTarget,
  params: URLSearchParams,
  resources: Resources,
  fetcher: MetadataFetcher | null,
): Promise<AuthorizationRequest> {
  for (const name of REQUEST_PARAMS) {
    if (params.getAll(name).length > 1) throw new UnsafeRedirectError('invalid_request', `${name} is sent more than once`);
    if ((params.get(name) ?? '').length > MAX_PARAM) throw new UnsafeRedirectError('invalid_request', `${name} is too long`);
    if (params.get(name)?.includes('\u0000')) throw new UnsafeRedirectError('invalid_request', `${name} must not contain NUL (U+0000)`);
  }
  const clientId = params.get('client_id');
  if (!clientId) throw new UnsafeRedirectError('invalid_request', 'client_id is required');
  let client: OAuthClient;
  try {
    client = await resolveClient(db, clientId, fetcher);
  } catch (error) {
    if (error instanceof ClientNotFetched) throw error;
    // Past the fetch budget: a 429 with its Retry-After, still on a page.
    if (error instanceof OAuthError)
      throw new UnsafeRedirectError(error.error, error.description, error.status === 429 ? 429 : 400, error.retryAfterSeconds);
    throw error;
  }
  const redirectUri = params.get('redirect_uri');
  if (!redirectUri) throw new UnsafeRedirectError('invalid_request', 'redirect_uri is required');
  if (!client.redirectUris.includes(redirectUri))
    throw new UnsafeRedirectError('invalid_request', 'redirect_uri is not one this client registered (the match is exact)');
  // A client stored before today's rules may hold a redirect URI they refuse (a scheme such as ms-msdt:).
  const problem = redirectUriProblem(redirectUri);
  if (problem) throw new UnsafeRedirectError('invalid_request', `redirect_uri ${problem}`);
  const state = params.get('state');
  const refuse = (error: string, description: string) => new RedirectedError(error, description, { client, redirectUri, state });
  if (params.get('response_type') !== 'code') throw refuse('unsupported_response_type', 'response_type must be "code"');
  const challenge = params.get('code_challenge');
  if (params.get('code_challenge_method') !== 'S256' || !challenge)
    throw refuse('invalid_request', 'PKCE is required: code_challenge with code_challenge_method=S256');
  if (!CHALLENGE.test(challenge)) throw refuse('invalid_request', 'code_challenge must be a base64url SHA-256 (43 characters)');
  const rawResource = params.get('resource');
  const resource = rawResource === null ? resources.mcp : ourResource(resources, rawResource);
  if (!resource) throw refuse('invalid_target', `resource must be one of ${resources.mcp}, ${resources.api}, ${resources.service}`);
  // `offline_access` asks for a refresh token, which every grant gets: it is granted by being ignored.
  const asked = (params.get('scope') ?? '').split(' ').filter((s) => s && s !== 'offline_access');
  const unknown = asked.filter((s) => !isPermission(s));
  if (unknown.length) throw refuse('invalid_scope', `Unknown scope(s): ${unknown.join(', ')}; the scopes are the permission names`);
  const scopes = asked.length ? [...new Set(asked)] : [...PERMISSIONS];
  return { client, redirectUri, state, codeChallenge: challenge, resource, scopes };
}

/** The client's redirect URI with the response parameters added (its own query kept). */
export function redirectWith(redirectUri: string, values: Record<string, string | null>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(values)) if (value !== null) url.searchParams.set(name, value);
  return url.toString();
}
