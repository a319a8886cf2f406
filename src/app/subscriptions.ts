import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import { GraphQLError, parse, specifiedRules, validate, type GraphQLSchema, type ValidationRule } from 'graphql';
import type { Context as WsContext, SubscribePayload } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import type { Logger } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import type { KeyCache } from '../auth/keyCache.js';
import { safeEqual } from '../auth/keys.js';
import { resolvePrincipal, type Credentials } from '../auth/principal.js';
import { csrfTokenOf, memberPrincipal, sessionTokenInCookies, signedInByToken, type SessionDeps } from '../identity/sessions.js';
import type { Principal, RequestContext } from '../context.js';
import type { SqlTarget } from '../db/sql.js';
import { classifyError, UnauthorizedError, type DomainError } from '../errors.js';
import type { SocketLeases } from '../live/socketLeases.js';
import { rateLimitedError, type RateLimiter } from '../rateLimit.js';
import { operationRootFields } from './graphqlLimits.js';
import { SocketGuard, type SocketLimits } from './socketGuard.js';

/** A WebSocket message (a subscribe with its query) may be at most this large (past it: 1009). */
const MAX_MESSAGE_BYTES = 64 * 1024;
const KEEP_ALIVE_MS = 12_000;

interface SubscriptionOptions {
  schema: GraphQLSchema;
  validationRules: readonly ValidationRule[];
  db: SqlTarget;
  credentials: Credentials;
  keyCache: KeyCache;
  limiter: RateLimiter;
  leases: SocketLeases;
  limits: SocketLimits;
  logger: Logger;
  makeContext(principal: Principal, requestId: string, currentPrincipal: () => Promise<Principal>): RequestContext;
  /** People's sessions: a socket from the console may be authenticated by its session cookie. */
  sessions: SessionDeps;
  /** The client address of an upgrade request (TRUST_PROXY), for the per-address caps. */
  addressOf(request: IncomingMessage): string;
}

/** How a socket authenticated by a session cookie names its credential internally (never sent or logged). */
const SESSION_CREDENTIAL = 'Session ';

interface Caller {
  principal: Principal;
  header: string | undefined;
}

type Extra = { socket: WebSocket; request: IncomingMessage };

/**
 * GraphQL over WebSocket at /graphql (graphql-ws, protocol `graphql-transport-ws`), for
 * subscriptions (and any other operation). The credential is the `authorization` of the
 * connection_init payload (or the upgrade request's header); who may hold a socket, and for how
 * long, is the SocketGuard's call (caps per process, per client address, per key and per
 * organization; connection_init charged to the key's rate limit; sockets closed with 4403 once
 * their credential is revoked, expires or changes). Each operation resolves the credential again
 * (a key revoked since is refused with `unauthorized`), is validated under the HTTP door's limits
 * and charged to the key's rate limit like a request per root field of the operation that runs;
 * errors carry the same codes. A subscription re-checks its caller before every delivery (see
 * services/live.ts), holds one of the caller's slots, and ends with `rate_limited` when its client
 * falls too far behind.
 */
export function subscriptionServer(options: SubscriptionOptions) {
  const callers = new WeakMap<object, Caller>();
  const authorize = async (header: string | undefined): Promise<Principal> => {
    if (!header?.startsWith(SESSION_CREDENTIAL))
      return resolvePrincipal(options.db, options.credentials, header, undefined, options.keyCache);
    const signedIn = await signedInByToken(options.sessions, header.slice(SESSION_CREDENTIAL.length));
    return signedIn ? memberPrincipal(signedIn) : { kind: 'invalid' };
  };
  const guard = new SocketGuard({ ...options, resolve: authorize });
  let wss: WebSocketServer | null = null;
  let disposable: { dispose(): void | Promise<void> } | null = null;
  const callerOf = (ctx: WsContext): Caller => callers.get(ctx) ?? { principal: { kind: 'anonymous' }, header: undefined };
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
      wss = new WebSocketServer({ server, path: '/graphql', maxPayload: MAX_MESSAGE_BYTES, verifyClient: guard.verifyClient });
      guard.watch(wss);
      disposable = useServer<Record<string, unknown> | undefined, Extra>(
        {
          schema: options.schema,
          connectionInitWaitTimeout: options.limits.initTimeoutMs,
          validate: (schema, document) => validate(schema, document, [...specifiedRules, ...options.validationRules]),
          onConnect: async (ctx) => {
            const header = await credentialOf(ctx.connectionParams, ctx.extra.request, options.sessions);
            const principal = await guard.admit(ctx.extra.socket, header);
            if (!principal) return false; // the guard has closed the socket with its own code and reason
            callers.set(ctx, { principal, header });
            return true;
          },
          onSubscribe: (ctx, _id, payload) => chargeOperation(callerOf(ctx), payload, authorize, options.limiter),
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
      guard.quietSocketErrors(wss);
    },
    /** Open WebSocket connections (tests). */
    get connections(): number {
      return wss?.clients.size ?? 0;
    },
    /** This process's sockets: open, not yet through connection_init, admitted (tests). */
    get stats() {
      return guard.stats;
    },
    async close(): Promise<void> {
      await guard.close();
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

/**
 * The credential of a socket: the `authorization` of connection_init (or the upgrade request's
 * header); else the session cookie of the upgrade request, when connection_init carries that
 * session's CSRF token (`csrf`), so another site's page cannot open a socket on a person's cookie.
 */
async function credentialOf(
  params: Record<string, unknown> | undefined,
  request: IncomingMessage,
  sessions: SessionDeps,
): Promise<string | undefined> {
  const fromParams = params?.authorization ?? params?.Authorization;
  if (typeof fromParams === 'string') return fromParams;
  if (request.headers.authorization) return request.headers.authorization;
  const token = sessionTokenInCookies(request.headers.cookie);
  if (!token || typeof params?.csrf !== 'string') return undefined;
  const signedIn = await signedInByToken(sessions, token);
  return signedIn && safeEqual(params.csrf, csrfTokenOf(signedIn)) ? `${SESSION_CREDENTIAL}${token}` : undefined;
}

/**
 * Before an operation on a socket runs: its caller is authorised as its credential stands now,
 * not as it stood when the connection opened, and an agent key is charged one request per root
 * field of the operation that runs (the one `operationName` names), as over HTTP.
 */
async function chargeOperation(
  caller: Caller,
  payload: SubscribePayload,
  authorize: (header: string | undefined) => Promise<Principal>,
  limiter: RateLimiter,
): Promise<GraphQLError[] | undefined> {
  const principal = await authorize(caller.header);
  if (principal.kind === 'anonymous' || principal.kind === 'invalid') return refuse(new UnauthorizedError());
  caller.principal = principal;
  if (principal.kind !== 'agent') return;
  let fields: number;
  try {
    fields = Math.max(1, operationRootFields(parse(payload.query), payload.operationName));
  } catch {
    return; // graphql-ws reports the parse error
  }
  for (let i = 0; i < fields; i++) {
    const result = await limiter.hit(principal.keyId);
    if (!result.allowed) return refuse(rateLimitedError(result, limiter.windowSeconds));
  }
}

/** An operation refused before it runs: graphql-ws passes the errors through onError, which classifies them by their domain error. */
function refuse(error: DomainError): GraphQLError[] {
  return [new GraphQLError(error.message, { originalError: error })];
}

export type SubscriptionServer = ReturnType<typeof subscriptionServer>;
