import { GRAPHQL_EXPLORERS } from './app/explorer.js';
import { DEFAULT_SOCKET_LIMITS } from './app/socketGuard.js';
import { createLogger } from './app/logger.js';
import { DEFAULT_OAUTH_SETTINGS } from './oauth/settings.js';
import { startServer } from './server.js';

/** A positive integer from the environment, or the default; anything else stops the start. */
function intEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < (name === 'PORT' ? 0 : 1)) {
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

/** PUBLIC_URL: an absolute http(s) origin (with an optional path prefix), else unset; anything else stops the start. */
function publicUrl(): string | undefined {
  const raw = process.env.PUBLIC_URL;
  if (!raw) return undefined;
  try {
    const url = new URL(raw);
    if ((url.protocol === 'http:' || url.protocol === 'https:') && !url.search && !url.hash) return url.href.replace(/\/$/, '');
  } catch {
    // reported below
  }
  console.error(`PUBLIC_URL must be an absolute http(s) URL, got "${raw}"`);
  process.exit(2);
}

/** Entry point of `npm start`: configuration from the environment (see docs/configuration.md). */
const server = await startServer({
  logger: createLogger({ level: logLevel as (typeof LOG_LEVELS)[number] }),
  port: intEnv('PORT', 8080),
  databaseUrl: process.env.DATABASE_URL || undefined,
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
  rateLimit: { max: intEnv('RATE_LIMIT_MAX', 600), windowSeconds: intEnv('RATE_LIMIT_WINDOW_S', 60) },
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
    publicUrl: publicUrl(),
  },
});

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    server.logger.info({ signal }, 'shutting down');
    server.close().then(
      () => process.exit(0),
      (error) => {
        server.logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}
