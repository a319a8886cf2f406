import type { MikroORM } from '@mikro-orm/postgresql';
import type { Context } from 'koa';
import { freshEm } from '../db/orm.js';
import { DomainError } from '../errors.js';
import { readText } from '../http/body.js';
import { parseJsonText } from '../http/json.js';
import type { Middleware } from '../http/middleware.js';
import type { RateLimiter } from '../rateLimit.js';
import { decideConsent, showConsent, type Sessions } from './authorize.js';
import { registerClient, type MetadataFetcher } from './clients.js';
import { OAuthError } from './errors.js';
import { ENDPOINTS, wellKnownDocument } from './oauthMetadata.js';
import { resourcesFor } from './resources.js';
import { revokeToken } from './revocation.js';
import type { OAuthSettings } from './oauthSettings.js';
import { tokenRequest } from './token.js';

/** What the authorization server is built from. */
export interface OAuthServerOptions {
  orm: MikroORM;
  serverSecret: string;
  settings: OAuthSettings;
  outbound: { allowLoopback: boolean };
  /** Counts Dynamic Client Registrations per client address (shared across processes on PostgreSQL). */
  registrations: RateLimiter;
  /** Count fetches of metadata documents per client address and for the whole service (shared like registrations). */
  metadataFetches: { perAddress: RateLimiter; perService: RateLimiter };
  sessions: Sessions;
}

const FORM_LIMIT = 16 * 1024;
const tooLarge = (limit: number) => new DomainError('payload_too_large', `The request body may be at most ${limit} bytes.`, { limit });

/** JSON endpoints any origin may call (public clients in a browser): no cookies are involved. */
const OPEN_PATHS = new Set([ENDPOINTS.token, ENDPOINTS.register, ENDPOINTS.revoke]);

/**
 * Some hosts build the endpoints at the server's root instead of reading the advertised metadata
 * (Claude Desktop: `/authorize`, `/token`, `/register`): a browser asking `GET /authorize` is sent
 * on to the advertised endpoint with its query; the POSTs are answered as the advertised endpoints
 * answer them.
 */
const ROOT_ALIASES = { '/authorize': ENDPOINTS.authorize, '/token': ENDPOINTS.token, '/register': ENDPOINTS.register } as const;

function answerJson(ctx: Context, status: number, body: unknown): void {
  ctx.status = status;
  ctx.set('Cache-Control', 'no-store');
  ctx.body = body;
}

function answerError(ctx: Context, error: OAuthError): void {
  answerJson(ctx, error.status, { error: error.error, error_description: error.description });
}

async function readForm(ctx: Context): Promise<URLSearchParams> {
  if (!ctx.is('application/x-www-form-urlencoded'))
    throw new OAuthError('invalid_request', 'The body must be application/x-www-form-urlencoded');
  const form = new URLSearchParams(await readText(ctx, FORM_LIMIT, tooLarge));
  // Percent-decoding gives no unpaired surrogates (bad UTF-8 becomes U+FFFD), but %00 is a NUL no lookup may carry.
  for (const [name, value] of form)
    if (value.includes('\u0000')) throw new OAuthError('invalid_request', `${name.slice(0, 100)} must not contain NUL (U+0000)`);
  return form;
}

async function readJson(ctx: Context): Promise<unknown> {
  if (!ctx.is('application/json')) throw new OAuthError('invalid_client_metadata', 'The body must be application/json');
  const parsed = parseJsonText(await readText(ctx, FORM_LIMIT, tooLarge));
  if (parsed.ok) return parsed.value;
  throw new OAuthError('invalid_client_metadata', parsed.reason === 'syntax' ? 'The body is not valid JSON' : `The body ${parsed.message}`);
}

/**
 * The metadata-document fetcher of a request: each fetch is charged to the client's address
 * (TRUST_PROXY decides which) and to the whole service first; past either, 429 with Retry-After.
 */
function metadataFetcher(ctx: Context, options: OAuthServerOptions): MetadataFetcher {
  return {
    allowLoopback: options.outbound.allowLoopback,
    async charge() {
      for (const [limiter, key, whose] of [
        [options.metadataFetches.perAddress, `oauth-metadata:${ctx.ip}`, 'from this address'],
        [options.metadataFetches.perService, 'oauth-metadata:*', 'by this service'],
      ] as const) {
        const counted = await limiter.hit(key);
        if (!counted.allowed)
          throw new OAuthError(
            'temporarily_unavailable',
            `Too many client metadata documents fetched ${whose}; retry in ${counted.resetSeconds} s.`,
            429,
            counted.resetSeconds,
          );
      }
    },
  };
}

/** POST /oauth/register (RFC 7591), rate-limited per client address. */
async function register(ctx: Context, options: OAuthServerOptions): Promise<void> {
  const counted = await options.registrations.hit(`oauth-register:${ctx.ip}`);
  if (!counted.allowed) {
    ctx.set('Retry-After', String(counted.resetSeconds));
    return answerError(ctx, new OAuthError('rate_limited', 'Too many client registrations from this address; retry later.', 429));
  }
  const body = await readJson(ctx);
  answerJson(ctx, 201, await registerClient(freshEm(options.orm), body, ctx.ip));
}

/**
 * The service as its own OAuth 2.1 authorization server and protected resource: the well-known
 * metadata documents, registration (DCR; Client ID Metadata Documents need none), the consent
 * step, the token endpoint and revocation. Mounted before authentication: none of these take a key.
 */
export function oauthServer(options: OAuthServerOptions): Middleware {
  return async (ctx, next) => {
    const root = ROOT_ALIASES[ctx.path as keyof typeof ROOT_ALIASES];
    if (root) {
      if (ctx.method === 'GET' && root === ENDPOINTS.authorize) return void ctx.redirect(`${root}${ctx.search}`);
      ctx.path = root; // answered as the advertised endpoint itself: clients do not follow redirects of a POST alike
    }
    const isWellKnown = ctx.path.startsWith('/.well-known/');
    if (!isWellKnown && !ctx.path.startsWith('/oauth/')) return next();
    const resources = resourcesFor(ctx, options.settings);
    if (isWellKnown || OPEN_PATHS.has(ctx.path as never)) {
      ctx.set('Access-Control-Allow-Origin', '*');
      if (ctx.method === 'OPTIONS') {
        ctx.set('Access-Control-Allow-Methods', isWellKnown ? 'GET' : 'POST');
        ctx.set('Access-Control-Allow-Headers', 'Content-Type, mcp-protocol-version');
        ctx.status = 204;
        return;
      }
    }
    if (isWellKnown) {
      const document = ctx.method === 'GET' || ctx.method === 'HEAD' ? wellKnownDocument(ctx.path, resources) : undefined;
      if (!document) return next();
      // Without PUBLIC_URL the issuer comes from the request's Host: a shared cache must not keep one client's answer for another.
      if (options.settings.publicUrl) ctx.set('Cache-Control', 'public, max-age=300');
      else {
        ctx.set('Cache-Control', 'no-store');
        ctx.vary('Host');
      }
      ctx.body = document;
      return;
    }
    const em = freshEm(options.orm);
    const route = `${ctx.method} ${ctx.path}`;
    try {
      const consent = { ...options, em, resources, fetcher: metadataFetcher(ctx, options) };
      if (route === `GET ${ENDPOINTS.authorize}`) return await showConsent(ctx, consent);
      if (route === `POST ${ENDPOINTS.authorize}`) return await decideConsent(ctx, consent, await readForm(ctx));
      if (route === `POST ${ENDPOINTS.token}`)
        return answerJson(
          ctx,
          200,
          await tokenRequest({ ...options, em, resources, requestId: ctx.state.requestId as string }, await readForm(ctx)),
        );
      if (route === `POST ${ENDPOINTS.revoke}`) {
        await revokeToken(em, options.serverSecret, await readForm(ctx));
        return answerJson(ctx, 200, {});
      }
      if (route === `POST ${ENDPOINTS.register}`) return await register(ctx, options);
    } catch (error) {
      if (error instanceof OAuthError) return answerError(ctx, error);
      throw error;
    }
    return next();
  };
}
