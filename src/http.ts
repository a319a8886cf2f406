import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Middleware } from 'koa';
import helmet from 'helmet';
import { freshEm } from './db/orm.js';
import { sql } from './db/sql.js';

export const MAX_URL_LENGTH = 8 * 1024;

/** Echoes a sane incoming X-Request-Id, or makes one; logs and audit events carry it. */
export const requestId: Middleware = async (ctx, next) => {
  const incoming = ctx.get('x-request-id');
  ctx.state.requestId = /^[\w.:-]{1,128}$/.test(incoming) ? incoming : randomUUID();
  ctx.set('X-Request-Id', ctx.state.requestId);
  await next();
};

/**
 * Security headers (helmet's); no CSP on the JSON API (the Sandbox page and images set their own).
 * Helmet's answer never depends on the request, so it is computed once and replayed on every
 * response (helmet itself runs a dozen middlewares per request).
 */
export const securityHeaders: Middleware = (() => {
  const headers: [string, string][] = [];
  const recorder = { setHeader: (name: string, value: string) => headers.push([name, String(value)]), removeHeader: () => undefined };
  helmet({ contentSecurityPolicy: false, crossOriginEmbedderPolicy: false, crossOriginResourcePolicy: { policy: 'cross-origin' } })({} as never, recorder as never, () => undefined);
  return async (ctx, next) => {
    for (const [name, value] of headers) ctx.res.setHeader(name, value);
    await next();
  };
})();

/** Refuses over-long URLs (414) before any work; header size is capped by Node (431 past 16 KiB). */
export const urlLimit: Middleware = async (ctx, next) => {
  if (ctx.url.length > MAX_URL_LENGTH) {
    ctx.status = 414;
    ctx.body = { error: { code: 'invalid_request', message: `The URL is longer than ${MAX_URL_LENGTH} bytes.`, status: 414, details: null } };
    return;
  }
  await next();
};

/**
 * CORS: the public documents (`/api/v1/openapi.json`, `/uploads/…`) may be read from any origin;
 * the authenticated API (REST, GraphQL, MCP) only from origins listed in CORS_ORIGINS (none by
 * default: agents are not browsers, and a browser page should not hold an agent key).
 */
export function cors(allowedOrigins: string[]): Middleware {
  const allowed = new Set(allowedOrigins);
  return async (ctx, next) => {
    const origin = ctx.get('origin');
    const publicDoc = ctx.path === '/api/v1/openapi.json' || ctx.path.startsWith('/uploads/');
    if (origin && (publicDoc || allowed.has(origin) || allowed.has('*'))) {
      ctx.set('Access-Control-Allow-Origin', publicDoc && !allowed.has(origin) ? '*' : origin);
      ctx.vary('Origin');
      if (!publicDoc) ctx.set('Access-Control-Expose-Headers', 'Link, ETag, Retry-After, RateLimit, RateLimit-Policy, X-Request-Id, X-Search-Ranking, X-Search-Fallback, Idempotent-Replayed');
      if (ctx.method === 'OPTIONS') {
        ctx.set('Access-Control-Allow-Methods', 'GET, POST, PUT, PATCH, DELETE');
        ctx.set('Access-Control-Allow-Headers', 'Authorization, Content-Type, If-Match, Idempotency-Key, X-Request-Id, apollo-require-preflight, mcp-protocol-version');
        ctx.set('Access-Control-Max-Age', '600');
        ctx.status = 204;
        return;
      }
    }
    await next();
  };
}

/** `/healthz`: the process answers (with its uptime and memory). `/readyz`: the database answers and no migration is pending. */
export function health(orm: MikroORM): Middleware {
  return async (ctx, next) => {
    if (ctx.path === '/healthz') {
      const { rss, heapUsed } = process.memoryUsage();
      ctx.body = { status: 'ok', uptimeSeconds: Math.round(process.uptime()), rssBytes: rss, heapUsedBytes: heapUsed };
      return;
    }
    if (ctx.path !== '/readyz') return next();
    try {
      const em = freshEm(orm);
      await Promise.race([sql(em, 'select 1'), new Promise((_, reject) => setTimeout(() => reject(new Error('database did not answer within 2 s')), 2000).unref())]);
      const pending = await orm.getMigrator().getPendingMigrations();
      if (pending.length) throw new Error(`${pending.length} migration(s) pending`);
      ctx.body = { status: 'ready', database: 'ok', migrations: 'applied' };
    } catch (error) {
      ctx.status = 503;
      ctx.set('Retry-After', '1');
      ctx.body = { error: { code: 'unavailable', message: `Not ready: ${(error as Error).message}`, status: 503, details: null } };
    }
  };
}
