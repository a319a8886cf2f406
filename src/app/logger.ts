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
const SECRET_QUERY = /([?&](?:code|state|session_state|id_token|access_token|token)=)[^&#]*/gi;

/** A request URL as logged: secret query values replaced. */
export function loggedUrl(url: string): string {
  return url.replace(SECRET_QUERY, '$1[Redacted]');
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
          req: { method: ctx.method, url: loggedUrl(ctx.url), headers: ctx.headers },
          status: ctx.status,
          ms: Math.round(performance.now() - started),
          requestId: ctx.state.requestId,
        },
        'request',
      );
    }
  };
}
