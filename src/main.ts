import { GRAPHQL_EXPLORERS } from './app/explorer.js';
import { DEFAULT_SOCKET_LIMITS } from './app/socketGuard.js';
import { createLogger } from './app/logger.js';
import { DEFAULT_OAUTH_SETTINGS } from './identity/oauthSettings.js';
import { publicUrlWarning } from './identity/resources.js';
import { parseTrustProxy, type TrustProxy } from './http/clientAddress.js';
import { startServer } from './server.js';
import { DEFAULT_RETENTION } from './app/background.js';

/** Settings where 0 is a valid value (PORT: any free port; retention days: keep for ever). */
const ZERO_ALLOWED = new Set(['PORT', 'EVENT_RETENTION_DAYS', 'SEARCH_LOG_RETENTION_DAYS']);

/** A positive integer from the environment, or the default; anything else stops the start. */
function intEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < (ZERO_ALLOWED.has(name) ? 0 : 1)) {
    console.error(`${name} must be a positive integer, got "${raw}"`);
    process.exit(2);
  }
  return value;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const logLevel = process.env.LOG_LEVEL || 'info';
if (!LOG_LEVELS.includes(logLevel as (typeof LOG_LEVELS)[number])) {
  console.error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  process.exit(2);
}

const explorer = process.env.GRAPHQL_EXPLORER || undefined;
if (explorer !== undefined && !GRAPHQL_EXPLORERS.includes(explorer as (typeof GRAPHQL_EXPLORERS)[number])) {
  console.error(`GRAPHQL_EXPLORER must be one of ${GRAPHQL_EXPLORERS.join(', ')}, got "${explorer}"`);
  process.exit(2);
}

/** OIDC_ISSUER + OIDC_CLIENT_ID (+ OIDC_CLIENT_SECRET, OIDC_NAME): the deployment's identity provider, if any. */
function oidcEnv() {
  const issuer = process.env.OIDC_ISSUER || undefined;
  const clientId = process.env.OIDC_CLIENT_ID || undefined;
  if (!issuer && !clientId) return undefined;
  if (!issuer || !clientId || !/^https?:\/\//.test(issuer)) {
    console.error('OIDC_ISSUER (an http(s) URL) and OIDC_CLIENT_ID are needed together');
    process.exit(2);
  }
  return {
    issuer,
    clientId,
    clientSecret: process.env.OIDC_CLIENT_SECRET || undefined,
    name: process.env.OIDC_NAME || 'your identity provider',
  };
}

/** TRUST_PROXY: off, a hop count, or the proxies' addresses; anything else stops the start. */
function trustProxyEnv(): TrustProxy {
  try {
    return parseTrustProxy(process.env.TRUST_PROXY);
  } catch (error) {
    console.error(`TRUST_PROXY ${(error as Error).message}`);
    process.exit(2);
  }
}

const publicUrl = process.env.PUBLIC_URL || undefined;
if (publicUrl !== undefined && !/^https?:\/\/[^/]+\/?$/.test(publicUrl)) {
  console.error(`PUBLIC_URL must be an origin such as https://docs.example.com, got "${publicUrl}"`);
  process.exit(2);
}

let stopping = false;
/** Stops the service in order (requests in flight answered, then the database) and exits with `code`. */
function shutdown(code: number): void {
  if (stopping) return;
  stopping = true;
  server.close().then(
    () => process.exit(code),
    (error) => {
      server.logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    },
  );
}

/** Entry point of `npm start`: configuration from the environment (see docs/configuration.md). */
const server = await startServer({
  logger: createLogger({ level: logLevel as (typeof LOG_LEVELS)[number] }),
  port: intEnv('PORT', 8080),
  databaseUrl: process.env.DATABASE_URL || undefined,
  databaseDirectUrl: process.env.DATABASE_DIRECT_URL || undefined,
  databaseReadUrl: process.env.DATABASE_READ_URL || undefined,
  metricsToken: process.env.METRICS_TOKEN || undefined,
  replicaMaxLagSeconds: intEnv('REPLICA_MAX_LAG_S', 30),
  poolMax: intEnv('DATABASE_POOL_MAX', 20),
  dataDir: process.env.DATA_DIR || './data',
  adminToken: process.env.ADMIN_TOKEN || undefined,
  keyHashSecret: process.env.KEY_HASH_SECRET || undefined,
  outboundAllowLoopback: process.env.OUTBOUND_ALLOW_LOOPBACK === 'true',
  webhookDispatcher: process.env.WEBHOOK_DISPATCHER !== 'off',
  memoryHistoryKept: process.env.MEMORY_HISTORY_KEPT === '0' ? 0 : intEnv('MEMORY_HISTORY_KEPT', 50),
  memoryNearDuplicates: process.env.MEMORY_NEAR_DUPLICATES !== 'off',
  memoryEmbeddings: process.env.MEMORY_EMBEDDINGS !== 'off',
  explorer: explorer as (typeof GRAPHQL_EXPLORERS)[number] | undefined,
  corsOrigins: (process.env.CORS_ORIGINS ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean),
  retention: {
    eventsDays: intEnv('EVENT_RETENTION_DAYS', DEFAULT_RETENTION.eventsDays),
    searchLogDays: intEnv('SEARCH_LOG_RETENTION_DAYS', DEFAULT_RETENTION.searchLogDays),
  },
  rateLimit: { max: intEnv('RATE_LIMIT_MAX', 600), windowSeconds: intEnv('RATE_LIMIT_WINDOW_S', 60) },
  sessions: {
    idleSeconds: intEnv('SESSION_IDLE_MINUTES', 60) * 60,
    absoluteSeconds: intEnv('SESSION_MAX_HOURS', 12) * 3600,
    publicUrl: publicUrl?.replace(/\/$/, ''),
  },
  oidc: oidcEnv(),
  trustProxy: trustProxyEnv(),
  sockets: {
    maxConnections: intEnv('WS_MAX_CONNECTIONS', DEFAULT_SOCKET_LIMITS.maxConnections),
    perKey: intEnv('WS_SOCKETS_PER_KEY', DEFAULT_SOCKET_LIMITS.perKey),
    perOrganization: intEnv('WS_SOCKETS_PER_ORG', DEFAULT_SOCKET_LIMITS.perOrganization),
    unauthenticatedPerAddress: intEnv('WS_UNAUTHENTICATED_PER_ADDRESS', DEFAULT_SOCKET_LIMITS.unauthenticatedPerAddress),
    newPerAddressPerSecond: intEnv('WS_NEW_PER_ADDRESS_PER_S', DEFAULT_SOCKET_LIMITS.newPerAddressPerSecond),
    initTimeoutMs: intEnv('WS_INIT_TIMEOUT_MS', DEFAULT_SOCKET_LIMITS.initTimeoutMs),
    recheckMs: intEnv('WS_RECHECK_MS', DEFAULT_SOCKET_LIMITS.recheckMs),
  },
  oauth: {
    accessTokenTtlS: intEnv('OAUTH_ACCESS_TOKEN_TTL_S', DEFAULT_OAUTH_SETTINGS.accessTokenTtlS),
    refreshTokenTtlS: intEnv('OAUTH_REFRESH_TOKEN_TTL_S', DEFAULT_OAUTH_SETTINGS.refreshTokenTtlS),
    registrationsPerHour: intEnv('OAUTH_REGISTRATIONS_PER_HOUR', DEFAULT_OAUTH_SETTINGS.registrationsPerHour),
    metadataFetches: {
      perAddress: intEnv('OAUTH_METADATA_FETCHES_PER_ADDRESS', DEFAULT_OAUTH_SETTINGS.metadataFetches.perAddress),
      perService: intEnv('OAUTH_METADATA_FETCHES_PER_MINUTE', DEFAULT_OAUTH_SETTINGS.metadataFetches.perService),
      windowSeconds: DEFAULT_OAUTH_SETTINGS.metadataFetches.windowSeconds,
    },
    publicUrl: publicUrl?.replace(/\/$/, ''),
  },
  // The embedded database's thread died and cannot be started again: exit non-zero so a supervisor restarts the service.
  onDatabaseFailure: () => shutdown(1),
});

// npm start listens on every interface (the server's default host), where anyone can send any Host header.
const unsetPublicUrl = publicUrlWarning(publicUrl, '0.0.0.0');
if (unsetPublicUrl) server.logger.warn(unsetPublicUrl);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (!stopping) server.logger.info({ signal }, 'shutting down');
    shutdown(0);
  });
}
