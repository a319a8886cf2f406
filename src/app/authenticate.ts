import type { MikroORM } from '@mikro-orm/postgresql';
import type { KeyCache } from '../auth/keyCache.js';
import { resolvePrincipal, type Credentials, type KeyLookup, type KeyRow } from '../auth/principal.js';
import type { Principal } from '../context.js';
import { memberPrincipal, requireCsrf, sessionOf } from '../identity/sessions.js';
import type { SqlTarget } from '../db/sql.js';
import { relaxedPool } from '../db/sql.js';
import { KEY_LOOKUP_SQL } from '../store/agentKeys.js';
import { MemoryRateLimiter, PostgresRateLimiter, rateLimitedError, type RateLimiter, type RateLimitResult } from '../rateLimit.js';
import type { Middleware } from '../http/middleware.js';
import { isAccessToken, resolveAccessToken } from '../identity/bearer.js';
import { doorOf, resourcesFor } from '../identity/resources.js';
import type { OAuthSettings } from '../identity/oauthSettings.js';

/** The rate limiter for this process: shared through PostgreSQL when there is a server, in memory on the embedded database. */
export function createRateLimiter(orm: MikroORM, shared: boolean, limits: { max: number; windowSeconds: number }): RateLimiter {
  return shared
    ? new PostgresRateLimiter(relaxedPool(orm.em), limits.max, limits.windowSeconds)
    : new MemoryRateLimiter(limits.max, limits.windowSeconds);
}

/**
 * A request to /graphql without an Authorization header: the member of its session cookie (a
 * state-changing request must carry the session's CSRF token), else nobody. Sessions are for
 * GraphQL (and the console's pages) only: REST and MCP answer keys and tokens, never a cookie.
 */
async function personOf(ctx: Parameters<Middleware>[0]): Promise<Principal> {
  const signedIn = await sessionOf(ctx);
  if (!signedIn) return { kind: 'anonymous' };
  requireCsrf(ctx, signedIn);
  return memberPrincipal(signedIn);
}

/**
 * Paths a key is looked up for: the API, GraphQL and MCP (not the public documents or uploads), and
 * /llms.txt when it is asked with a key (it then shows the guidance of the key's workspace).
 */
function needsPrincipal(ctx: Parameters<Middleware>[0]): boolean {
  const { path } = ctx;
  if (path === '/llms.txt') return Boolean(ctx.get('authorization'));
  return path === '/graphql' || path === '/mcp' || (path.startsWith('/api/') && path !== '/api/v1/openapi.json');
}

interface AuthenticateOptions {
  db: SqlTarget;
  credentials: Credentials;
  keyCache: KeyCache;
  limiter: RateLimiter;
  oauth: Pick<OAuthSettings, 'publicUrl'>;
}

/** An OAuth access token at the door it was issued for (MCP or REST), or null when the request carries none. */
function oauthPrincipal(ctx: Parameters<Middleware>[0], options: AuthenticateOptions): Promise<Principal> | null {
  const match = /^Bearer +(\S+) *$/i.exec(ctx.get('authorization') || '');
  const door = doorOf(ctx.path);
  if (!match || !door || !isAccessToken(match[1])) return null;
  const resources = resourcesFor(ctx, options.oauth);
  return resolveAccessToken(options.db, options.credentials.serverSecret, match[1], options.keyCache, resources, door);
}

/**
 * The caller of a request as its credential resolves now (an OAuth access token or a key; no rate
 * limit charged): what an open MCP stream asks before each delivery, so a revoked or expired
 * credential, or one whose permissions changed, is judged anew.
 */
export function principalNow(options: Omit<AuthenticateOptions, 'limiter'>): (ctx: Parameters<Middleware>[0]) => Promise<Principal> {
  return (ctx) =>
    oauthPrincipal(ctx, options as AuthenticateOptions) ??
    resolvePrincipal(options.db, options.credentials, ctx.get('authorization') || undefined, undefined, options.keyCache);
}

/**
 * Resolves the caller once per request (`ctx.state.principal`) and charges an agent key one
 * request against its rate limit, with the `RateLimit` headers on every answer; over the limit
 * it throws the 429 (rendered by the error middleware). On PostgreSQL the key lookup and the
 * count share one statement.
 */
export function authenticate(options: AuthenticateOptions): Middleware {
  const { db, credentials, keyCache, limiter } = options;
  return async (ctx, next) => {
    if (!needsPrincipal(ctx)) return next();
    let counted: RateLimitResult | undefined;
    const viaOAuth = oauthPrincipal(ctx, options);
    const lookup: KeyLookup | undefined =
      limiter instanceof PostgresRateLimiter
        ? async (digest) => {
            const { row, result } = await limiter.selectAndHit<KeyRow & { usable: boolean }>(KEY_LOOKUP_SQL, digest);
            counted = result;
            return row;
          }
        : undefined;
    const header = ctx.get('authorization') || undefined;
    const principal: Principal = viaOAuth
      ? await viaOAuth
      : !header && ctx.path === '/graphql'
        ? await personOf(ctx)
        : await resolvePrincipal(db, credentials, header, lookup, keyCache);
    ctx.state.principal = principal;
    if (principal.kind === 'agent') {
      const result = counted ?? (await limiter.hit(principal.keyId));
      ctx.set('RateLimit-Policy', `"default";q=${result.limit};w=${limiter.windowSeconds}`);
      ctx.set('RateLimit', `"default";r=${result.remaining};t=${result.resetSeconds}`);
      if (!result.allowed) throw rateLimitedError(result, limiter.windowSeconds);
    }
    await next();
  };
}
