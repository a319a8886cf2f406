import type { Context } from 'koa';
import type { KeyCache } from '../auth/keyCache.js';
import { digestSecret, KEY_PREFIX } from '../auth/keys.js';
import { effectivePermissions, PERMISSIONS, type Permission } from '../auth/permissions.js';
import { toPrincipal } from '../auth/principal.js';
import type { AgentPrincipal, Principal } from '../context.js';
import type { SqlTarget } from '../db/sql.js';
import { DomainError, UnauthorizedError } from '../errors.js';
import type { Middleware } from '../http/middleware.js';
import { touchGrant } from '../store/oauthGrants.js';
import { lookupAccessToken, type AccessRow } from '../store/oauthTokens.js';
import { audienceAccepts, doorOf, metadataUrlOf, resourcesFor, type Resources } from './resources.js';
import { ACCESS_PREFIX } from './secrets.js';
import type { OAuthSettings } from './oauthSettings.js';

const LAST_USED_RESOLUTION_MS = 60_000;

/** Whether a bearer value is an OAuth access token (never an agent key, which keeps its own path). */
export function isAccessToken(token: string): boolean {
  return token.startsWith(ACCESS_PREFIX) && token.length < 200;
}

/**
 * Resolves an OAuth access token to the member's principal at this door: the grant's scopes as
 * permissions, bound to its workspace, the member's role and organization as they are now. A
 * token that is unknown, expired, revoked or bound to another resource (audience) is `invalid`.
 * Lookups share the key cache, so revocations and role changes reach every process the same way.
 */
export async function resolveAccessToken(
  db: SqlTarget,
  serverSecret: string,
  token: string,
  cache: KeyCache,
  resources: Resources,
  door: 'mcp' | 'api',
): Promise<Principal> {
  const digest = digestSecret(serverSecret, token);
  const now = Date.now();
  let row = cache.get(digest, now) as AccessRow | undefined;
  if (!row) {
    const stamp = cache.stamp;
    row = await lookupAccessToken(db, digest);
    if (row) cache.set(digest, row, stamp, now);
  }
  if (!row || row.revoked_at || new Date(row.expires_at!).getTime() <= now) return { kind: 'invalid' };
  if (!audienceAccepts(resources, row.resource, door)) return { kind: 'invalid' };
  if (!row.last_used_at || now - new Date(row.last_used_at).getTime() > LAST_USED_RESOLUTION_MS) {
    row.last_used_at = new Date(now);
    touchGrant(db, row.id, new Date(now)).catch(() => undefined);
  }
  return principalOf(row);
}

function principalOf(row: AccessRow): AgentPrincipal {
  return { ...toPrincipal(row), oauth: { grantId: row.id, clientId: row.client_id, resource: row.resource } };
}

/** The bearer value of a request, if any. */
function bearerOf(ctx: Context): string | null {
  const match = /^Bearer +(\S+) *$/i.exec(ctx.get('authorization') || '');
  return match ? match[1] : null;
}

const quote = (value: string) => value.replace(/["\\]/g, '');

/** The `WWW-Authenticate` challenge that sends an OAuth client to discovery (RFC 9728 §5.1), with the scopes there are. */
export function bearerChallenge(
  resources: Resources,
  door: 'mcp' | 'api',
  error?: { code: string; description: string; scope?: string },
): string {
  const parts = [`resource_metadata="${metadataUrlOf(resources, door)}"`, `scope="${quote(error?.scope ?? PERMISSIONS.join(' '))}"`];
  if (error) parts.push(`error="${error.code}"`, `error_description="${quote(error.description)}"`);
  return `Bearer ${parts.join(', ')}`;
}

/**
 * The permissions an OAuth caller lacks only because its grant's scopes leave them out (its role
 * would allow them): those a new authorization could add, so the refusal is `insufficient_scope`.
 */
export function missingScopes(principal: AgentPrincipal, needed: readonly string[]): string[] {
  const held = new Set(principal.permissions);
  const allowed = effectivePermissions(PERMISSIONS, principal.role);
  return needed.filter((p) => !held.has(p) && allowed.has(p as Permission));
}

/** The 403 an OAuth caller gets for a call its scopes do not cover (RFC 6750 §3.1), naming the scopes needed. */
export function insufficientScope(resources: Resources, door: 'mcp' | 'api', principal: AgentPrincipal, scopes: string[]): DomainError {
  const needed = [...new Set([...principal.permissions, ...scopes])].join(' ');
  return new DomainError(
    'permission_denied',
    `This token's grant does not include ${scopes.join(', ')}: authorize again with the scope ${scopes.join(' ')}.`,
    { missing: scopes, scope: needed },
    {
      'WWW-Authenticate': bearerChallenge(resources, door, {
        code: 'insufficient_scope',
        description: 'The grant lacks a scope',
        scope: needed,
      }),
    },
  );
}

/**
 * On `/mcp` and `/api/…`: a 401 sends OAuth clients to discovery (`resource_metadata`, `scope`),
 * and an OAuth caller's 403 for a scope its grant lacks becomes `insufficient_scope` with the
 * scope needed. A caller that presented an agent key (`svc_pat_…`) is never sent into OAuth: its
 * answers stay exactly as they were.
 */
export function oauthChallenges(settings: Pick<OAuthSettings, 'publicUrl'>): Middleware {
  return async (ctx, next) => {
    const door = doorOf(ctx.path);
    if (!door) return next();
    const bearer = bearerOf(ctx);
    if (bearer?.startsWith(KEY_PREFIX)) return next();
    const resources = resourcesFor(ctx, settings);
    const challenge = () =>
      bearerChallenge(
        resources,
        door,
        bearer
          ? { code: 'invalid_token', description: 'The access token is missing, expired, revoked or for another resource' }
          : undefined,
      );
    try {
      await next();
    } catch (error) {
      if (error instanceof UnauthorizedError) throw new UnauthorizedError(challenge());
      throw scopeChallengeOnThrown(error, ctx, resources, door);
    }
    if (ctx.status === 401) ctx.set('WWW-Authenticate', challenge());
    else if (ctx.status === 403) scopeChallengeOnRendered(ctx, resources, door);
  };
}

/** A thrown 403 `permission_denied` of an OAuth caller, with the challenge when a scope is what it lacks. */
function scopeChallengeOnThrown(error: unknown, ctx: Context, resources: Resources, door: 'mcp' | 'api'): unknown {
  const principal = ctx.state.principal as Principal | undefined;
  if (!(error instanceof DomainError) || error.code !== 'permission_denied' || error.headers['WWW-Authenticate']) return error;
  if (principal?.kind !== 'agent' || !principal.oauth) return error;
  const missing = (error.details as { missing?: unknown } | null)?.missing;
  const scopes = Array.isArray(missing) ? missingScopes(principal, missing as string[]) : [];
  return scopes.length ? insufficientScope(resources, door, principal, scopes) : error;
}

/** A REST 403 `permission_denied` answered to an OAuth caller: the challenge names the scopes to ask for. */
function scopeChallengeOnRendered(ctx: Context, resources: Resources, door: 'mcp' | 'api'): void {
  const principal = ctx.state.principal as Principal | undefined;
  if (principal?.kind !== 'agent' || !principal.oauth) return;
  const error = (ctx.body as { error?: { code?: string; details?: { missing?: unknown } } } | undefined)?.error;
  if (error?.code !== 'permission_denied' || !Array.isArray(error.details?.missing)) return;
  const scopes = missingScopes(principal, error.details.missing as string[]);
  if (!scopes.length) return;
  const needed = [...new Set([...principal.permissions, ...scopes])].join(' ');
  ctx.set(
    'WWW-Authenticate',
    bearerChallenge(resources, door, { code: 'insufficient_scope', description: 'The grant lacks a scope', scope: needed }),
  );
}
