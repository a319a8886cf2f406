import pg from 'pg';
import { MikroORM, type EventSubscriber } from '@mikro-orm/postgresql';
import { ormConfig, type DbConnection } from './config.js';
import { tameOrmContexts } from './contexts.js';
import { FailoverWatch, type ProbeResult } from './failover.js';
import { hostChoiceOf, newPgClient, pgClientClass, pgConfigOf, type HostChoice } from './hostPicking.js';
import { knexPool, PoolWaits, watchPgPool, watchTarnPool } from './poolWaits.js';
import { attachPool } from './sql.js';

const MIGRATION_LOCK = 0x5753_4b31; // arbitrary, fixed: serialises migrations across processes

/**
 * A fresh EntityManager of this ORM. Never resolved from the async context: MikroORM would
 * otherwise fork whatever transaction the caller happens to run in (a timer set inside a request's
 * transaction, or another server's ORM in the same process).
 */
export function freshEm(orm: MikroORM) {
  return orm.em.fork({ disableContextResolution: true });
}

/**
 * How long the statement pools keep an idle connection: 10 minutes, not node-postgres's 10 s. A
 * new connection is a new PostgreSQL backend whose caches start empty: at 100,000 articles its
 * first dozen searches took 30–60 ms each instead of 15–20, and with a 10 s timeout a connection
 * used only when a search sends its statements side by side was closed and opened again every few
 * seconds (the bench's full-text p95 paid for it). Idle connections do not keep the process alive.
 */
const KEEP_IDLE = { idleTimeoutMillis: 600_000, allowExitOnIdle: true };

/**
 * Opens the ORM on a connection, with a node-postgres pool beside it for single statements (see
 * `sql`): `poolMax` connections for those, half as many for the ORM's transactions. The ORM's
 * `close` ends both. `direct` is where session state may live (LISTEN, session advisory locks,
 * migrations): DATABASE_DIRECT_URL, the same connection unless the service reaches PostgreSQL
 * through a transaction pooler. `subscribers`: the ORM's event subscribers (the service passes the
 * writer of the events a transaction recorded).
 */
export async function openOrm(
  connection: DbConnection,
  poolMax = 10,
  direct: DbConnection = connection,
  subscribers: EventSubscriber[] = [],
): Promise<MikroORM> {
  const pooled = await behindPooler(connection);
  const orm = await initOrm(connection, Math.max(2, Math.ceil(poolMax / 2)), subscribers);
  // The same type parsers as the ORM's connections (timestamps as strings), so rows look alike.
  const { types } = orm.em.getConnection().getConnectionOptions() as { types?: pg.CustomTypesConfig };
  const config = pgClientConfig(connection);
  const shared = { ...config, types, ...KEEP_IDLE, Client: pgClientClass(config) };
  const pool = new pg.Pool({ ...shared, max: poolMax });
  // Writes that may be lost in a crash (the search log, rate-limit counts) commit without waiting for the WAL flush.
  // A transaction pooler carries no per-connection setting: there `sqlRelaxed` sets it per transaction (SET LOCAL).
  const relaxed = connection.clientUrl
    ? new pg.Pool({ ...shared, max: 4, ...(pooled ? {} : { options: '-c synchronous_commit=off' }) })
    : undefined;
  const directPooled = direct.clientUrl === connection.clientUrl ? pooled : await behindPooler(direct);
  const sessions = directPooled ? null : pgClientConfig(direct);
  // Every connection a pool hands out is timed for /metrics (wks_db_pool_wait_seconds).
  const waits = new PoolWaits();
  watchPgPool(pool, 'statements', waits);
  if (relaxed) watchPgPool(relaxed, 'relaxed', waits);
  const transactions = knexPool(orm);
  if (transactions) watchTarnPool(transactions, 'transactions', waits);
  // On a PostgreSQL server, the primary is followed when it changes (the embedded database has no other).
  const failover = connection.clientUrl ? watchPrimary(orm, config, [pool, relaxed]) : null;
  // An idle client dropped by the server is replaced on next use; why it was dropped may be a lost primary.
  for (const p of [pool, relaxed]) p?.on('error', (error) => failover?.report(error));
  await failover?.start();
  attachPool(orm.em, { pool, relaxed, direct: sessions, pooled, waits, failover }, !connection.clientUrl); // no URL: the embedded PGlite socket
  await tameOrmContexts(orm);
  const close = orm.close.bind(orm);
  orm.close = async (force?: boolean) => {
    failover?.close();
    await close(force);
    await pool.end();
    await relaxed?.end();
  };
  return orm;
}

/**
 * MikroORM on a connection. A multi-host URL (which MikroORM cannot parse) is given as its first
 * host, and knex's driver makes host-picking clients for it (see hostPicking.ts): set before the
 * ORM's first connection, which MikroORM otherwise opens in `init`.
 */
async function initOrm(connection: DbConnection, poolMax: number, subscribers: EventSubscriber[] = []): Promise<MikroORM> {
  const choice = connection.clientUrl ? hostChoiceOf(pgConfigOf(connection.clientUrl)) : null;
  if (!choice) return MikroORM.init(ormConfig(connection, poolMax, subscribers));
  const orm = await MikroORM.init({
    ...ormConfig({ ...connection, clientUrl: choice.url.urlFor(0) }, poolMax, subscribers),
    connect: false,
  });
  pickHostsInKnex(orm, choice);
  await orm.connect();
  return orm;
}

/** Makes every knex instance this ORM creates (at connect, and again at a reconnect) use the choice's host-picking Client. */
function pickHostsInKnex(orm: MikroORM, choice: HostChoice): void {
  const connection = orm.em.getConnection() as unknown as { createKnex(): void; client: { client: { driver: typeof pg } } };
  const create = connection.createKnex.bind(connection);
  connection.createKnex = () => {
    create();
    const knexClient = connection.client.client;
    knexClient.driver = Object.assign(Object.create(knexClient.driver) as typeof pg, { Client: choice.clientClass() });
  };
}

/**
 * The watch over this ORM's primary (see failover.ts): fed by the errors of every pool (the
 * statements' through `sql`, knex's through its query errors and failed connections), it empties
 * them all when the primary is lost.
 */
function watchPrimary(orm: MikroORM, config: pg.ClientConfig, pools: (pg.Pool | undefined)[]): FailoverWatch {
  const tarn = knexPool(orm);
  const watch = new FailoverWatch(
    () => probePrimary(config),
    () => ({ pg: pools.filter((p): p is pg.Pool => p !== undefined), tarn }),
  );
  const knex = orm.em.getConnection().getKnex() as unknown as { on(event: 'query-error', listener: (error: unknown) => void): void };
  knex.on('query-error', (error) => watch.report(error));
  (tarn as unknown as { on(event: 'createFail', listener: (id: number, error: unknown) => void): void } | null)?.on(
    'createFail',
    (_id, error) => watch.report(error),
  );
  return watch;
}

/** Which server a new connection reaches, whether it takes writes, and its timeline (a promotion starts a new one). */
const PROBE = `select pg_is_in_recovery() as standby, current_setting('transaction_read_only') as read_only,
  coalesce(host(inet_server_addr()), 'socket') || ':' || coalesce(inet_server_port()::text, '')
    || case when pg_is_in_recovery() then '' else '/' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8) end as server`;

/** One new connection, as the pools would open it, asked whether its server takes writes (2 s at most per step). */
async function probePrimary(config: pg.ClientConfig): Promise<ProbeResult> {
  const client = newPgClient({ ...config, connectionTimeoutMillis: 2000, query_timeout: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ standby: boolean; read_only: string; server: string }>(PROBE);
    const [row] = rows;
    if (row.standby) return { writable: false, reason: `${row.server} is a standby` };
    if (row.read_only === 'on') return { writable: false, reason: `${row.server} is read-only` };
    return { writable: true, server: row.server };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Whether `connection` reaches PostgreSQL through a pooler (PgBouncer) rather than directly: a
 * pooler refuses the `options` startup parameter (or, told to ignore it, drops it), so a custom
 * setting passed in it does not arrive. Named prepared statements and per-connection settings are
 * then off (a transaction pooler hands each transaction whichever server connection is free).
 */
export async function behindPooler(connection: DbConnection): Promise<boolean> {
  if (!connection.clientUrl) return false;
  const client = newPgClient({ ...pgClientConfig(connection), options: '-c wks.pooler_probe=direct' });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ probe: string | null }>("select current_setting('wks.pooler_probe', true) as probe");
    return rows[0]?.probe !== 'direct';
  } catch (error) {
    if (/startup parameter/i.test((error as Error).message)) return true;
    throw error;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Applies pending migrations. On a shared server, an advisory lock held by an open transaction on
 * a separate client lets only one process migrate at a time; the others then find nothing pending.
 * The lock is a transaction lock (`pg_advisory_xact_lock` inside BEGIN … COMMIT), not a session
 * one: a transaction pooler keeps one server connection for an open transaction, whereas a
 * session lock taken through it would stay with whichever server connection served it, and the
 * unlock might reach another. The lock and the migrations use the direct connection (`direct`,
 * DATABASE_DIRECT_URL; an ORM of their own when it differs), as DDL is no pooler's business.
 */
export async function migrate(
  orm: MikroORM,
  connection: DbConnection,
  shared: boolean,
  direct: DbConnection = connection,
): Promise<string[]> {
  if (!shared) return (await orm.getMigrator().up()).map((m) => m.name);
  const separate = direct.clientUrl !== connection.clientUrl ? await initOrm(direct, 2) : null;
  const migrator = (separate ?? orm).getMigrator();
  const client = newPgClient(pgClientConfig(direct));
  try {
    await client.connect();
    await client.query('begin');
    await client.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    return (await migrator.up()).map((m) => m.name);
  } finally {
    await separate?.close();
    await client.query('commit').catch(() => undefined);
    await client.end();
  }
}

/** The same connection expressed for node-postgres (a multi-host URL's needs its Client class: see pgClientClass, newPgClient). */
export function pgClientConfig(connection: DbConnection): pg.ClientConfig {
  if (connection.clientUrl) return pgConfigOf(connection.clientUrl);
  return {
    host: connection.host,
    port: connection.port,
    database: connection.dbName,
    user: connection.user,
    password: connection.password as string | undefined,
  };
}
