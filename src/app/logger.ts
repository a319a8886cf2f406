import pino, { type DestinationStream, type Level, type Logger } from 'pino';
import type { Middleware } from '../http/middleware.js';

/** Values that never reach a log line: Authorization headers, cookies (sessions) and keys, wherever a line carries them. */
const REDACT = [
  'req.headers.authorization',
  '*.authorization',
  '*.headers.authorization',
  'req.headers.cookie',
  '*.headers.cookie',
  '*.key',
  '*.apiKey',
];

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
          req: { method: ctx.method, url: ctx.url, headers: ctx.headers },
          status: ctx.status,
          ms: Math.round(performance.now() - started),
          requestId: ctx.state.requestId,
        },
        'request',
      );
    }
  };
}
