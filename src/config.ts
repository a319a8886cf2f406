/**
 * The service's configuration: every environment variable it reads, with its default and its
 * check, in one table. `loadConfig` reads them all at start and names every bad value at once (the
 * start then stops); the few read again while the service runs (the archive bounds:
 * tests and operators change them between imports) go through `readSetting`, the same parse.
 * docs/configuration.md lists exactly this table (test/unit/configuration.test.ts holds them together),
 * and the defaults other modules start from (`DEFAULT_SOCKET_LIMITS`, …) are these.
 */
import { parseTrustProxy, type TrustProxy } from './http/clientAddress.js';
import { checkDatabaseUrl, withoutPassword } from './db/databaseUrl.js';

/** One setting: how docs/configuration.md shows its default, and the parse of its raw value (throws a message without the name). */
interface Setting<T> {
  doc: string;
  parse(raw: string | undefined): T;
}

const setting = <T>(doc: string, parse: (raw: string | undefined) => T): Setting<T> => ({ doc, parse });
const unset = (raw: string | undefined): raw is undefined | '' => raw === undefined || raw === '';

/** An integer from `min` (1 unless said) to `max`, or the default. */
function int(fallback: number, { min = 1, max = Number.MAX_SAFE_INTEGER, doc }: { min?: number; max?: number; doc?: string } = {}) {
  return setting(doc ?? `\`${fallback}\``, (raw) => {
    if (unset(raw)) return fallback;
    const value = Number(raw);
    if (!Number.isSafeInteger(value) || value < min || value > max)
      throw new Error(
        max === Number.MAX_SAFE_INTEGER
          ? `must be ${min === 0 ? 'a whole number (0 or more)' : 'a positive integer'}`
          : `must be an integer from ${min} to ${max}`,
      );
    return value;
  });
}
/** Any text, or undefined when unset. */
const text = (doc = 'unset') => setting(doc, (raw) => (unset(raw) ? undefined : raw));
/** A PostgreSQL URL (libpq's multi-host form too), checked at start; undefined when unset. */
const databaseUrl = (use: 'write' | 'read', doc = 'unset') => setting(doc, (raw) => (unset(raw) ? undefined : checkDatabaseUrl(raw, use)));
/** On unless `off`. */
const onUnlessOff = setting('on', (raw) => raw !== 'off');
/** One of a list. */
function oneOf<T extends string>(values: readonly T[], doc = 'unset') {
  return setting(doc, (raw) => {
    if (unset(raw)) return undefined;
    if (!values.includes(raw as T)) throw new Error(`must be one of ${values.join(', ')}`);
    return raw as T;
  });
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const GRAPHQL_EXPLORERS = ['sandbox', 'graphiql', 'off'] as const;
const GIB = 1024 ** 3;

/** Every environment variable the service reads, in the order of docs/configuration.md. */
export const SETTINGS = {
  PORT: int(8080, { min: 0 }),
  DATABASE_URL: databaseUrl('write'),
  DATABASE_POOL_MAX: int(20),
  DATABASE_DIRECT_URL: databaseUrl('write', '`DATABASE_URL`'),
  DATABASE_READ_URL: databaseUrl('read'),
  REPLICA_MAX_LAG_S: int(30),
  METRICS_TOKEN: text(),
  EVENT_RETENTION_DAYS: int(365, { min: 0 }),
  SEARCH_LOG_RETENTION_DAYS: int(90, { min: 0 }),
  DATA_DIR: setting('`./data`', (raw) => (unset(raw) ? './data' : raw)),
  ADMIN_TOKEN: text('generated'),
  KEY_HASH_SECRET: text('generated'),
  RATE_LIMIT_MAX: int(600),
  RATE_LIMIT_WINDOW_S: int(60),
  WS_MAX_CONNECTIONS: int(1000),
  // Twice the subscriptions a key may hold (10): a client with a socket per subscription meets that cap first.
  WS_SOCKETS_PER_KEY: int(20),
  WS_SOCKETS_PER_ORG: int(200),
  WS_UNAUTHENTICATED_PER_ADDRESS: int(10),
  WS_NEW_PER_ADDRESS_PER_S: int(20),
  WS_INIT_TIMEOUT_MS: int(3000),
  WS_RECHECK_MS: int(5000),
  WEBHOOK_DISPATCHER: onUnlessOff,
  MEMORY_HISTORY_KEPT: int(50, { min: 0 }),
  FETCH_MAX_CHARS: int(100_000, { min: 1_000 }),
  MEMORY_NEAR_DUPLICATES: onUnlessOff,
  MEMORY_EMBEDDINGS: onUnlessOff,
  EMBEDDINGS: oneOf(['local', 'off', 'glove'] as const, 'local model'),
  EMBEDDINGS_URL: text('local model'),
  EMBEDDINGS_MODEL: text('local model'),
  EMBEDDINGS_API_KEY: text('local model'),
  SEARCH_INDEX_MB: int(512, { min: 16, max: 1_000_000 }),
  OUTBOUND_ALLOW_LOOPBACK: setting('`false`', (raw) => raw === 'true'),
  OAUTH_ACCESS_TOKEN_TTL_S: int(600),
  OAUTH_REFRESH_TOKEN_TTL_S: int(30 * 24 * 3600, { doc: '`2592000` (30 days)' }),
  OAUTH_REGISTRATIONS_PER_HOUR: int(20),
  OAUTH_METADATA_FETCHES_PER_ADDRESS: int(10),
  OAUTH_METADATA_FETCHES_PER_MINUTE: int(60),
  CORS_ORIGINS: setting('none', (raw) =>
    (raw ?? '')
      .split(',')
      .map((origin) => origin.trim())
      .filter(Boolean),
  ),
  GRAPHQL_EXPLORER: oneOf(GRAPHQL_EXPLORERS, '`graphiql`'),
  NODE_ENV: text(),
  LOG_LEVEL: setting('`info`', (raw) => oneOf(LOG_LEVELS).parse(raw) ?? 'info'),
  PUBLIC_URL: setting("unset: the request's own origin", (raw) => {
    if (unset(raw)) return undefined;
    if (!/^https?:\/\/[^/]+\/?$/.test(raw)) throw new Error('must be an origin such as https://docs.example.com');
    return raw.replace(/\/$/, '');
  }),
  TRUST_PROXY: setting('off', (raw): TrustProxy => parseTrustProxy(raw)),
  SESSION_IDLE_MINUTES: int(60),
  SESSION_MAX_HOURS: int(12),
  OIDC_ISSUER: text(),
  OIDC_CLIENT_ID: text(),
  OIDC_CLIENT_SECRET: text(),
  OIDC_NAME: setting('`your identity provider`', (raw) => (unset(raw) ? 'your identity provider' : raw)),
  ARCHIVE_MAX_BYTES: int(2 * GIB, { doc: '`2147483648` (2 GiB)' }),
  ARCHIVE_MAX_EXPANDED_BYTES: int(4 * GIB, { doc: '`4294967296` (4 GiB)' }),
  ARCHIVE_MAX_RECORDS: int(1_000_000),
} satisfies Record<string, Setting<unknown>>;

export type SettingName = keyof typeof SETTINGS;
/** The whole configuration, typed: each setting's parsed value. */
export type Config = { [K in SettingName]: ReturnType<(typeof SETTINGS)[K]['parse']> };

/** A bad value of a setting, named with it. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
  }
}

/** One setting's value in `env`; a bad one throws a ConfigError naming it. */
export function readSetting<K extends SettingName>(name: K, env: NodeJS.ProcessEnv = process.env): Config[K] {
  try {
    return SETTINGS[name].parse(env[name]) as Config[K];
  } catch (error) {
    // A URL's password stays out of the message (it is printed at start).
    throw new ConfigError([`${name} ${(error as Error).message}, got "${withoutPassword(String(env[name])).slice(0, 200)}"`]);
  }
}

/** A setting's default (what it is when unset). */
export const defaultOf = <K extends SettingName>(name: K): Config[K] => SETTINGS[name].parse(undefined) as Config[K];

/** The embedder's settings of `env` alone (a server started without the whole configuration: tests, scripts). */
export function embedderSettings(env: NodeJS.ProcessEnv = process.env) {
  return {
    EMBEDDINGS: readSetting('EMBEDDINGS', env),
    EMBEDDINGS_URL: readSetting('EMBEDDINGS_URL', env),
    EMBEDDINGS_MODEL: readSetting('EMBEDDINGS_MODEL', env),
    EMBEDDINGS_API_KEY: readSetting('EMBEDDINGS_API_KEY', env),
  };
}

/** Every setting of `env`, checked together: a ConfigError lists every bad value and every broken pair. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const config = {} as Record<string, unknown>;
  for (const name of Object.keys(SETTINGS) as SettingName[]) {
    try {
      config[name] = readSetting(name, env);
    } catch (error) {
      problems.push(...(error as ConfigError).problems);
    }
  }
  const issuer = config.OIDC_ISSUER as string | undefined;
  const clientId = config.OIDC_CLIENT_ID as string | undefined;
  if ((issuer || clientId) && (!issuer || !clientId || !/^https?:\/\//.test(issuer)))
    problems.push('OIDC_ISSUER (an http(s) URL) and OIDC_CLIENT_ID are needed together');
  if (problems.length) throw new ConfigError(problems);
  return config as Config;
}
