import pino, { type DestinationStream, type Level, type Logger } from 'pino';
import type { Middleware } from '../http/middleware.js';

/** Values that never reach a log line: Authorization headers and keys, wherever a line carries them. */
const REDACT = [
  'req.headers.authorization',
  '*.authorization',
  '*.headers.authorization',
  '*.key',
  '*.apiKey',
  // A person's session cookie and its CSRF token.
  'req.headers.cookie',
  '*.headers.cookie',
  '*.cookie',
  'req.headers["x-csrf-token"]',
  '*.headers["x-csrf-token"]',
  '*.headers["set-cookie"]',
];

/** Query parameters whose values never reach a log line (an identity provider's answer carries its code and state there). */
const SECRET_PARAMS = new Set(['code', 'state', 'session_state', 'id_token', 'access_token', 'refresh_token', 'token', 'code_verifier']);
/** How deep a query nested in a parameter's value (`return_to=%2Foauth%2Fauthorize%3Fstate%3D…`) is looked into. */
const NESTED_DEPTH = 3;

function decoded(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/** A query string (`a=1&b=2`) with the values of secret parameters replaced, here and in the queries its values carry. */
function loggedQuery(query: string, depth: number): string {
  return query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return pair;
      const name = pair.slice(0, eq);
      if (SECRET_PARAMS.has(decoded(name).toLowerCase())) return `${name}=[Redacted]`;
      const raw = pair.slice(eq + 1);
      // A value holding a URL or a query of its own (a percent-encoded `return_to`) is redacted the same way, decoded.
      if (depth >= NESTED_DEPTH || !(raw.includes('=') || /%3d/i.test(raw))) return pair;
      const value = decoded(raw);
      const logged = loggedTarget(value, depth + 1);
      return logged === value ? pair : `${name}=${encodeURIComponent(logged)}`;
    })
    .join('&');
}

/** A URL, a path with a query, or a bare query, with secret query values replaced. */
function loggedTarget(target: string, depth: number): string {
  const q = target.indexOf('?');
  return q < 0 ? loggedQuery(target, depth) : `${target.slice(0, q + 1)}${loggedQuery(target.slice(q + 1), depth)}`;
}

/** A request URL as logged: secret query values replaced, also inside queries nested (percent-encoded) in other parameters. */
export function loggedUrl(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : `${url.slice(0, q + 1)}${loggedQuery(url.slice(q + 1), 0)}`;
}

/** The request headers as logged: the Referer (a URL, with its query) redacted like the request's own. */
function loggedHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  const referer = headers.referer;
  return typeof referer === 'string' ? { ...headers, referer: loggedUrl(referer) } : headers;
}

/** The service's logger: JSON lines at `level` (LOG_LEVEL, default info) with keys redacted. */
export function createLogger(options: { level?: Level | 'silent'; destination?: DestinationStream } = {}): Logger {
  const settings = { level: options.level ?? 'info', redact: REDACT };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}

/** At debug level, one line per request once it is answered: method, URL, headers (redacted), status, time. */
export function requestLog(logger: Logger): Middleware {
  return async (ctx, next) => {
    if (!logger.isLevelEnabled('debug')) return next();
    const started = performance.now();
    try {
      await next();
    } finally {
      logger.debug(
        {
          req: { method: ctx.method, url: loggedUrl(ctx.url), headers: loggedHeaders(ctx.headers) },
          status: ctx.status,
          ms: Math.round(performance.now() - started),
          requestId: ctx.state.requestId,
        },
        'request',
      );
    }
  };
}
