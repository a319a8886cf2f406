import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import {
  GraphQLError,
  Kind,
  parse,
  specifiedRules,
  validate,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type ValidationRule,
} from 'graphql';
import type { Context as WsContext } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import type { Logger } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import type { KeyCache } from '../auth/keyCache.js';
import { resolvePrincipal, type Credentials } from '../auth/principal.js';
import type { Principal, RequestContext } from '../context.js';
import type { SqlTarget } from '../db/sql.js';
import { classifyError, UnauthorizedError, type DomainError } from '../errors.js';
import { rateLimitedError, type RateLimiter } from '../rateLimit.js';
import { countRootFields } from './graphqlLimits.js';

/** A WebSocket message (a subscribe with its query) may be at most this large. */
const MAX_MESSAGE_BYTES = 64 * 1024;
/** Open WebSocket connections per process; past it a new connection is refused with 1013 (try again later). */
const MAX_CONNECTIONS = 1000;
const KEEP_ALIVE_MS = 12_000;

interface SubscriptionOptions {
  schema: GraphQLSchema;
  validationRules: readonly ValidationRule[];
  db: SqlTarget;
  credentials: Credentials;
  keyCache: KeyCache;
  limiter: RateLimiter;
  logger: Logger;
  makeContext(principal: Principal, requestId: string, currentPrincipal: () => Promise<Principal>): RequestContext;
}

interface Caller {
  principal: Principal;
  header: string | undefined;
}

/**
 * GraphQL over WebSocket at /graphql (graphql-ws, protocol `graphql-transport-ws`), for
 * subscriptions (and any other operation). The credential is the `authorization` of the
 * connection_init payload (or the upgrade request's header): no valid credential, and the
 * connection is closed with 4403. Each operation resolves the credential again (a key revoked
 * since is refused with `unauthorized`), is validated under the HTTP door's limits and charged to
 * the key's rate limit like a request per root field; errors carry the same codes. A
 * subscription re-checks its caller before every delivery (see services/live.ts), holds one of
 * the caller's slots, and ends with `rate_limited` when its client falls too far behind.
 */
export function subscriptionServer(options: SubscriptionOptions) {
  const callers = new WeakMap<object, Caller>();
  let wss: WebSocketServer | null = null;
  let disposable: { dispose(): void | Promise<void> } | null = null;

  const callerOf = (ctx: WsContext): Caller => callers.get(ctx) ?? { principal: { kind: 'anonymous' }, header: undefined };
  const authorize = (header: string | undefined) => resolvePrincipal(options.db, options.credentials, header, undefined, options.keyCache);
  const formatErrors = (errors: readonly GraphQLError[]) =>
    errors.map((error) => {
      const classified = classifyError(error);
      if (classified.unexpected) options.logger.error({ err: error.originalError ?? error }, 'graphql subscription failed');
      return new GraphQLError(classified.message, {
        path: error.path,
        nodes: error.nodes,
        extensions: { code: classified.code, details: classified.details },
      });
    });

  return {
    attach(server: Server): void {
      wss = new WebSocketServer({ server, path: '/graphql', maxPayload: MAX_MESSAGE_BYTES });
      wss.on('connection', (socket: WebSocket) => {
        if (wss && wss.clients.size > MAX_CONNECTIONS) socket.close(1013, 'Too many connections; try again later');
      });
      disposable = useServer<Record<string, unknown> | undefined, { request: IncomingMessage }>(
        {
          schema: options.schema,
          connectionInitWaitTimeout: 10_000,
          validate: (schema, document) => validate(schema, document, [...specifiedRules, ...options.validationRules]),
          onConnect: async (ctx) => {
            const fromParams = ctx.connectionParams?.authorization ?? ctx.connectionParams?.Authorization;
            const header = typeof fromParams === 'string' ? fromParams : ctx.extra.request.headers.authorization;
            const principal = await authorize(header);
            if (principal.kind === 'anonymous' || principal.kind === 'invalid') return false;
            callers.set(ctx, { principal, header });
            return true;
          },
          onSubscribe: async (ctx, _id, payload) => {
            // Every operation on the socket is authorised as its credential stands now, not as it
            // stood when the connection opened: a key revoked or changed since is judged anew.
            const caller = callerOf(ctx);
            const principal = await authorize(caller.header);
            if (principal.kind === 'anonymous' || principal.kind === 'invalid') return refuse(new UnauthorizedError());
            caller.principal = principal;
            if (principal.kind !== 'agent') return;
            // One charge per root field, as over HTTP.
            let fields = 1;
            try {
              const document = parse(payload.query);
              const fragments = Object.fromEntries(
                document.definitions
                  .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
                  .map((d) => [d.name.value, d]),
              );
              const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION);
              if (operation) fields = Math.max(1, countRootFields(operation, fragments));
            } catch {
              return; // graphql-ws reports the parse error
            }
            for (let i = 0; i < fields; i++) {
              const result = await options.limiter.hit(principal.keyId);
              if (!result.allowed) return refuse(rateLimitedError(result, options.limiter.windowSeconds));
            }
          },
          context: (ctx) => {
            const caller = callerOf(ctx);
            // A subscription asks before each delivery: the key may have been revoked, expired or changed since.
            return options.makeContext(caller.principal, randomUUID(), () => authorize(caller.header));
          },
          onNext: (_ctx, _id, _payload, _args, result) =>
            result.errors?.length ? { ...result, errors: formatErrors(result.errors) } : undefined,
          onError: (_ctx, _id, _payload, errors) => formatErrors(errors),
        },
        wss,
        KEEP_ALIVE_MS,
      );
    },
    /** Open WebSocket connections (tests). */
    get connections(): number {
      return wss?.clients.size ?? 0;
    },
    async close(): Promise<void> {
      if (!wss) return;
      const server = wss;
      wss = null;
      for (const client of server.clients) client.close(1001, 'Server shutting down');
      // A client that does not answer the close within a second is cut off (ws would wait 30 s).
      const cutOff = setTimeout(() => server.clients.forEach((client) => client.terminate()), 1000);
      await disposable?.dispose();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      clearTimeout(cutOff);
    },
  };
}

/** An operation refused before it runs: graphql-ws passes the errors through onError, which classifies them by their domain error. */
function refuse(error: DomainError): GraphQLError[] {
  return [new GraphQLError(error.message, { originalError: error })];
}

export type SubscriptionServer = ReturnType<typeof subscriptionServer>;
