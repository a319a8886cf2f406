import { randomBytes } from 'node:crypto';
import { nulIssue, wellFormed } from '../contract/check.js';
import { parseJsonText } from '../http/json.js';
import { safeFetch, UnsafeTargetError } from '../net/safeFetch.js';
import type { SqlTarget } from '../db/sql.js';
import { deleteUnusedClients, findClient, insertRegisteredClient, upsertMetadataClient, type ClientRow } from '../store/oauthClients.js';
import { findMetadataFailure, recordMetadataFailure } from '../store/oauthMetadataFailures.js';
import { ClientNotFetched, OAuthError } from './errors.js';
import { CLIENT_PREFIX } from './secrets.js';
import { METADATA_CACHE_S, METADATA_FAILURE_S, METADATA_FETCH, UNUSED_METADATA_TTL_S, UNUSED_REGISTRATION_TTL_S } from './oauthSettings.js';
import type { OAuthClient } from './oauthClient.js';

export type { OAuthClient };

/**
 * How this request may fetch a Client ID Metadata Document: under the outbound rules, after charging
 * the fetch budget (the caller's address and the whole service). `charge` throws an OAuthError (429)
 * past either budget. Null where nothing may be fetched: an anonymous request, the token endpoint.
 */
export interface MetadataFetcher {
  allowLoopback: boolean;
  charge(): Promise<void>;
}

const MAX_REDIRECT_URIS = 10;
const MAX_URI_LENGTH = 2000;
const MAX_NAME_LENGTH = 200;

/**
 * A native app's private scheme (RFC 8252 §7.1): a domain name its maker controls, reversed
 * (`com.example.app:`). A one-word scheme names no one and may open anything the system handles
 * (`ms-msdt:`, `search-ms:`, `chrome:`, `view-source:`, `javascript:`, `file:` …).
 */
const REVERSE_DOMAIN_SCHEME = /^[a-z][a-z0-9-]*(?:\.[a-z0-9-]+)+:$/;

/** One-word schemes of editors whose MCP clients register them (Cursor's `cursor://anysphere.cursor-mcp/oauth/callback`). */
const EDITOR_SCHEMES = new Set(['cursor:', 'vscode:', 'vscode-insiders:']);

/**
 * Whether a redirect URI may be registered: absolute, no fragment, no credentials, and https, http
 * on a loopback host (a native or command-line client's local callback), a native app's
 * reverse-domain private scheme, or one of the few editors' own schemes.
 */
export function redirectUriProblem(raw: unknown): string | null {
  if (typeof raw !== 'string' || !raw || raw.length > MAX_URI_LENGTH) return `must be a URL of at most ${MAX_URI_LENGTH} characters`;
  const nul = nulIssue(raw);
  if (nul) return nul;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.hash || raw.includes('#')) return 'must not have a fragment';
  if (url.username || url.password) return 'must not carry credentials';
  if (url.protocol === 'https:') return url.hostname ? null : 'must name a host';
  if (url.protocol === 'http:')
    return ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)
      ? null
      : 'http is allowed only for loopback hosts (localhost, 127.0.0.1, [::1]); use https';
  if (REVERSE_DOMAIN_SCHEME.test(url.protocol) || EDITOR_SCHEMES.has(url.protocol)) return null;
  return `the ${url.protocol} scheme is not allowed: use https, http on loopback, or a reverse-domain private scheme (com.example.app:)`;
}

/** Where a redirect URI leads, as a person reads it: its host (port included), or a native app's scheme. */
export function redirectDestination(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.host : url.protocol;
}

function checkedName(value: unknown, fallback: string): string {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'string' || !value.trim() || value.length > MAX_NAME_LENGTH)
    throw new OAuthError('invalid_client_metadata', `client_name must be a non-empty string of at most ${MAX_NAME_LENGTH} characters`);
  const nul = nulIssue(value);
  if (nul) throw new OAuthError('invalid_client_metadata', `client_name ${nul}`);
  return value.trim();
}

function checkedRedirectUris(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_REDIRECT_URIS)
    throw new OAuthError('invalid_redirect_uri', `redirect_uris must be an array of 1 to ${MAX_REDIRECT_URIS} URLs`);
  for (const uri of value) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthError('invalid_redirect_uri', `redirect_uris: ${String(uri).slice(0, 200)} ${problem}`);
  }
  return value as string[];
}

/** Public clients only: no secret is issued or accepted, PKCE is their proof. */
function checkedAuthMethod(value: unknown, strict: boolean): 'none' {
  if (value === undefined || value === null || value === 'none') return 'none';
  if (strict)
    throw new OAuthError('invalid_client_metadata', 'token_endpoint_auth_method must be "none": this server serves public clients (PKCE)');
  return 'none'; // DCR: RFC 7591 lets the server substitute what it supports, and says so in its answer
}

function checkedGrantTypes(value: unknown): string[] {
  if (value === undefined) return ['authorization_code', 'refresh_token'];
  if (!Array.isArray(value) || value.some((g) => g !== 'authorization_code' && g !== 'refresh_token'))
    throw new OAuthError('invalid_client_metadata', 'grant_types may hold only "authorization_code" and "refresh_token"');
  return value as string[];
}

/** The metadata of a registration or document, checked (RFC 7591 §2), as the server keeps and answers it. */
function checkedMetadata(sent: Record<string, unknown>, strict: boolean, fallbackName: string) {
  // Text as the database holds it (an unpaired surrogate as U+FFFD), so the answer and the stored metadata agree.
  const body = wellFormed(sent);
  const redirectUris = checkedRedirectUris(body.redirect_uris);
  const name = checkedName(body.client_name, fallbackName);
  const grantTypes = checkedGrantTypes(body.grant_types);
  if (body.response_types !== undefined && !(Array.isArray(body.response_types) && body.response_types.every((r) => r === 'code')))
    throw new OAuthError('invalid_client_metadata', 'response_types may hold only "code"');
  const metadata: Record<string, unknown> = {
    client_name: name,
    redirect_uris: redirectUris,
    grant_types: grantTypes,
    response_types: ['code'],
    token_endpoint_auth_method: checkedAuthMethod(body.token_endpoint_auth_method, strict),
  };
  for (const field of ['client_uri', 'logo_uri', 'scope', 'software_id', 'software_version'] as const) {
    const value = body[field];
    if (typeof value !== 'string' || value.length > MAX_URI_LENGTH) continue;
    const nul = nulIssue(value);
    if (nul) throw new OAuthError('invalid_client_metadata', `${field} ${nul}`);
    metadata[field] = value;
  }
  return { name, redirectUris, metadata };
}

/**
 * Dynamic Client Registration (RFC 7591): a public client with exact redirect URIs. Deletes the
 * registrations no grant used before their expiry on the way (hosts re-register often).
 */
export async function registerClient(db: SqlTarget, body: unknown, from: string): Promise<Record<string, unknown>> {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new OAuthError('invalid_client_metadata', 'the body must be a JSON object of client metadata');
  // Some hosts register without a name (Claude Desktop): the client is then named by where it returns to.
  const uris = (body as Record<string, unknown>).redirect_uris;
  const fallback =
    Array.isArray(uris) && typeof uris[0] === 'string' && !redirectUriProblem(uris[0]) ? redirectDestination(uris[0]) : 'Unnamed client';
  const { name, redirectUris, metadata } = checkedMetadata(body as Record<string, unknown>, false, fallback);
  await deleteUnusedClients(db);
  const id = `${CLIENT_PREFIX}${randomBytes(16).toString('base64url')}`;
  const issuedAt = Math.floor(Date.now() / 1000);
  await insertRegisteredClient(db, {
    id,
    name,
    redirectUris,
    metadata,
    expiresAt: new Date((issuedAt + UNUSED_REGISTRATION_TTL_S) * 1000),
    from,
  });
  return { client_id: id, client_id_issued_at: issuedAt, ...metadata };
}

/** Whether a client_id is a Client ID Metadata Document URL (https with a path). */
export function isMetadataClientId(clientId: string): boolean {
  return clientId.startsWith('https://');
}

/**
 * The client a `client_id` names: a registration, or the Client ID Metadata Document its URL
 * serves (fetched under the outbound rules of webhooks and specs by URL — no internal addresses,
 * bounded size and time, no redirects — within the fetch budget, and cached in the database for every
 * process). Without a fetcher only a cached document serves (`stale`: even one due for a refresh),
 * else ClientNotFetched.
 */
export async function resolveClient(
  db: SqlTarget,
  clientId: string,
  fetcher: MetadataFetcher | null,
  options: { stale?: boolean } = {},
): Promise<OAuthClient> {
  if (!clientId || clientId.length > MAX_URI_LENGTH) throw new OAuthError('invalid_client', 'client_id is missing or too long', 401);
  if (isMetadataClientId(clientId)) return metadataClient(db, clientId, fetcher, options.stale ?? false);
  const row = clientId.startsWith(CLIENT_PREFIX) ? await findClient(db, clientId) : undefined;
  if (!row || row.kind !== 'registered')
    throw new OAuthError(
      'invalid_client',
      'Unknown client_id: register (POST /oauth/register) or use a Client ID Metadata Document URL',
      401,
    );
  return toClient(row);
}

function toClient(row: ClientRow): OAuthClient {
  return { id: row.id, kind: row.kind, name: row.name, redirectUris: row.redirect_uris };
}

async function metadataClient(db: SqlTarget, clientId: string, fetcher: MetadataFetcher | null, stale: boolean): Promise<OAuthClient> {
  const url = metadataUrl(clientId);
  const cached = await findClient(db, clientId);
  const fresh = cached?.refresh_after && new Date(cached.refresh_after).getTime() > Date.now();
  if (cached?.kind === 'metadata' && (fresh || (stale && !fetcher))) return toClient(cached);
  if (!fetcher) throw new ClientNotFetched();
  // A document that failed a moment ago fails again without a fetch: a failing URL costs one fetch a minute.
  const failed = await findMetadataFailure(db, clientId);
  if (failed) {
    const seconds = Math.max(1, Math.ceil((new Date(failed.retry_after).getTime() - Date.now()) / 1000));
    throw new OAuthError('invalid_client', `${failed.reason} (this answer is kept; the document is fetched again in ${seconds} s)`, 401);
  }
  await fetcher.charge();
  let checked: ReturnType<typeof checkedMetadata> & { maxAge: number | null };
  try {
    checked = await fetchedMetadata(clientId, url, fetcher);
  } catch (error) {
    if (error instanceof OAuthError) await recordMetadataFailure(db, clientId, error.description, METADATA_FAILURE_S);
    throw error;
  }
  const seconds = Math.min(METADATA_CACHE_S.max, Math.max(METADATA_CACHE_S.min, checked.maxAge ?? METADATA_CACHE_S.default));
  await deleteUnusedClients(db);
  await upsertMetadataClient(db, {
    id: clientId,
    name: checked.name,
    redirectUris: checked.redirectUris,
    metadata: checked.metadata,
    refreshAfter: new Date(Date.now() + seconds * 1000),
    expiresAt: new Date(Date.now() + UNUSED_METADATA_TTL_S * 1000),
  });
  return { id: clientId, kind: 'metadata', name: checked.name, redirectUris: checked.redirectUris };
}

/** A Client ID Metadata Document URL, checked: https with a path, no fragment, no credentials, written as URL parses it. */
function metadataUrl(clientId: string): URL {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    throw new OAuthError('invalid_client', 'client_id is not a valid URL', 401);
  }
  if (url.pathname === '/' || url.hash || url.username || url.password || url.href !== clientId)
    throw new OAuthError(
      'invalid_client',
      'A Client ID Metadata Document URL is an https URL with a path, no fragment and no credentials',
      401,
    );
  return url;
}

/** The document at `clientId`, fetched and checked: its client_id is its own URL, its metadata a public client's. */
async function fetchedMetadata(clientId: string, url: URL, outbound: { allowLoopback: boolean }) {
  const { document, maxAge } = await fetchMetadataDocument(clientId, outbound);
  if (document.client_id !== clientId)
    throw new OAuthError('invalid_client', "The metadata document's client_id is not the URL it was fetched from", 401);
  try {
    return { ...checkedMetadata(document, true, url.host), maxAge };
  } catch (error) {
    if (error instanceof OAuthError) throw new OAuthError('invalid_client', `The client's metadata document: ${error.description}`, 401);
    throw error;
  }
}

async function fetchMetadataDocument(
  clientId: string,
  outbound: { allowLoopback: boolean },
): Promise<{ document: Record<string, unknown>; maxAge: number | null }> {
  let res;
  try {
    res = await safeFetch(clientId, {
      allowLoopback: outbound.allowLoopback,
      ...METADATA_FETCH,
      maxRedirects: 0,
      headers: { accept: 'application/json' },
    });
  } catch (error) {
    const why = error instanceof UnsafeTargetError ? error.message : 'the request failed';
    throw new OAuthError('invalid_client', `The client's metadata document could not be fetched: ${why}`, 401);
  }
  if (res.status !== 200) throw new OAuthError('invalid_client', `The client's metadata document answered HTTP ${res.status}`, 401);
  const parsed = parseJsonText(res.body.toString('utf8'));
  if (!parsed.ok)
    throw new OAuthError(
      'invalid_client',
      `The client's metadata document ${parsed.reason === 'syntax' ? 'is not JSON' : parsed.message}`,
      401,
    );
  const document = parsed.value;
  if (!document || typeof document !== 'object' || Array.isArray(document))
    throw new OAuthError('invalid_client', "The client's metadata document is not a JSON object", 401);
  const cacheControl = String(res.headers['cache-control'] ?? '');
  const match = /(?:^|,)\s*max-age=(\d{1,9})/.exec(cacheControl.slice(0, 500));
  const noStore = /no-store|no-cache/.test(cacheControl.slice(0, 500));
  return { document: document as Record<string, unknown>, maxAge: noStore ? 0 : match ? Number(match[1]) : null };
}
