import type { MikroORM } from '@mikro-orm/postgresql';
import Koa from 'koa';
import type { Logger } from 'pino';
import { createRestApi, type RestApi } from '../../rest/index.js';
import { AnswerCache } from '../../rest/answerCache.js';
import { createMcpMiddleware } from '../../rest/mcp.js';
import type { OpenStreams } from '../../rest/mcpListen.js';
import { ROUTES } from '../../rest/routes/index.js';
import { authorize } from '../auth/authorize.js';
import { AuthChangeListener, KeyCache } from '../auth/keyCache.js';
import type { Permission } from '../auth/permissions.js';
import type { Credentials } from '../auth/principal.js';
import type { MemorySettings, Principal, RequestContext } from '../context.js';
import { freshEm } from '../db/orm.js';
import { directConfig, failoverOf } from '../db/sql.js';
import { requestTransaction } from '../store/unitOfWork.js';
import type { FailoverWatch } from '../db/failover.js';
import { closeSpecWorker } from '../openapi/spec.js';
import type { RateLimiter } from '../rateLimit.js';
import { buildAppSchema } from '../schema.js';
import { embedderFromEnv, type Embedder } from '../search/embedder.js';
import { embedderSettings } from '../config.js';
import { FullTextIndexes } from '../search/fullText.js';
import { VectorIndex } from '../search/vectors.js';
import { authenticate, createRateLimiter, principalNow } from './authenticate.js';
import { resourceSubscriptions } from '../services/resourceSubscriptions.js';
import { startBackground, type Background, type Retention } from './background.js';
import { workspaceArchive } from './archive.js';
import { consoleAssetHref, consoleAssets, consolePage, SIGN_IN_SCRIPT } from './console.js';
import { signInRoutes } from '../identity/signIn.js';
import { oidcSignIn, type OidcSettings } from '../identity/oidcSignIn.js';
import { DEFAULT_SESSION_SETTINGS, sessionSupport, type SessionSettings } from '../identity/sessions.js';
import { agentKeyIdOf, contextFactory, permissionsOf, requestContextMaker } from './context.js';
import { apiReferencePage } from './docs.js';
import { renderErrors } from './errors.js';
import { graphqlExplorer, type GraphQLExplorer } from './explorer.js';
import { createGraphQL } from './graphql.js';
import { armor } from './graphqlLimits.js';
import { subscriptionServer, type SubscriptionServer } from './subscriptions.js';
import type { SocketLimits } from './socketGuard.js';
import { LiveHub } from '../live/hub.js';
import { ReadRouter } from './readRouter.js';
import { readRouting, recordWriteNow, routeAsRead } from './readRouting.js';
import { createMetrics, metricsEndpoint, requestMetrics } from './metrics.js';
import { SocketLeases } from '../live/socketLeases.js';
import { databaseGate, health } from './health.js';
import { guidanceText } from '../services/guidance.js';
import { ActivityTally } from '../services/activity.js';
import { NoteAccessLog } from '../services/noteAccess.js';
import type { SqlTarget } from '../db/sql.js';
import { UnauthorizedError } from '../errors.js';
import type { EmbeddedDatabase } from '../db/embedded.js';
import { requestLog } from './logger.js';
import { cors, requestId, securityHeaders, urlLimit } from './http.js';
import { clientAddress, requestAddress, TRUST_NO_PROXY, type TrustProxy } from '../http/clientAddress.js';
import { publicUploads } from './uploads.js';
import { insufficientScope, missingScopes, oauthChallenges } from '../identity/bearer.js';
import { resourcesFor } from '../identity/resources.js';
import { oauthServer } from '../identity/oauthServer.js';
import type { OAuthSettings } from '../identity/oauthSettings.js';
import { oauthSessions } from '../identity/oauthSessions.js';

/** Socket errors that mean the client closed its connection while the answer was being written. */
const CLIENT_GONE = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE']);

export const VERSION = '1.0.0';

/** What the app is made of besides the database connection. */
export interface AppOptions {
  orm: MikroORM;
  logger: Logger;
  credentials: Credentials;
  /** A PostgreSQL server several processes may share (else the embedded database, one process). */
  databaseUrl?: string;
  rateLimit: { max: number; windowSeconds: number };
  embedder?: Embedder;
  embeddingWorker: boolean;
  webhookDispatcher: boolean;
  webhookRetryScheduleMs?: number[];
  outboundAllowLoopback: boolean;
  /** SEARCH_INDEX_MB in bytes: what this process's full-text indexes may hold (least recently searched workspaces dropped first). */
  searchIndexBytes: number;
  memory: MemorySettings;
  /** The `fetch` tool's cap on the characters of one answer (FETCH_MAX_CHARS; default 100,000). */
  fetchMaxChars?: number;
  corsOrigins: string[];
  explorer: GraphQLExplorer;
  /** GraphQL over WebSocket: caps per process, per client address, per key and per organization (WS_* settings). */
  sockets: SocketLimits;
  /** EVENT_RETENTION_DAYS / SEARCH_LOG_RETENTION_DAYS (default DEFAULT_RETENTION). */
  retention?: Retention;
  /** METRICS_TOKEN: the bearer token GET /metrics asks for (without it there is no /metrics). */
  metricsToken?: string;
  /** DATABASE_READ_URL: a streaming replica for reads that may lag (REST GETs, GraphQL queries, MCP reads), with REPLICA_MAX_LAG_S. */
  readReplica?: { url: string; maxLagSeconds: number };
  /** OAuth 2.1 for MCP and the REST API: token lifetimes, registration rate, public address (OAUTH_*, PUBLIC_URL). */
  oauth: OAuthSettings;
  /** People's sign-in: session lifetimes and PUBLIC_URL (default DEFAULT_SESSION_SETTINGS). */
  sessions?: SessionSettings;
  /** The deployment's identity provider for people's sign-in, if any. */
  oidc?: OidcSettings;
  /** The embedded database's thread, whose state /readyz and /metrics report (null on a PostgreSQL server). */
  embedded?: EmbeddedDatabase | null;
  /** TRUST_PROXY: which proxy may name the client's address in X-Forwarded-For (default none: the peer's address). */
  trustProxy?: TrustProxy;
}

/** The composed application and what its owner needs to run and stop it. */
export interface App {
  koa: Koa;
  rest: RestApi;
  toolNames: string[];
  background: Background;
  vectorIndex: VectorIndex;
  /** The workspaces' full-text indexes this process holds. */
  fullText: FullTextIndexes;
  embedder: Embedder;
  /** GraphQL over WebSocket (subscriptions): attached to the HTTP server once it listens. */
  subscriptions: SubscriptionServer;
  /** MCP change streams open in this process (ended first when the service closes). */
  mcpStreams: OpenStreams;
  live: LiveHub;
  /** The read replica's router (DATABASE_READ_URL), if one is configured. */
  reads: ReadRouter | null;
  /** This process's reads of memory notes, written apart from the reads. */
  noteAccess: NoteAccessLog;
  stop(): Promise<void>;
}

/** The parts every door shares: schema, search, background work, the key cache and the rate limiter. */
async function createDomain(options: AppOptions) {
  const schema = await buildAppSchema();
  const embedder = options.embedder ?? embedderFromEnv(embedderSettings());
  const vectorIndex = await VectorIndex.open(freshEm(options.orm));
  const fullText = new FullTextIndexes(freshEm(options.orm), options.searchIndexBytes);
  const background = startBackground({
    orm: options.orm,
    logger: options.logger,
    embedder,
    vectorIndex,
    embeddingWorker: options.embeddingWorker,
    webhookDispatcher: options.webhookDispatcher,
    nearDuplicates: options.memory.nearDuplicates,
    allowLoopback: options.outboundAllowLoopback,
    webhookRetryScheduleMs: options.webhookRetryScheduleMs,
    retention: options.retention,
  });
  // Keys are served from memory; on a shared PostgreSQL every process hears revocations and plan
  // changes (LISTEN) and empties its cache, and uses none while it cannot hear them.
  // Through a transaction pooler a LISTEN hears nothing: the listener uses DATABASE_DIRECT_URL, and with none
  // (DATABASE_URL pooled, DATABASE_DIRECT_URL unset or pooled too) the cache stays off: every request reads its key.
  const keyCache = new KeyCache(!options.databaseUrl);
  const direct = options.databaseUrl ? directConfig(options.orm.em) : null;
  if (options.databaseUrl && !direct)
    options.logger.warn('DATABASE_URL goes through a pooler and DATABASE_DIRECT_URL is not a direct connection: the key cache is off');
  const authListener = direct ? new AuthChangeListener(direct, keyCache, options.logger) : null;
  await authListener?.start();
  followFailovers(failoverOf(options.orm.em), options.logger, authListener);
  const limiter: RateLimiter = createRateLimiter(options.orm, Boolean(options.databaseUrl), options.rateLimit);
  const live = new LiveHub(options.orm, options.logger);
  const reads = options.readReplica
    ? new ReadRouter(options.orm, options.readReplica.url, { maxLagSeconds: options.readReplica.maxLagSeconds }, options.logger)
    : null;
  await reads?.start();
  const socketLeases = new SocketLeases(options.orm, options.logger);
  const activity = new ActivityTally(freshEm(options.orm), options.logger);
  const noteAccess = new NoteAccessLog(freshEm(options.orm), options.logger);
  const stop = async () => {
    await activity.stop();
    await noteAccess.stop();
    await live.close();
    await socketLeases.close();
    await background.stop();
    await embedder.close?.();
    await closeSpecWorker();
    await limiter.close?.();
    await authListener?.close();
    await reads?.close();
    keyCache.close();
  };
  return { schema, embedder, vectorIndex, fullText, background, keyCache, limiter, live, socketLeases, reads, activity, noteAccess, stop };
}

/** What REST and MCP need to run a route row: the schema, idempotency, answers kept for 304s, contexts and the authorization before the body. */
function routeBackend(
  domain: Awaited<ReturnType<typeof createDomain>>,
  options: AppOptions,
  createContext: ReturnType<typeof contextFactory>,
) {
  return {
    schema: domain.schema,
    idempotency: domain.background.idempotency,
    answers: new AnswerCache(),
    createContext,
    agentKeyId: agentKeyIdOf,
    logError: (error: unknown, requestId: string | undefined) => options.logger.error({ err: error, requestId }, 'request failed'),
    // The Scope is kept on the context: the operation's own check (its @Caller) uses it again instead of authorizing twice.
    authorize: async (context: unknown, workspace: string, permissions: readonly string[]) => {
      const ctx = context as RequestContext;
      ctx.authorized = { workspace, scope: await authorize(ctx, workspace, permissions as Permission[]) };
    },
    atomically: options.embedded ? undefined : requestAtomically(options.orm),
  };
}

/**
 * A request's work in one transaction (see RouteBackend.atomically): the request's EntityManager
 * and its statement target become the transaction's, so its services' statements and their own
 * transactions (savepoints) join it.
 */
function requestAtomically(orm: MikroORM) {
  return <T>(contextValue: unknown, work: (tx: SqlTarget) => Promise<{ value: T; commit: boolean }>): Promise<T> => {
    const ctx = contextValue as RequestContext;
    const em = freshEm(orm);
    Object.defineProperty(ctx, 'em', { value: em, configurable: true, writable: true });
    ctx.db = em;
    return requestTransaction(em, () => work(em));
  };
}

/**
 * The guidance of the workspace the caller's key (or OAuth grant) is bound to, for MCP's
 * instructions and /llms.txt: null without one (anonymous, an org-wide key, no guidance); a 401
 * for a credential that is not valid.
 */
/**
 * Logs the watch over the primary (a lost primary is a warning; the requests it fails are logged
 * on their own), and makes the key cache's listener listen on the new primary after a failover.
 */
function followFailovers(failover: FailoverWatch | null, logger: Logger, authListener: AuthChangeListener | null): void {
  failover?.on('lost', (reason: string) => logger.warn({ reason }, 'database connections lost: pools emptied, looking for the primary'));
  failover?.on('restored', (seconds: number, changed: boolean) => {
    logger.warn({ seconds, primaryChanged: changed }, changed ? 'a new primary serves: failover followed' : 'the primary serves again');
    if (changed) authListener?.reconnect();
  });
}

async function callerGuidance(state: { principal?: Principal }, db: SqlTarget): Promise<string | null> {
  const principal = state.principal;
  if (principal?.kind === 'invalid') throw new UnauthorizedError();
  return principal?.kind === 'agent' && principal.boundWorkspaceId ? guidanceText(db, principal.boundWorkspaceId) : null;
}

/** This process's metrics (served at /metrics with METRICS_TOKEN). */
function appMetrics(options: AppOptions, domain: Awaited<ReturnType<typeof createDomain>>, subscriptions: SubscriptionServer) {
  return createMetrics({
    orm: options.orm,
    reads: domain.reads,
    sockets: () => subscriptions.stats,
    subscriptions: () => domain.live.size,
    liveReads: () => domain.live.reads,
    routes: ROUTES,
    embedded: options.embedded ?? null,
    activity: domain.activity,
    fullText: () => domain.fullText.usage(),
  });
}

/**
 * The service's own OAuth 2.1 authorization server (metadata, registration, consent, tokens,
 * revocation), the OAuth challenges of MCP and REST, then the authentication of keys and tokens.
 */
function authentication(options: AppOptions, domain: Awaited<ReturnType<typeof createDomain>>) {
  const shared = Boolean(options.databaseUrl);
  const registrations = { max: options.oauth.registrationsPerHour, windowSeconds: 3600 };
  const fetches = options.oauth.metadataFetches;
  return [
    oauthServer({
      orm: options.orm,
      serverSecret: options.credentials.serverSecret,
      settings: options.oauth,
      outbound: { allowLoopback: options.outboundAllowLoopback },
      registrations: createRateLimiter(options.orm, shared, registrations),
      metadataFetches: {
        perAddress: createRateLimiter(options.orm, shared, { max: fetches.perAddress, windowSeconds: fetches.windowSeconds }),
        perService: createRateLimiter(options.orm, shared, { max: fetches.perService, windowSeconds: fetches.windowSeconds }),
      },
      sessions: oauthSessions(),
    }),
    oauthChallenges(options.oauth),
    authenticate({
      db: freshEm(options.orm),
      credentials: options.credentials,
      keyCache: domain.keyCache,
      limiter: domain.limiter,
      oauth: options.oauth,
    }),
  ];
}

/** An OAuth token's MCP tool call that its scopes do not cover is refused with 403 `insufficient_scope` before it runs. */
function scopeCheck(settings: OAuthSettings) {
  return (ctx: Koa.Context, permissions: readonly string[]) => {
    const principal = ctx.state.principal as Principal | undefined;
    if (principal?.kind !== 'agent' || !principal.oauth) return;
    const scopes = missingScopes(principal, permissions);
    if (scopes.length) throw insufficientScope(resourcesFor(ctx, settings), 'mcp', principal, scopes);
  };
}

/**
 * What people use: their sessions (installed on every request, before anything reads them), the
 * console's page and the sign-in routes.
 */
function peopleDoors(options: AppOptions, settings: SessionSettings) {
  const assets = consoleAssets();
  const sessions = sessionSupport({ db: freshEm(options.orm), serverSecret: options.credentials.serverSecret, settings });
  const oidc = options.oidc ? oidcSignIn(options.oidc, options.logger) : null;
  const signIn = signInRoutes({ providerName: options.oidc?.name ?? null, script: () => consoleAssetHref(assets, SIGN_IN_SCRIPT) }, oidc);
  return { sessions, pages: [consolePage(assets), signIn] };
}

/** GraphQL over WebSocket, with the socket caps of the guard and people's sessions. */
function socketDoor(
  options: AppOptions,
  domain: Awaited<ReturnType<typeof createDomain>>,
  makeContext: ReturnType<typeof requestContextMaker>,
  sessions: SessionSettings,
) {
  return subscriptionServer({
    schema: domain.schema,
    validationRules: armor().validationRules,
    db: freshEm(options.orm),
    credentials: options.credentials,
    keyCache: domain.keyCache,
    limiter: domain.limiter,
    leases: domain.socketLeases,
    limits: options.sockets,
    logger: options.logger,
    makeContext: (principal, requestId, currentPrincipal) => makeContext(principal, requestId, 'graphql', currentPrincipal),
    sessions: { db: freshEm(options.orm), serverSecret: options.credentials.serverSecret, settings: sessions },
    addressOf: (request) => requestAddress(request, options.trustProxy ?? TRUST_NO_PROXY),
  });
}

/** The doors of agents: REST and MCP, both generated from the route table and run on the same backend. */
function agentDoors(options: AppOptions, backend: ReturnType<typeof routeBackend>, domain: Awaited<ReturnType<typeof createDomain>>) {
  const guidanceDb = freshEm(options.orm);
  const guidanceOf = (ctx: { state: { principal?: Principal } }) => callerGuidance(ctx.state, guidanceDb);
  const rest = createRestApi(backend, ROUTES, VERSION, { rateLimit: options.rateLimit }, { guidanceOf });
  const mcp = createMcpMiddleware(rest.routes, backend, {
    version: VERSION,
    permissionsOf,
    refuseCall: scopeCheck(options.oauth),
    routeRead: routeAsRead,
    // The tool's write has committed: failing to record its position must not turn its answer into an error (the caller might retry it).
    recordWrite: (ctx) => recordWriteNow(ctx).catch((err) => options.logger.warn({ err }, "could not record the caller's write position")),
    guidanceOf,
    principalNow: principalNow({
      db: freshEm(options.orm),
      credentials: options.credentials,
      keyCache: domain.keyCache,
      oauth: options.oauth,
    }),
    subscriptions: resourceSubscriptions(freshEm(options.orm)),
  });
  return { rest, mcp };
}

/**
 * Builds the service: the domain, then its three doors (REST, MCP, GraphQL), composed on one Koa
 * app behind the shared middleware: request id, security headers, the one error renderer, URL cap,
 * CORS, health, the GraphiQL page when chosen (no key needed), and authentication with the rate limit.
 */
export async function createApp(options: AppOptions): Promise<App> {
  const domain = await createDomain(options);
  const contextDeps = {
    orm: options.orm,
    serverSecret: options.credentials.serverSecret,
    search: { embedder: domain.embedder, index: domain.vectorIndex, fullText: domain.fullText },
    outbound: { allowLoopback: options.outboundAllowLoopback },
    memory: { ...options.memory, access: domain.noteAccess },
    live: domain.live,
    sessions: options.sessions ?? DEFAULT_SESSION_SETTINGS,
    activity: domain.activity,
    documents: { maxChars: options.fetchMaxChars ?? 100_000 },
  };
  const createContext = contextFactory(contextDeps);
  const makeContext = requestContextMaker(contextDeps);
  const subscriptions = socketDoor(options, domain, makeContext, contextDeps.sessions);
  const backend = routeBackend(domain, options, createContext);
  const { rest, mcp } = agentDoors(options, backend, domain);
  const graphql = await createGraphQL({
    schema: domain.schema,
    limiter: domain.limiter,
    logger: options.logger,
    createContext,
  });
  const metrics = appMetrics(options, domain, subscriptions);
  const people = peopleDoors(options, contextDeps.sessions);
  const koa = new Koa();
  // Koa's own proxy handling stays off: the client's address comes from clientAddress (TRUST_PROXY), and
  // the protocol and host of a request are never taken from a header (PUBLIC_URL names the public address).
  koa.proxy = false;
  for (const middleware of [
    clientAddress(options.trustProxy ?? TRUST_NO_PROXY),
    requestMetrics(metrics),
    requestId,
    requestLog(options.logger),
    securityHeaders,
    renderErrors(options.logger),
    metricsEndpoint(metrics, options.metricsToken),
    urlLimit,
    cors(options.corsOrigins),
    health(options.orm, options.embedded ?? null, failoverOf(options.orm.em)),
    databaseGate(options.embedded ?? null, failoverOf(options.orm.em)),
    people.sessions,
    ...(options.explorer === 'off' ? [] : [graphqlExplorer(domain.schema, options.explorer)]),
    apiReferencePage(),
    ...people.pages,
    ...authentication(options, domain),
    readRouting(domain.reads),
    workspaceArchive(options.orm, options.credentials),
    mcp.middleware,
    rest.middleware,
    graphql.middleware,
    publicUploads(options.orm),
  ]) {
    koa.use(middleware);
  }
  koa.on('error', (error: { code?: string }) => logKoaError(options.logger, error));
  return {
    koa,
    rest,
    toolNames: mcp.tools.map((t) => t.tool.name),
    background: domain.background,
    vectorIndex: domain.vectorIndex,
    fullText: domain.fullText,
    embedder: domain.embedder,
    subscriptions,
    live: domain.live,
    reads: domain.reads,
    noteAccess: domain.noteAccess,
    mcpStreams: mcp.streams,
    async stop() {
      await mcp.streams.endAll();
      await subscriptions.close();
      await domain.stop();
      await graphql.stop();
    },
  };
}

/**
 * Logs an error Koa reports. A client that goes away while its answer streams (an SSE stream closed, a
 * download aborted) is no fault of the service: said at debug level, not as an internal error.
 */
function logKoaError(logger: Logger, error: { code?: string }): void {
  if (CLIENT_GONE.has(error?.code ?? '')) logger.debug({ err: error }, 'the client went away before its answer ended');
  else logger.error({ err: error }, 'koa error');
}
