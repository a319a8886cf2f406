import { randomUUID } from 'node:crypto';
import helmet from 'helmet';
import { BODY_LIMITS } from '../contract/rules.js';
import { DomainError } from '../errors.js';
import type { Middleware } from '../http/middleware.js';

/** Echoes a sane incoming X-Request-Id, or makes one; logs and audit events carry it. */
export const requestId: Middleware = async (ctx, next) => {
  const incoming = ctx.get('x-request-id');
  const id = /^[\w.:-]{1,128}$/.test(incoming) ? incoming : randomUUID();
  ctx.state.requestId = id;
  ctx.set('X-Request-Id', id);
  await next();
};

/**
 * Security headers (helmet's); no CSP on the JSON API (the GraphiQL page and its assets, and images, set their own;
 * Apollo Sandbox, loaded from Apollo's CDN, gets none).
 * Helmet's answer never depends on the request, so it is computed once and replayed on every
 * response (helmet itself runs a dozen middlewares per request).
 */
export const securityHeaders: Middleware = (() => {
  const headers: [string, string][] = [];
  const recorder = { setHeader: (name: string, value: string) => headers.push([name, String(value)]), removeHeader: () => undefined };
  helmet({ contentSecurityPolicy: false, crossOriginEmbedderPolicy: false, crossOriginResourcePolicy: { policy: 'cross-origin' } })(
    {} as never,
    recorder as never,
    () => undefined,
  );
  return async (ctx, next) => {
    for (const [name, value] of headers) ctx.res.setHeader(name, value);
    await next();
  };
})();

/** Refuses over-long URLs (414) before any work; header size is capped by Node (431 past 16 KiB). */
export const urlLimit: Middleware = async (ctx, next) => {
  if (ctx.url.length > BODY_LIMITS.url) throw new DomainError('uri_too_long', `The URL is longer than ${BODY_LIMITS.url} bytes.`);
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
      if (!publicDoc)
        ctx.set(
          'Access-Control-Expose-Headers',
          'Link, ETag, Retry-After, RateLimit, RateLimit-Policy, X-Request-Id, X-Search-Ranking, X-Search-Fallback, X-Search-Suggestions, Idempotent-Replayed',
        );
      if (ctx.method === 'OPTIONS') {
        ctx.set('Access-Control-Allow-Methods', 'GET, POST, PUT, PATCH, DELETE');
        ctx.set(
          'Access-Control-Allow-Headers',
          'Authorization, Content-Type, If-Match, Idempotency-Key, X-Request-Id, apollo-require-preflight, mcp-protocol-version',
        );
        ctx.set('Access-Control-Max-Age', '600');
        ctx.status = 204;
        return;
      }
    }
    await next();
  };
}
