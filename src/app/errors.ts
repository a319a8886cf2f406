import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { envelope, errorAnswer } from '../http/envelope.js';
import type { Middleware } from '../http/middleware.js';

/**
 * The one place errors are rendered, mounted first: whatever any door (REST, GraphQL, MCP,
 * health, uploads) throws becomes its answer here. REST and the rest answer the envelope;
 * `/graphql` answers GraphQL's shape (`errors[].extensions.code`) with the same status. Headers
 * already set (rate-limit state, `Allow`) are kept; unexpected errors are logged, never shown.
 */
export function renderErrors(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      if (ctx.headerSent) return;
      const answer = errorAnswer(error, (e) => logger.error({ err: e, requestId: ctx.state.requestId }, 'request failed'));
      ctx.respond = true;
      ctx.status = answer.status;
      for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value);
      const { code, message, details } = answer.body.error;
      ctx.body = ctx.path === '/graphql' ? { errors: [{ message, extensions: { code, details } }] } : answer.body;
    }
  };
}

/**
 * Requests Node refuses before Koa sees them (headers over 16 KiB, malformed HTTP) answer the
 * envelope too, with 431 or 400, and the connection is closed.
 */
export function renderClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable) return socket.destroy();
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const { status, body } = tooLarge
      ? envelope('headers_too_large', 'The request headers are larger than 16 KiB.')
      : envelope('invalid_request', 'The request is not valid HTTP.');
    const text = JSON.stringify(body);
    const reason = tooLarge ? 'Request Header Fields Too Large' : 'Bad Request';
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  });
}
