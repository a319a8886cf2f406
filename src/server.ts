import 'reflect-metadata';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { DbConnection } from './db/config.js';
import { createApp, type App } from './app/createApp.js';
import { DEFAULT_EXPLORER, type GraphQLExplorer } from './app/explorer.js';
import type { OidcSettings } from './identity/oidcSignIn.js';
import { DEFAULT_SESSION_SETTINGS, type SessionSettings } from './identity/sessions.js';
import { DEFAULT_SOCKET_LIMITS, type SocketLimits } from './app/socketGuard.js';
import { DEFAULT_RETENTION, type Retention } from './app/background.js';
import { renderClientErrors } from './app/errors.js';
import { createLogger } from './app/logger.js';
import { startEmbedded, type EmbeddedDatabase } from './db/embedded.js';
import { freshEm, migrate, openOrm } from './db/orm.js';
import { eventWriter } from './store/events.js';
import type { Embedder } from './search/embedder.js';
import type { LiveHub } from './live/hub.js';
import type { ReadRouter } from './app/readRouter.js';
import { loadCredentials } from './services/settings.js';
import { defaultOf, type Config } from './config.js';
import { embedderFromEnv } from './search/embedder.js';

import { DEFAULT_OAUTH_SETTINGS, type OAuthSettings } from './identity/oauthSettings.js';
import type { TrustProxy } from './http/clientAddress.js';

export { VERSION } from './app/createApp.js';

export interface ServerOptions {
  port?: number;
  host?: string;
  /** A real PostgreSQL; without it the embedded PGlite is used. */
  databaseUrl?: string;
  /**
   * DATABASE_DIRECT_URL: the same database without a transaction pooler in between, for what needs a session
   * (LISTEN, session advisory locks, migrations); default `databaseUrl`.
   */
  databaseDirectUrl?: string;
  /** DATABASE_READ_URL: a streaming replica of the database for reads that may lag by its replication delay. */
  databaseReadUrl?: string;
  /** METRICS_TOKEN: GET /metrics answers a scraper presenting it as a bearer token; without it there is no /metrics. */
  metricsToken?: string;
  /** REPLICA_MAX_LAG_S: a replica further behind serves no reads (default 30). */
  replicaMaxLagSeconds?: number;
  /**
   * DATABASE_POOL_MAX: connections for single statements on a PostgreSQL server (default 20); transactions get half as
   * many, and 5 more serve the search log, rate limits and change notifications.
   */
  poolMax?: number;
  /** Embedded data directory (kept across restarts); omit with `embeddedDump` for an in-memory copy. */
  dataDir?: string;
  /** Start the embedded database from a `dumpDataDir()` tarball (tests). */
  embeddedDump?: Blob;
  adminToken?: string;
  keyHashSecret?: string;
  /** PUBLIC_URL: the service's public origin (OAuth issuer and resources, sign-in links, Secure cookies); default each request's own. */
  publicUrl?: string;
  /** Requests per key per window (RATE_LIMIT_MAX / RATE_LIMIT_WINDOW_S, default 600 per 60 s). */
  rateLimit?: { max: number; windowSeconds: number };
  logger?: Logger;
  /** Where text for the person at the terminal goes as it is, not as a log line (the generated admin token); default standard error. */
  announce?: (text: string) => void;
  /** GRAPHQL_EXPLORER: what GET /graphql shows a browser (default: GraphiQL, served by the service, which offers Apollo Sandbox). */
  explorer?: GraphQLExplorer;
  /** Embedder for semantic search (default: from EMBEDDINGS / EMBEDDINGS_URL, else the local model). */
  embedder?: Embedder;
  /** Run the background embedding worker (default true). */
  embeddingWorker?: boolean;
  /** CORS_ORIGINS: browser origins allowed to call the authenticated API (default none). */
  corsOrigins?: string[];
  /** OUTBOUND_ALLOW_LOOPBACK: let spec fetches and webhooks reach loopback addresses (tests, local development). */
  outboundAllowLoopback?: boolean;
  /** Revisions kept per memory note (default 50; 0 keeps no history). */
  memoryHistoryKept?: number;
  /** The `fetch` tool's cap on the characters of one answer (FETCH_MAX_CHARS). */
  fetchMaxChars?: number;
  /** Whether a PUT that creates a note reports near-duplicates (default on). */
  memoryNearDuplicates?: boolean;
  /** Whether written notes are queued for embedding, for semantic and hybrid memory search (default on). */
  memoryEmbeddings?: boolean;
  /** SEARCH_INDEX_MB: the memory this process's full-text indexes may take before the least recently searched workspace's is dropped. */
  searchIndexMb?: number;
  /** Run the webhook dispatcher (default true), and its retry delays (default DEFAULT_RETRY_SCHEDULE_MS). */
  webhookDispatcher?: boolean;
  webhookRetryScheduleMs?: number[];
  /** People's sessions: SESSION_IDLE_MINUTES, SESSION_MAX_HOURS (default DEFAULT_SESSION_SETTINGS). */
  sessions?: Omit<SessionSettings, 'publicUrl'>;
  /** The deployment's identity provider for people's sign-in (OIDC_* settings), if any. */
  oidc?: OidcSettings;
  /** GraphQL over WebSocket limits (WS_* settings); each one left out keeps its default (DEFAULT_SOCKET_LIMITS). */
  sockets?: Partial<SocketLimits>;
  /** Days the event table and the search log keep rows (EVENT_RETENTION_DAYS, SEARCH_LOG_RETENTION_DAYS; 0 keeps them for ever). */
  retention?: Partial<Retention>;
  /** OAuth for MCP and REST (OAUTH_* settings); each one left out keeps its default (DEFAULT_OAUTH_SETTINGS). */
  oauth?: Partial<Omit<OAuthSettings, 'publicUrl'>>;
  /**
   * Called once the embedded database's thread died and cannot be started again (no data directory, or
   * too many restarts): `npm start` exits non-zero so a supervisor restarts the service. Meanwhile
   * every request is answered 503.
   */
  onDatabaseFailure?: (reason: string) => void;
  /** TRUST_PROXY: which proxy may name the client's address (default none: every per-address limit reads the peer's). */
  trustProxy?: TrustProxy;
}

export interface RunningServer {
  url: string;
  port: number;
  orm: MikroORM;
  logger: Logger;
  /** Embeds everything queued so far for one workspace (tests: never another test file's queue on a shared database). */
  drainEmbeddings(workspaceId: string): Promise<number>;
  /** One fan-out and delivery round of the webhook dispatcher (tests). */
  dispatchWebhooks(): Promise<number>;
  /** Writes the note reads this process has gathered now instead of within the second (tests). */
  flushNoteAccess(): Promise<void>;
  /** Where vectors live: the pgvector column, or the portable float32 column ranked in process. */
  vectorStore: 'pgvector' | 'portable';
  openapi: Record<string, unknown>;
  /** This process's live-update hub (GraphQL subscriptions). */
  live: LiveHub;
  /** This process's WebSockets: open, not yet through connection_init, admitted (tests). */
  socketStats(): { open: number; unauthenticated: number; admitted: number };
  /** The read replica's router (DATABASE_READ_URL), if one is configured: where reads went, the lag. */
  reads: ReadRouter | null;
  /** Names of the agent tools served at /mcp (one per route). */
  toolNames: string[];
  /** The embedded database's thread (null on a PostgreSQL server). */
  embedded: EmbeddedDatabase | null;
  close(): Promise<void>;
}

/** The server's options from the whole configuration (`loadConfig`): what `npm start` runs with. */
export function optionsFromConfig(config: Config): ServerOptions {
  return {
    port: config.PORT,
    databaseUrl: config.DATABASE_URL,
    databaseDirectUrl: config.DATABASE_DIRECT_URL,
    databaseReadUrl: config.DATABASE_READ_URL,
    metricsToken: config.METRICS_TOKEN,
    replicaMaxLagSeconds: config.REPLICA_MAX_LAG_S,
    poolMax: config.DATABASE_POOL_MAX,
    dataDir: config.DATA_DIR,
    adminToken: config.ADMIN_TOKEN,
    keyHashSecret: config.KEY_HASH_SECRET,
    outboundAllowLoopback: config.OUTBOUND_ALLOW_LOOPBACK,
    webhookDispatcher: config.WEBHOOK_DISPATCHER,
    memoryHistoryKept: config.MEMORY_HISTORY_KEPT,
    fetchMaxChars: config.FETCH_MAX_CHARS,
    memoryNearDuplicates: config.MEMORY_NEAR_DUPLICATES,
    memoryEmbeddings: config.MEMORY_EMBEDDINGS,
    searchIndexMb: config.SEARCH_INDEX_MB,
    embedder: embedderFromEnv(config),
    explorer: config.GRAPHQL_EXPLORER,
    corsOrigins: config.CORS_ORIGINS,
    publicUrl: config.PUBLIC_URL,
    retention: { eventsDays: config.EVENT_RETENTION_DAYS, searchLogDays: config.SEARCH_LOG_RETENTION_DAYS },
    rateLimit: { max: config.RATE_LIMIT_MAX, windowSeconds: config.RATE_LIMIT_WINDOW_S },
    sessions: { idleSeconds: config.SESSION_IDLE_MINUTES * 60, absoluteSeconds: config.SESSION_MAX_HOURS * 3600 },
    oidc:
      config.OIDC_ISSUER && config.OIDC_CLIENT_ID
        ? { issuer: config.OIDC_ISSUER, clientId: config.OIDC_CLIENT_ID, clientSecret: config.OIDC_CLIENT_SECRET, name: config.OIDC_NAME }
        : undefined,
    trustProxy: config.TRUST_PROXY,
    sockets: {
      maxConnections: config.WS_MAX_CONNECTIONS,
      perKey: config.WS_SOCKETS_PER_KEY,
      perOrganization: config.WS_SOCKETS_PER_ORG,
      unauthenticatedPerAddress: config.WS_UNAUTHENTICATED_PER_ADDRESS,
      newPerAddressPerSecond: config.WS_NEW_PER_ADDRESS_PER_S,
      initTimeoutMs: config.WS_INIT_TIMEOUT_MS,
      recheckMs: config.WS_RECHECK_MS,
    },
    oauth: {
      accessTokenTtlS: config.OAUTH_ACCESS_TOKEN_TTL_S,
      refreshTokenTtlS: config.OAUTH_REFRESH_TOKEN_TTL_S,
      registrationsPerHour: config.OAUTH_REGISTRATIONS_PER_HOUR,
      metadataFetches: {
        perAddress: config.OAUTH_METADATA_FETCHES_PER_ADDRESS,
        perService: config.OAUTH_METADATA_FETCHES_PER_MINUTE,
        windowSeconds: DEFAULT_OAUTH_SETTINGS.metadataFetches.windowSeconds,
      },
    },
  };
}

/** The database a server runs on: a PostgreSQL server, or the embedded one it owns. */
interface Database {
  orm: MikroORM;
  connection: DbConnection;
  /** Where sessions live (DATABASE_DIRECT_URL). */
  direct: DbConnection;
  embedded: EmbeddedDatabase | null;
  close(): Promise<void>;
}

async function openDatabase(options: ServerOptions, logger: Logger): Promise<Database> {
  const embedded = options.databaseUrl ? null : await startEmbedded({ dataDir: options.dataDir, loadDataDir: options.embeddedDump });
  embedded?.on('down', (reason: string) =>
    logger.error({ reason }, 'the embedded database thread died; requests get 503 until it is back'),
  );
  embedded?.on('up', () => logger.warn({ restarts: embedded.health().restarts }, 'the embedded database thread was started again'));
  embedded?.on('failed', (reason: string) => {
    logger.fatal({ reason }, 'the embedded database cannot be started again');
    options.onDatabaseFailure?.(reason);
  });
  const connection: DbConnection = embedded ? embedded.connection : { clientUrl: options.databaseUrl };
  const direct: DbConnection = options.databaseDirectUrl && options.databaseUrl ? { clientUrl: options.databaseDirectUrl } : connection;
  const orm = await openOrm(connection, options.databaseUrl ? (options.poolMax ?? defaultOf('DATABASE_POOL_MAX')) : 8, direct, [
    eventWriter,
  ]);
  return {
    orm,
    connection,
    direct,
    embedded,
    async close() {
      await orm.close();
      await embedded?.close();
    },
  };
}

/** Boots everything: database, migrations, credentials, the app; resolves once it listens. */
export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  const logger = options.logger ?? createLogger();
  const database = await openDatabase(options, logger);
  try {
    const applied = await migrate(database.orm, database.connection, Boolean(options.databaseUrl), database.direct);
    if (applied.length) logger.info({ migrations: applied }, 'applied migrations');
    const credentials = await loadCredentials(freshEm(database.orm), {
      adminToken: options.adminToken,
      keyHashSecret: options.keyHashSecret,
      announceAdminToken: (token) => announceAdminToken(token, logger, options.announce),
    });
    const app = await createApp({
      orm: database.orm,
      logger,
      credentials,
      databaseUrl: options.databaseUrl,
      rateLimit: options.rateLimit ?? { max: defaultOf('RATE_LIMIT_MAX'), windowSeconds: defaultOf('RATE_LIMIT_WINDOW_S') },
      embedder: options.embedder,
      embeddingWorker: options.embeddingWorker !== false,
      webhookDispatcher: options.webhookDispatcher !== false,
      webhookRetryScheduleMs: options.webhookRetryScheduleMs,
      outboundAllowLoopback: options.outboundAllowLoopback ?? false,
      searchIndexBytes: (options.searchIndexMb ?? defaultOf('SEARCH_INDEX_MB')) * 1024 * 1024,
      fetchMaxChars: options.fetchMaxChars ?? defaultOf('FETCH_MAX_CHARS'),
      memory: {
        historyKept: options.memoryHistoryKept ?? defaultOf('MEMORY_HISTORY_KEPT'),
        nearDuplicates: options.memoryNearDuplicates ?? true,
        embeddings: options.memoryEmbeddings ?? true,
      },
      corsOrigins: options.corsOrigins ?? [],
      explorer: options.explorer ?? DEFAULT_EXPLORER,
      sockets: { ...DEFAULT_SOCKET_LIMITS, ...options.sockets },
      retention: { ...DEFAULT_RETENTION, ...options.retention },
      metricsToken: options.metricsToken,
      readReplica:
        options.databaseUrl && options.databaseReadUrl
          ? { url: options.databaseReadUrl, maxLagSeconds: options.replicaMaxLagSeconds ?? defaultOf('REPLICA_MAX_LAG_S') }
          : undefined,
      oauth: { ...DEFAULT_OAUTH_SETTINGS, ...options.oauth, publicUrl: options.publicUrl },
      sessions: { ...DEFAULT_SESSION_SETTINGS, ...options.sessions, publicUrl: options.publicUrl },
      oidc: options.oidc,
      embedded: database.embedded,
      trustProxy: options.trustProxy,
    });
    return await listen(app, database, options, logger);
  } catch (error) {
    await database.close();
    throw error;
  }
}

/**
 * The generated admin token, once: the log says so (without the token), and the token is printed on a
 * line of its own, so a person can copy it whole (a JSON log line wraps it among other fields).
 */
function announceAdminToken(token: string, logger: Logger, announce: (text: string) => void = (text) => process.stderr.write(text)): void {
  logger.warn('ADMIN_TOKEN was not set; generated one, printed once on its own line of standard error: store it now');
  announce(`\nThe admin token (generated now and shown only this once; store it, or set ADMIN_TOKEN):\n${token}\n\n`);
}

/** Listens on the port; the running server stops in order: connections drained, app, database. */
async function listen(app: App, database: Database, options: ServerOptions, logger: Logger): Promise<RunningServer> {
  const server: Server = await new Promise((resolve) => {
    const s = app.koa.listen(options.port ?? 8080, options.host ?? '0.0.0.0', () => resolve(s));
    s.requestTimeout = 60_000; // a whole request (including a 10 MiB upload) within a minute
    s.headersTimeout = 15_000;
  });
  renderClientErrors(server);
  app.subscriptions.attach(server);
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  const vectorStore = app.vectorIndex.pgvector ? 'pgvector' : 'portable';
  logger.info(
    { port, database: database.embedded ? 'embedded' : 'postgresql', vectors: vectorStore, embedder: app.embedder.model },
    `listening on ${url}`,
  );
  return {
    url,
    port,
    orm: database.orm,
    logger,
    openapi: app.rest.openapi,
    toolNames: app.toolNames,
    embedded: database.embedded,
    live: app.live,
    socketStats: () => app.subscriptions.stats,
    reads: app.reads,
    drainEmbeddings: (workspaceId) => app.background.worker.drain(undefined, workspaceId),
    dispatchWebhooks: () => app.background.dispatcher.passOnce(),
    flushNoteAccess: () => app.noteAccess.flush(),
    vectorStore,
    async close() {
      await app.subscriptions.close();
      // MCP's change streams end with their empty result while the hub still runs, before connections drain.
      await app.mcpStreams.endAll();
      await drain(server);
      await app.stop();
      await database.close();
    },
  };
}

/** Stops accepting, lets requests in flight finish (10 s at most), and drops idle keep-alive connections. */
async function drain(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 10_000).unref())]);
  server.closeAllConnections();
}
