import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { ApolloServer, type ApolloServerPlugin, type BaseContext } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled } from '@apollo/server/plugin/disabled';
import { ApolloServerPluginLandingPageLocalDefault, ApolloServerPluginLandingPageProductionDefault } from '@apollo/server/plugin/landingPage/default';
import { koaMiddleware } from '@as-integrations/koa';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { graphqlUploadKoa } from 'graphql-upload-minimal';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import pino, { type Logger } from 'pino';
import { createRestApi } from '../rest/index.js';
import { createMcpMiddleware } from '../rest/mcp.js';
import { ROUTES } from '../rest/routes.js';
import type { DbConnection } from '../mikro-orm.config.js';
import { AuthChangeListener, KeyCache } from './auth/keyCache.js';
import { effectivePermissions } from './auth/permissions.js';
import { KEY_LOOKUP_SQL, resolvePrincipal, type Credentials, type KeyLookup, type KeyRow } from './auth/principal.js';
import type { Principal, RequestContext } from './context.js';
import { startEmbedded, type EmbeddedDatabase } from './db/embedded.js';
import { freshEm, migrate, openOrm, pgClientConfig } from './db/orm.js';
import { relaxedPool } from './db/sql.js';
import { classifyError, UnauthorizedError } from './errors.js';
import { MemoryRateLimiter, PostgresRateLimiter, type RateLimiter, type RateLimitResult } from './rateLimit.js';
import { cors, health, requestId, securityHeaders, urlLimit } from './http.js';
import { buildAppSchema } from './schema.js';
import { backgroundEmbedder, DisabledEmbedder, embedderFromEnv, type Embedder } from './search/embedder.js';
import { VectorIndex } from './search/vectors.js';
import { EmbeddingWorker } from './search/worker.js';
import { WebhookDispatcher } from './webhooks/dispatcher.js';
import { IdempotencyStore } from './services/idempotency.js';
import { loadCredentials } from './services/settings.js';
import { readUpload, UPLOAD_LIMITS } from './services/uploads.js';

export const VERSION = '1.0.0';

export interface ServerOptions {
  port?: number;
  host?: string;
  /** A real PostgreSQL; without it the embedded PGlite is used. */
  databaseUrl?: string;
  /** DATABASE_POOL_MAX: connections for single statements on a PostgreSQL server (default 20); transactions get half as many, and 5 more serve the search log, rate limits and change notifications. */
  poolMax?: number;
  /** Embedded data directory (kept across restarts); omit with `embeddedDump` for an in-memory copy. */
  dataDir?: string;
  /** Start the embedded database from a `dumpDataDir()` tarball (tests). */
  embeddedDump?: Blob;
  adminToken?: string;
  keyHashSecret?: string;
  /** Requests per key per window (CONTRACT: RATE_LIMIT_MAX / RATE_LIMIT_WINDOW_S, default 600 per 60 s). */
  rateLimit?: { max: number; windowSeconds: number };
  logger?: Logger;
  /** Sandbox landing page on GET /graphql (default: not in production). */
  sandbox?: boolean;
  /** Embedder for semantic search (default: from EMBEDDINGS / EMBEDDINGS_URL, else the local model). */
  embedder?: Embedder;
  /** Run the background embedding worker (default true). */
  embeddingWorker?: boolean;
  /** CORS_ORIGINS: browser origins allowed to call the authenticated API (default none). */
  corsOrigins?: string[];
  /** OUTBOUND_ALLOW_LOOPBACK: let spec fetches and webhooks reach loopback addresses (tests, local development). */
  outboundAllowLoopback?: boolean;
  /** Run the webhook dispatcher (default true), and its retry delays (default DEFAULT_RETRY_SCHEDULE_MS). */
  webhookDispatcher?: boolean;
  webhookRetryScheduleMs?: number[];
}

export interface RunningServer {
  url: string;
  port: number;
  orm: MikroORM;
  logger: Logger;
  /** Embeds everything queued so far (tests, backfill). */
  drainEmbeddings(): Promise<number>;
  /** One fan-out and delivery round of the webhook dispatcher (tests). */
  dispatchWebhooks(): Promise<number>;
  /** Where vectors live: the pgvector column, or the portable float32 column ranked in process. */
  vectorStore: 'pgvector' | 'portable';
  openapi: Record<string, unknown>;
  /** Names of the agent tools served at /mcp (one per route). */
  toolNames: string[];
  close(): Promise<void>;
}

/** Boots everything: database, migrations, schema, GraphQL, REST; resolves once it listens. */
export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  const logger = options.logger ?? pino({ redact: ['req.headers.authorization', '*.authorization', '*.key'] });
  let embedded: EmbeddedDatabase | null = null;
  let connection: DbConnection;
  if (options.databaseUrl) {
    connection = { clientUrl: options.databaseUrl };
  } else {
    embedded = await startEmbedded({ dataDir: options.dataDir, loadDataDir: options.embeddedDump });
    connection = embedded.connection;
  }
  const orm = await openOrm(connection, options.databaseUrl ? (options.poolMax ?? 20) : 8);
  try {
    const applied = await migrate(orm, connection, Boolean(options.databaseUrl));
    if (applied.length) logger.info({ migrations: applied }, 'applied migrations');
    const credentials = await loadCredentials(freshEm(orm), {
      adminToken: options.adminToken,
      keyHashSecret: options.keyHashSecret,
      announceAdminToken: (token) => logger.warn(`ADMIN_TOKEN was not set; generated one (shown once, store it now): ${token}`),
    });
    return await listen(orm, credentials, options, logger, embedded);
  } catch (error) {
    await orm.close();
    await embedded?.close();
    throw error;
  }
}

async function listen(orm: MikroORM, credentials: Credentials, options: ServerOptions, logger: Logger, embedded: EmbeddedDatabase | null): Promise<RunningServer> {
  const schema = await buildAppSchema();
  const embedder = options.embedder ?? embedderFromEnv(process.env);
  const vectorIndex = await VectorIndex.open(freshEm(orm));
  const idempotencyStore = new IdempotencyStore(() => freshEm(orm));
  const background = backgroundEmbedder(embedder);
  const worker = new EmbeddingWorker(orm, background, vectorIndex, logger);
  if (options.embeddingWorker !== false && !(embedder instanceof DisabledEmbedder)) worker.start();
  // Housekeeping shared by every process: expired idempotency records (the rate limiter deletes its old windows itself).
  const housekeeping = setInterval(() => {
    idempotencyStore.purge().catch((error) => logger.warn({ err: error }, 'idempotency purge failed'));
  }, 10 * 60_000);
  housekeeping.unref();
  const dispatcher = new WebhookDispatcher(orm, logger, { allowLoopback: options.outboundAllowLoopback ?? false, retryScheduleMs: options.webhookRetryScheduleMs });
  if (options.webhookDispatcher !== false) dispatcher.start();

  // Keys are looked up once and then served from memory; on a shared PostgreSQL every process
  // hears revocations and plan changes (LISTEN) and empties its cache, and uses none while deaf.
  const keyCache = new KeyCache(!options.databaseUrl);
  const authListener = options.databaseUrl ? new AuthChangeListener(pgClientConfig({ clientUrl: options.databaseUrl }), keyCache, logger) : null;
  await authListener?.start();

  const limits = options.rateLimit ?? { max: 600, windowSeconds: 60 };
  const limiter: RateLimiter = options.databaseUrl
    ? new PostgresRateLimiter(relaxedPool(orm.em), limits.max, limits.windowSeconds)
    : new MemoryRateLimiter(limits.max, limits.windowSeconds);

  // The shared EntityManager for single statements (RequestContext.db): never holds entities.
  const statementEm = freshEm(orm);
  /** One EntityManager per request (forked when first used), with the principal the authentication middleware resolved. */
  const createContext = async (ctx: Koa.Context, requireCredential: boolean): Promise<RequestContext> => {
    const principal = ctx.state.principal as Principal;
    if (requireCredential && (principal.kind === 'anonymous' || principal.kind === 'invalid')) throw new UnauthorizedError();
    let em: EntityManager | undefined;
    return {
      get em() {
        return (em ??= freshEm(orm));
      },
      db: statementEm, principal, requestId: ctx.state.requestId, serverSecret: credentials.serverSecret, search: { embedder, index: vectorIndex }, outbound: { allowLoopback: options.outboundAllowLoopback ?? false },
    };
  };

  /** Resolves the key once per request and counts it against the key's rate limit (REST and GraphQL). */
  const authenticate: Koa.Middleware = async (ctx, next) => {
    // On PostgreSQL the key lookup and the rate-limit count share one statement.
    let counted: RateLimitResult | undefined;
    const lookup: KeyLookup | undefined = limiter instanceof PostgresRateLimiter
      ? async (digest) => {
        const { row, result } = await limiter.selectAndHit<KeyRow & { usable: boolean }>(KEY_LOOKUP_SQL, digest);
        counted = result;
        return row;
      }
      : undefined;
    const principal = await resolvePrincipal(statementEm, credentials, ctx.get('authorization') || undefined, lookup, keyCache);
    ctx.state.principal = principal;
    if (principal.kind === 'agent') {
      const r = counted ?? (await limiter.hit(principal.keyId));
      ctx.set('RateLimit-Policy', `"default";q=${r.limit};w=${limiter.windowSeconds}`);
      ctx.set('RateLimit', `"default";r=${r.remaining};t=${r.resetSeconds}`);
      if (!r.allowed) {
        ctx.set('Retry-After', String(r.resetSeconds));
        const message = `Rate limit of ${r.limit} requests per ${limiter.windowSeconds} s exceeded; retry in ${r.resetSeconds} s.`;
        const details = { limit: r.limit, windowSeconds: limiter.windowSeconds, retryAfterSeconds: r.resetSeconds };
        ctx.status = 429;
        ctx.body = ctx.path === '/graphql'
          ? { errors: [{ message, extensions: { code: 'rate_limited', details } }] }
          : { error: { code: 'rate_limited', message, status: 429, details } };
        return;
      }
    }
    await next();
  };

  const idempotency = idempotencyStore;
  const agentKeyId = (ctx: Koa.Context) => {
    const principal = ctx.state.principal as Principal | undefined;
    return principal?.kind === 'agent' ? principal.keyId : null;
  };
  const logRequestError = (error: unknown, requestId: string | undefined) => logger.error({ err: error, requestId }, 'request failed');
  const rest = createRestApi({ schema, createContext, agentKeyId, idempotency, logError: logRequestError }, ROUTES, {
    version: VERSION,
    logError: (error, ctx) => logger.error({ err: error, requestId: ctx.state.requestId }, 'request failed'),
  });

  const mcp = createMcpMiddleware(rest.routes, { schema, createContext, agentKeyId, idempotency, logError: logRequestError }, {
    version: VERSION,
    permissionsOf: (ctx) => {
      const principal = ctx.state.principal as Principal | undefined;
      return principal?.kind === 'agent' ? effectivePermissions(principal.permissions, principal.role) : null;
    },
  });

  // One query cannot exhaust the server: depth, aliases, directives, tokens and cost are capped.
  const armor = new ApolloArmor({
    maxDepth: { n: 15, ignoreIntrospection: false }, // the standard introspection query is 13 deep
    maxAliases: { n: 15 },
    maxDirectives: { n: 20 },
    maxTokens: { n: 3000 },
    costLimit: { maxCost: 20_000 },
    blockFieldSuggestion: { enabled: false },
  }).protect();
  const apollo = new ApolloServer<BaseContext>({
    schema,
    introspection: true,
    allowBatchedHttpRequests: false,
    validationRules: armor.validationRules,
    plugins: [
      // No cache hints are used; without this plugin Apollo does not wrap every field resolver of
      // the shared schema (which REST executes too).
      ApolloServerPluginCacheControlDisabled(),
      ...(armor.plugins as unknown as ApolloServerPlugin<BaseContext>[]),
      (options.sandbox ?? process.env.NODE_ENV !== 'production')
        ? ApolloServerPluginLandingPageLocalDefault({ embed: true })
        : ApolloServerPluginLandingPageProductionDefault({ footer: false }),
    ],
    formatError: (formatted: GraphQLFormattedError, error: unknown) => {
      const classified = classifyError(error as import('graphql').GraphQLError);
      if (classified.code === 'invalid_request' && formatted.extensions?.code && formatted.extensions.code !== 'BAD_USER_INPUT' && !(error as { originalError?: unknown }).originalError) {
        return formatted; // Apollo's own parse/validation errors keep their codes
      }
      if (classified.unexpected) logger.error({ err: (error as { originalError?: unknown }).originalError ?? error }, 'graphql resolver failed');
      return { message: classified.message, locations: formatted.locations, path: formatted.path, extensions: { code: classified.code, details: classified.details } };
    },
  });
  await apollo.start();

  const app = new Koa();
  app.proxy = false;
  app.use(requestId);
  app.use(urlLimit);
  app.use(securityHeaders);
  app.use(cors(options.corsOrigins ?? []));
  app.use(health(orm));
  app.use(rest.errors);
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      if (ctx.path !== '/graphql') throw error;
      const classified = classifyError(new GraphQLError('request failed', { originalError: error as Error }));
      logger.error({ err: error, requestId: ctx.state.requestId }, 'graphql request failed');
      ctx.status = classified.code === 'unavailable' ? 503 : 500;
      ctx.body = { errors: [{ message: classified.message, extensions: { code: classified.code } }] };
    }
  });
  app.use(async (ctx, next) => (ctx.path === '/graphql' || ctx.path === '/mcp' || (ctx.path.startsWith('/api/') && ctx.path !== '/api/v1/openapi.json') ? authenticate(ctx, next) : next()));
  app.use(mcp.middleware);
  app.use(rest.middleware);
  const graphqlBody = koaBody({ jsonLimit: '1mb', multipart: false });
  const graphqlHandler = koaMiddleware(apollo, {
    context: async ({ ctx }) => createContext(ctx, false),
  });
  // GraphQL multipart requests (uploads) first, JSON bodies otherwise, then Apollo (STACK pitfall 4).
  const graphqlUploads = graphqlUploadKoa({ maxFileSize: UPLOAD_LIMITS.maxBytes, maxFiles: 1 });
  app.use(async (ctx, next) => {
    if (ctx.path !== '/graphql') return next();
    const run = () => graphqlHandler(ctx, next);
    if (ctx.is('multipart/form-data')) await graphqlUploads(ctx, run);
    else await graphqlBody(ctx, run);
  });
  // Uploaded images: public, immutable, served with their own type from the database.
  app.use(async (ctx, next) => {
    const match = /^\/uploads\/([^/]+)$/.exec(ctx.path);
    if (!match || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    const file = await readUpload(freshEm(orm), match[1]);
    if (!file) {
      ctx.status = 404;
      ctx.body = { error: { code: 'not_found', message: 'No such upload.', status: 404, details: null } };
      return;
    }
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Content-Security-Policy', "default-src 'none'");
    ctx.set('ETag', `"${file.sha256}"`);
    ctx.type = file.contentType;
    ctx.body = file.data;
  });
  app.on('error', (error) => logger.error({ err: error }, 'koa error'));

  const server: Server = await new Promise((resolve) => {
    const s = app.listen(options.port ?? 8080, options.host ?? '0.0.0.0', () => resolve(s));
    s.requestTimeout = 60_000; // a whole request (including a 10 MiB upload) within a minute
    s.headersTimeout = 15_000;
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  logger.info({ port, database: embedded ? 'embedded' : 'postgresql', vectors: vectorIndex.pgvector ? 'pgvector' : 'portable', embedder: embedder.model }, `listening on ${url}`);
  return {
    url,
    port,
    orm,
    logger,
    openapi: rest.openapi,
    toolNames: mcp.tools.map((t) => t.tool.name),
    drainEmbeddings: () => worker.drain(),
    dispatchWebhooks: () => dispatcher.passOnce(),
    vectorStore: vectorIndex.pgvector ? 'pgvector' : 'portable',
    async close() {
      // Drain: stop accepting, let requests in flight finish (10 s at most), drop idle keep-alives.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 10_000).unref())]);
      server.closeAllConnections();
      clearInterval(housekeeping);
      await worker.stop();
      await dispatcher.stop();
      await embedder.close?.();
      if (background !== embedder) await background.close?.();
      await limiter.close?.();
      await authListener?.close();
      keyCache.close();
      await apollo.stop();
      await orm.close();
      await embedded?.close();
    },
  };
}
