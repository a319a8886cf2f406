import pg from 'pg';
import { MikroORM } from '@mikro-orm/postgresql';
import { ormConfig, type DbConnection } from '../../mikro-orm.config.js';
import { tameOrmContexts } from './contexts.js';
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
 * Opens the ORM on a connection, with a node-postgres pool beside it for single statements (see
 * `sql`): `poolMax` connections for those, half as many for the ORM's transactions. The ORM's
 * `close` ends both.
 */
export async function openOrm(connection: DbConnection, poolMax = 10): Promise<MikroORM> {
  const orm = await MikroORM.init(ormConfig(connection, Math.max(2, Math.ceil(poolMax / 2))));
  // The same type parsers as the ORM's connections (timestamps as strings), so rows look alike.
  const { types } = orm.em.getConnection().getConnectionOptions() as { types?: pg.CustomTypesConfig };
  const pool = new pg.Pool({ ...pgClientConfig(connection), types, max: poolMax });
  // Writes that may be lost in a crash (the search log, rate-limit counts) commit without waiting for the WAL flush.
  const relaxed = connection.clientUrl
    ? new pg.Pool({ ...pgClientConfig(connection), types, max: 4, options: '-c synchronous_commit=off' })
    : undefined;
  for (const p of [pool, relaxed]) p?.on('error', () => undefined); // an idle client dropped by the server is replaced on next use
  attachPool(orm.em, { pool, relaxed }, !connection.clientUrl); // no URL: the embedded PGlite socket
  await tameOrmContexts(orm);
  const close = orm.close.bind(orm);
  orm.close = async (force?: boolean) => {
    await close(force);
    await pool.end();
    await relaxed?.end();
  };
  return orm;
}

/**
 * Applies pending migrations. On a shared server, a session advisory lock held on a separate
 * client lets only one process migrate at a time; the others then find nothing pending.
 */
export async function migrate(orm: MikroORM, connection: DbConnection, shared: boolean): Promise<string[]> {
  const migrator = orm.getMigrator();
  if (!shared) return (await migrator.up()).map((m) => m.name);
  const client = new pg.Client(pgClientConfig(connection));
  await client.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    return (await migrator.up()).map((m) => m.name);
  } finally {
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await client.end();
  }
}

/** The same connection expressed for node-postgres. */
export function pgClientConfig(connection: DbConnection): pg.ClientConfig {
  if (connection.clientUrl) return { connectionString: connection.clientUrl };
  return {
    host: connection.host,
    port: connection.port,
    database: connection.dbName,
    user: connection.user,
    password: connection.password as string | undefined,
  };
}
